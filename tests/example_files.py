"""The files of examples/, sorted into models and optimal control problems (``kind: optimal_control``, read by
robodyn.load_problem, solved by tests/control/test_control_examples.py): every test that loads "each example model"
takes them from here."""

from __future__ import annotations

from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def is_problem(path: Path) -> bool:
    """Whether ``path`` is an optimal control problem file rather than a model file."""
    return path.suffix == ".yaml" and "\nkind: optimal_control\n" in path.read_text(encoding="utf-8")


#: the example model files (YAML and URDF) and problem files, sorted by name
MODEL_FILES = sorted(p for p in [*EXAMPLES.glob("*.yaml"), *EXAMPLES.glob("*.urdf"), *EXAMPLES.glob("*.xml")]
                     if not is_problem(p))
PROBLEM_FILES = sorted(p for p in EXAMPLES.glob("*.yaml") if is_problem(p))
