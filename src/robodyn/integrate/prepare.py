"""The integrator kernels made ready on a machine before anyone waits for them (``make demo`` runs this first).

The shared kernels are compiled by numba once per machine and robodyn version (10-40 s on two cores) and loaded
from the private cache by every later process in milliseconds. :func:`prepare_kernels` runs one short
simulation of the catalog's ``joint`` with a method of each compiled kernel variant — ``rk4`` (the fixed-step
kernels), ``dopri5`` and ``dop853`` (the explicit adaptive entries), ``radau`` (the implicit entry) — so that
whatever is missing is compiled now, with a line saying so on a terminal, and reports for each whether it was
loaded or compiled. ``python -m robodyn.integrate.prepare`` prints that report.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

__all__ = ["PREPARED_METHODS", "Prepared", "prepare_kernels"]

#: method -> the step of its short run (None: adaptive): one method per kernel variant.
PREPARED_METHODS: dict[str, float | None] = {"rk4": 0.01, "dopri5": None, "dop853": None, "radau": None}


@dataclass(frozen=True, slots=True)
class Prepared:
    """One kernel variant made ready.

    method : the method run; how : ``"compiled"`` (now, by numba), ``"loaded"`` (from the machine's cache) or
    ``"in memory"`` (this process had it already); seconds : the wall time of its short run
    """

    method: str
    how: str
    seconds: float

    def text(self) -> str:
        words = {"loaded": "loaded from the cache", "in memory": "already loaded"}.get(self.how, self.how)
        return f"{self.method:<7} {words} in {self.seconds:.2f} s"


def prepare_kernels() -> list[Prepared]:
    """Compile (or load) every kernel variant on this machine; what each did (:class:`Prepared`)."""
    from robodyn.base.progress import announce
    from robodyn.files.loading import load
    from robodyn.integrate.simulate import simulate

    model = load("joint")
    announce("preparing the integrator kernels for this machine (compiled once by numba, then loaded)")
    done = []
    for method, dt in PREPARED_METHODS.items():
        start = time.perf_counter()
        stats = simulate(model, 0.1, method=method, dt=dt).stats
        how = "loaded" if stats.from_cache else ("in memory" if stats.compile_seconds == 0.0 else "compiled")
        done.append(Prepared(method, how, time.perf_counter() - start))
    return done


if __name__ == "__main__":  # pragma: no cover - exercised by make demo and tests/integrate/test_prepare.py
    for prepared in prepare_kernels():
        print(f"robodyn kernels: {prepared.text()}")
