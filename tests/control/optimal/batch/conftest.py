"""The problem classes of tests/control/optimal (quadratic_problem, collocation_cases) importable from here."""

import sys
from pathlib import Path

_SHARED = str(Path(__file__).resolve().parents[1])
if _SHARED not in sys.path:
    sys.path.insert(0, _SHARED)
