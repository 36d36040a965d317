"""What one integration produced, before outputs and names are attached (:class:`RunResult`): every path's runner
returns it, robodyn.integrate.assemble makes the Trajectory of it and robodyn.integrate.hint reads its steps."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robodyn.results.trajectory import EventRecord

__all__ = ["RunResult"]


@dataclass
class RunResult:
    """What one integration produced (before outputs and names are attached)."""

    t: np.ndarray  # (T,)
    x: np.ndarray  # (T, n)
    nfev: int = 0
    steps: int = 0
    rejected: int = 0
    events: list[EventRecord] = field(default_factory=list)
    u: np.ndarray | None = None  # (T, m) inputs as applied, when the path knows them (fixed steps)
    compile_seconds: float = 0.0
    from_cache: bool = False  # the compiled kernel was loaded from the on-disk cache (nothing compiled)
    njev: int = 0  # Jacobian evaluations (implicit methods)
    nlu: int = 0  # LU factorizations (implicit methods)
