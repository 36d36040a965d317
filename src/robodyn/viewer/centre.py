"""The robot's centre of mass along the instants a page shows, from the model's own tape.

A rigid-body model offers its centre of mass among its exported functions (the model contract's
``exported_functions()``, ``com``: q, p -> (3,), robodyn.model.exported); it is compiled once per model (LLVM, kept
in the model's memo) and evaluated for every instant in one batch call, as the frames' poses are. A model without
it, or whose exported coordinates are not its kinematics' (a moving base's chart), shows no centre of mass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["centre_of_mass"]

_EMPTY: Final = np.zeros(0)  # the inputs and accelerations, which the centre of mass does not read
_MEMO: Final = "viewer centre of mass"


def _compiled(model: ModelContract, coordinates: tuple[str, ...]) -> Any:
    memo = model.memo()
    if _MEMO not in memo:
        exported = model.exported_functions()
        function = None
        if exported is not None and "com" in exported.functions and tuple(exported.coordinates) == coordinates:
            from robodyn.codegen.llvm.native import native_batch
            from robodyn.codegen.llvm.tape import llvm_ir, tape_data

            text, symbol = llvm_ir(*tape_data(exported.tape, list(exported.functions["com"])), optimize=True)
            function = native_batch(text, symbol)
        memo[_MEMO] = function
    return memo[_MEMO]


def centre_of_mass(model: ModelContract, coordinates: tuple[str, ...], q: np.ndarray) -> np.ndarray | None:
    """The centre of mass (K, 3) in the world frame at the configurations ``q`` (K, n) of ``coordinates``, at the
    model's default parameters; None when the model does not offer it."""
    function = _compiled(model, coordinates)
    if function is None:
        return None
    x = np.ascontiguousarray(np.hstack([q, np.zeros_like(q)]), dtype=float)
    out = np.empty((x.shape[0], 3))
    function(0.0, x, _EMPTY, np.ascontiguousarray(model.default_parameters()[1], dtype=float), _EMPTY, out)
    return out
