"""What a run is made of, below the classes that hold it: its statistics (:class:`SimulationStats`), its located
events (:class:`EventRecord`), the keys every ``.npz`` of it holds (:data:`NPZ_KEYS`), and :class:`Run`, the
protocol of one stored run that readers, plots and frame paths work on (:class:`robodyn.Trajectory` is one).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Final, Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = ["NPZ_KEYS", "EventRecord", "Run", "SimulationStats"]

Array = NDArray[np.float64]

NPZ_KEYS: Final = ("t", "x", "u", "y", "states", "inputs", "outputs", "model", "stats")  # what to_npz always writes


@dataclass(frozen=True, slots=True)
class SimulationStats:
    """How a simulation ran.

    Attributes
    ----------
    path : ``"exact"``, ``"compiled"``, ``"interpreted"`` or ``"stiff"``
    method : the integration method (``"dopri5"``, ``"rk4"``, ``"radau"``, ``"exact"``, ...)
    nfev : right-hand-side evaluations (summed over a batch)
    steps : accepted steps (summed over a batch)
    rejected : rejected steps (summed over a batch)
    compile_seconds : time spent generating, compiling or loading machine code in this call
    from_cache : the compiled kernel's machine code was loaded from the on-disk cache, nothing was compiled
        (``compile_seconds`` is then the load time)
    njev : Jacobian evaluations (the implicit methods ``radau`` and ``rosenbrock``; 0 otherwise)
    nlu : LU factorizations (the implicit methods; 0 otherwise)
    hint : advice about the method, or None: an explicit method whose step was limited by stability (a stiff
        problem) names the implicit method to use instead
    """

    path: str
    method: str
    nfev: int = 0
    steps: int = 0
    rejected: int = 0
    compile_seconds: float = 0.0
    from_cache: bool = False
    njev: int = 0
    nlu: int = 0
    hint: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        return result_html(self, "Simulation statistics", units={"compile_seconds": "s"})


@dataclass(frozen=True, slots=True)
class EventRecord:
    """A located event: its name, time, and the state there ``(n,)``."""

    name: str
    t: float
    x: Array
    terminal: bool = False

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        return result_html(self, f"Event {self.name!r}", units={"t": "s"})


class Run(Protocol):
    """One stored run: t (T,), x (T, n), u (T, m), y (T, p), their names, the model's name, how it ran, its
    events, the parameter values (or None: the source's defaults), the inputs an instant before each time (or
    None), and the model object it came from (or None)."""

    @property
    def t(self) -> Array: ...
    @property
    def x(self) -> Array: ...
    @property
    def u(self) -> Array: ...
    @property
    def y(self) -> Array: ...
    @property
    def states(self) -> tuple[str, ...]: ...
    @property
    def inputs(self) -> tuple[str, ...]: ...
    @property
    def outputs(self) -> tuple[str, ...]: ...
    @property
    def model(self) -> str: ...
    @property
    def stats(self) -> SimulationStats: ...
    @property
    def events(self) -> tuple[EventRecord, ...]: ...
    @property
    def params(self) -> Array | None: ...
    @property
    def left_inputs(self) -> Array | None: ...
    @property
    def source(self) -> Any: ...
    def __len__(self) -> int: ...
