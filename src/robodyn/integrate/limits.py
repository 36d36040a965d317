"""Joint position limits in a simulation: a warning when a run leaves them, or events that stop it there.

A model's ``position_limits()`` (a URDF's ``<limit lower upper>``) are not forces: the equations of motion know
nothing of them, and a run can swing a joint past its stop. :func:`robodyn.simulate` therefore looks, after
the run, for the first time each limited coordinate left its range (``limits="warn"``, the default: a
:class:`~robodyn.base.errors.RobodynWarning` naming the joint, the time, the value and the limit), or stops the run at
the first crossing (``limits="events"``: terminal events ``<joint>_upper`` and ``<joint>_lower``, compiled like any
event written as text), or does neither (``"ignore"``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np

from robodyn.base.errors import InputError
from robodyn.integrate.events import Event

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["LIMITS", "LIMIT_TOLERANCE", "check_limits", "limit_crossings", "limit_events", "limits_left"]

LIMITS: Final = ("warn", "events", "ignore")
LIMIT_TOLERANCE: Final = 1e-9  # relative to max(1, |limit|): a run that ends exactly at its limit stays inside


def check_limits(value: object) -> str:
    """``value`` as one of :data:`LIMITS`, or InputError naming the choices."""
    if not isinstance(value, str) or value not in LIMITS:
        raise InputError(f"simulate: limits {value!r:.40}: use {', '.join(LIMITS)} (warn when a run leaves the joints' "
                         "position limits, stop there with terminal events, or neither)")
    return value


def limit_events(model: ModelContract) -> list[Event]:
    """Terminal events at the finite position limits of ``model``'s coordinates (none without limits)."""
    events = []
    for name, (lower, upper) in model.position_limits().items():
        for bound, direction, side in ((upper, 1, "upper"), (lower, -1, "lower")):
            if bound is not None:
                events.append(Event(f"{name} - ({float(bound)!r})", direction=direction, terminal=True,
                                    name=f"{name}_{side}"))
    return events


def limit_crossings(model: ModelContract, t: np.ndarray, x: np.ndarray) -> tuple[list[str], int]:
    """For the run(s) ``x`` ``(T, n)`` or ``(N, T, n)``: a phrase per limited coordinate that left its range
    (``shoulder went below its limit -3.14 at t = 1.05 (-3.22)``, the first time over the runs) and how many runs
    left a range."""
    runs = x if x.ndim == 3 else x[None]
    found: list[str] = []
    outside_runs = np.zeros(runs.shape[0], dtype=bool)
    for name, (lower, upper) in model.position_limits().items():
        column = runs[:, :, model.states.index(name)]
        for bound, sign, word in ((upper, 1.0, "above"), (lower, -1.0, "below")):
            if bound is None:
                continue
            outside = sign * (column - bound) > LIMIT_TOLERANCE * max(1.0, abs(bound))
            if not outside.any():
                continue
            outside_runs |= outside.any(axis=1)
            run, k = np.unravel_index(int(np.argmax(outside.ravel())), outside.shape)
            found.append(f"{name} went {word} its limit {bound:g} at t = {t[k]:.6g} ({column[run, k]:.6g})")
    return found, int(outside_runs.sum())


def limits_left(model: ModelContract, t: np.ndarray, x: np.ndarray) -> str | None:
    """The sentence of :func:`limit_crossings` (what a warning says), or None when every run stayed inside."""
    found, count = limit_crossings(model, t, x)
    if not found:
        return None
    which = f" in {count} of {x.shape[0]} runs" if x.ndim == 3 and x.shape[0] > 1 else ""
    return (f"model {model.name!r}: the run left the joints' position limits{which}: {'; '.join(found)} "
            "(the limits are not forces: simulate(..., limits='events') or --limits events stops at them)")
