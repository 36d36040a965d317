"""The guards every simulation path shares: the results must fit in memory, and every state must be finite.

:func:`check_memory` runs before any work (a batch of 10^6 trajectories x 1,001 output times would need tens of
GB); :func:`check_states` runs on every path's results (exact, kernels, stiff) before they become a
Trajectory, so that no non-finite state is ever returned or written: it is a NumericalError naming the time
and the state.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

import numpy as np

from robodyn.base.errors import InputError, NumericalError

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["check_memory", "check_states"]


def _available_memory() -> float:
    """Bytes this process may still allocate: the memory the system reports available, within RLIMIT_AS."""
    available = math.inf
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    available = float(line.split()[1]) * 1024
                    break
    except OSError:
        try:
            available = float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            available = min(available, float(soft))
    except (ImportError, OSError, ValueError):
        pass
    return available


def check_memory(model: ModelContract, N: int, points: int) -> None:
    """Refuse a run whose results (states, inputs, outputs at every output time) would not fit in memory."""
    per_point = 8 * (2 * model.n_states + model.n_inputs + len(model.outputs))
    needed = float(N) * float(points) * per_point
    if needed < 2**28:  # 256 MB: always fine, and no system query on the common path
        return
    available = _available_memory()
    if needed > 0.8 * available:
        what = f"{N} trajectories x {points} output times" if N > 1 else f"{points} output times"
        raise InputError(f"simulate: {what} need about {needed / 1e9:.3g} GB for the results, more than the "
                         f"{available / 1e9:.3g} GB available: run fewer trajectories at a time or ask for fewer "
                         "output times (t_eval, or a larger dt)")


def check_states(model: ModelContract, method: str, t: np.ndarray, x: np.ndarray, which: str = "") -> None:
    """Every path's last check: a state that is not finite is a NumericalError naming its time and state."""
    finite = np.isfinite(x).all(axis=1)
    if finite.all():
        return
    k = int(np.flatnonzero(~finite)[0])
    state = ", ".join(f"{name} = {value:.10g}" for name, value in zip(model.states, x[k].tolist()))
    before = "" if k == 0 else f" (last finite at t = {t[k - 1]:.10g})"
    raise NumericalError(f"{method}{which}: the state is not finite at t = {t[k]:.10g}: {state}{before}: the "
                         "solution overflows; check the parameters (a negative stiffness or damping grows without "
                         "bound) and the initial state, or shorten the time span")
