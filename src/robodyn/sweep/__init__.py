"""Sweeps: thousands to millions of simulations over parameters and initial states, reduced to a table.

- :mod:`robodyn.sweep.run` — :func:`sweep` and the chunks it runs (in this process or on a Dask cluster);
- :mod:`robodyn.sweep.plan` — what a sweep is: its axes, reducers and signals, checked before any work;
- :mod:`robodyn.sweep.store` — the folder of Parquet parts and its manifest, verified when a sweep resumes;
- :mod:`robodyn.sweep.cluster` — the Dask cluster: the scheduler's greeting, the workers' versions.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from robodyn.sweep.run import (
    DEFAULT_CHUNK,
    MAX_SAMPLES,
    REDUCERS,
    Span,
    SweepPlan,
    iter_parts,
    load_sweep,
    parse_range,
    run_chunk,
    sweep,
    write_part,
)

__all__ = ["DEFAULT_CHUNK", "MAX_SAMPLES", "REDUCERS", "Span", "SweepPlan", "iter_parts", "load_sweep", "parse_range",
           "run_chunk", "sweep", "write_part"]


class _SweepPackage(types.ModuleType):
    """This package, callable as :func:`sweep`: importing ``robodyn.sweep`` binds the name ``sweep`` of
    ``robodyn`` to the package, so ``robodyn.sweep(...)`` must work whether it finds the function or the package."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _SweepPackage
