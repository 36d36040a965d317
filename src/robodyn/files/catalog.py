"""Built-in models, loaded by name with :func:`robodyn.load`.

Each is a YAML model file shipped with the package (``robodyn/files/builtin/``; the same files are in
``examples/``), except ``mbk``, whose size is an option: ``load("mbk", n=5)`` or ``load("mbk:n=5")``.

=====================  ===========  ==========================================================
name                   kind         model
=====================  ===========  ==========================================================
``joint``              mechanical   J q'' + b q' + k q = u, J = 0.01, b = 0.1, k = 1 (the seed)
``joint_direct_drive`` mechanical   the same joint with k = 0 (no restoring force)
``pendulum``           lagrangian   I theta'' + m g l sin(theta) = tau
``double_pendulum``    lagrangian   two links, point masses, torques tau1, tau2 at the joints
``two_link_arm``       chain        two-link arm, twin of examples/two_link_arm.urdf
``cart_pole``          lagrangian   cart on a rail with a pole, force F on the cart
``acrobot``            lagrangian   Spong's acrobot, torque tau at the elbow only (Tedrake's parameters)
``mbk``                mechanical   chain of n masses, springs and dampers, force on each mass
=====================  ===========  ==========================================================
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from robodyn.base.errors import InputError
from robodyn.files.loading import model_from_document, read_model_text

if TYPE_CHECKING:
    from robodyn.model.system import Model

__all__ = ["CATALOG", "FILE_MODELS", "catalog_text", "mbk", "mbk_data"]

_FILES = ("joint", "joint_direct_drive", "pendulum", "double_pendulum", "cart_pole", "two_link_arm", "acrobot")
#: The catalog models that are YAML files shipped with the package (:func:`catalog_text`).
FILE_MODELS: Final = frozenset(_FILES)
_CATALOG_FOLDER: Final = Path(__file__).resolve().parent / "builtin"  # robodyn/files/builtin


def catalog_text(name: str) -> str:
    """The YAML text of a file-backed catalog model (a file beside the package's modules: read as a path, not
    through importlib.resources, whose imports cost a command ~5 ms of start-up)."""
    return (_CATALOG_FOLDER / f"{name}.yaml").read_text(encoding="utf-8")


@functools.cache
def _from_file(name: str) -> Model:
    return read_model_text(catalog_text(name), f"catalog:{name}")


def _file_factory(name: str) -> Callable[..., Model]:
    def factory(**options: Any) -> Model:
        if options:
            raise InputError(f"catalog model {name!r} takes no options, got {sorted(options)}")
        return _from_file(name)

    factory.__name__ = name
    factory.__doc__ = f"The catalog model {name!r}."
    return factory


def mbk_data(n: int) -> dict[str, Any]:
    """The model-file data of an n-mass chain: wall -k,b- m1 -k,b- m2 ... -k,b- mn.

    Masses ``m``, springs ``k`` and dampers ``b`` are equal; a force ``F<i>`` acts on each mass.
    """
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 500:
        raise InputError(f"mbk: n must be a whole number of masses from 1 to 500, got {n!r}")

    def banded(symbol: str) -> list[list[Any]]:
        rows: list[list[Any]] = [[0] * n for _ in range(n)]
        for i in range(n):
            rows[i][i] = f"2*{symbol}" if i < n - 1 else symbol
            if i + 1 < n:
                rows[i][i + 1] = rows[i + 1][i] = f"-{symbol}"
        return rows

    return {
        "name": f"mbk{n}",
        "kind": "mechanical",
        "description": f"Chain of {n} masses m joined by springs k and dampers b, the first tied to a wall.",
        "coordinates": [f"x{i + 1}" for i in range(n)],
        "parameters": {"m": 1.0, "b": 0.2, "k": 1.0},
        "inputs": [f"F{i + 1}" for i in range(n)],
        "mass": [["m" if i == j else 0 for j in range(n)] for i in range(n)],
        "damping": banded("b"),
        "stiffness": banded("k"),
        "units": {**{f"x{i + 1}": "m" for i in range(n)}, **{f"x{i + 1}_dot": "m/s" for i in range(n)},
                  **{f"F{i + 1}": "N" for i in range(n)}, "m": "kg", "b": "N s/m", "k": "N/m"},
    }


def mbk(n: int = 3) -> Model:
    """Mass-spring-damper chain with ``n`` masses (see :func:`mbk_data`)."""
    from robodyn.files.yamlio import Document

    return model_from_document(Document(f"catalog:mbk(n={n})", mbk_data(n)))


#: Catalog name -> factory accepting the model's options.
CATALOG: dict[str, Callable[..., Model]] = {name: _file_factory(name) for name in _FILES}
CATALOG["mbk"] = mbk
