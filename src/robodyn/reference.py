"""The API reference, generated from the public names' signatures and docstrings: ``docs/reference.md``.

``python -m robodyn.reference > docs/reference.md`` writes it; a test checks that the file in the repository
is what this module writes, so the reference cannot fall behind the code.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

__all__ = ["reference_text"]

_GROUPS = (
    ("Models", ("load", "load_file", "read_model_text", "Model", "System", "SymbolicSystem", "LinearSystem",
                "MechanicalSystem", "ManipulatorSystem", "LagrangianSystem", "CATALOG", "ScalarDamping")),
    ("Simulation", ("simulate", "Trajectory", "BatchTrajectory", "SimulationStats", "Event", "StateFeedback")),
    ("Analysis", ("classify", "Classification", "find_equilibrium", "OperatingPoint", "linearize",
                  "linearize_trajectory", "LTVSystem", "modes", "Modes", "Mode", "modal_decomposition",
                  "ModalDecomposition", "forced_response", "validity", "Validity", "existence", "Existence",
                  "lipschitz", "LipschitzBound", "picard", "PicardIterates", "second_order", "SecondOrder",
                  "Response", "verify", "Verification")),
    ("Kinematics", ("Kinematics", "Pose", "inverse_kinematics", "IKResult", "FramePath", "animate")),
    ("Errors", ("RobodynError", "InputError", "ModelFileError", "ExpressionError", "UnknownNameError",
                "ShapeError", "NumericalError", "SingularMatrixError", "ConvergenceError", "RobodynWarning")),
)


def _summary(obj: Any) -> str:
    """The docstring's first paragraph, on one line."""
    text = inspect.getdoc(obj) or ""
    first = text.split("\n\n")[0]
    return " ".join(first.split())


def _signature(obj: Any) -> str:
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
    return re.sub(r" at 0x[0-9a-f]+", "", text)  # no memory addresses in default values


def _members(cls: type) -> list[tuple[str, Any]]:
    result = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, staticmethod | classmethod):
            member = member.__func__
        if callable(member) or isinstance(member, property):
            result.append((name, member))
    return sorted(result)


def reference_text() -> str:
    """The reference as Markdown (deterministic: the same text for the same code)."""
    import robodyn

    public = set(robodyn.__all__)
    listed = {name for _, names in _GROUPS for name in names}
    lines = ["# API reference", "",
             "Generated from the docstrings by `python -m robodyn.reference` (a test keeps it in sync). Every name",
             "below is importable from `robodyn`; the tutorial ([tutorial.md](tutorial.md)) shows them in use.", ""]
    groups = [*_GROUPS, ("Other", tuple(sorted(public - listed - {"__version__"})))]
    for title, names in groups:
        present = [n for n in names if n in public]
        if not present:
            continue
        lines += [f"## {title}", ""]
        for name in present:
            obj = getattr(robodyn, name)
            if inspect.isclass(obj):
                lines += [f"### `{name}`", "", f"class `{name}{_signature(obj)}`", "", _summary(obj), ""]
                for member_name, member in _members(obj):
                    head = f"`{member_name}` (property)" if isinstance(member, property) else \
                        f"`{member_name}{_signature(member)}`"
                    summary = _summary(member)
                    lines.append(f"- {head}: {summary}" if summary else f"- {head}")
                lines.append("")
            elif callable(obj):
                lines += [f"### `{name}{_signature(obj)}`", "", _summary(obj), ""]
            else:
                lines += [f"### `{name}`", "", f"A {type(obj).__name__} of {len(obj)} entries: "
                          f"{', '.join(map(str, obj))}." if hasattr(obj, "__len__") else _summary(obj), ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(reference_text(), end="")
