"""Joint position limits in a simulation: a warning when a run leaves them, or events that stop it there.

A model's ``position_limits()`` (a URDF's ``<limit lower upper>``) are not forces: the equations of motion know
nothing of them, and a run can swing a joint past its stop. :func:`robodyn.simulate` therefore looks, after
the run, for the first time each limited coordinate left its range (``limits="warn"``, the default: a
:class:`~robodyn.errors.RobodynWarning` naming the joint, the time, the value and the limit), or stops the run at
the first crossing (``limits="events"``: terminal events ``<joint>_upper`` and ``<joint>_lower``, compiled like any
event written as text), or does neither (``"ignore"``).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from robodyn.errors import InputError
from robodyn.integrate.events import Event
from robodyn.model.system import Model

__all__ = ["LIMITS", "LIMIT_TOLERANCE", "check_limits", "limit_events", "limits_left"]

LIMITS: Final = ("warn", "events", "ignore")
LIMIT_TOLERANCE: Final = 1e-9  # relative to max(1, |limit|): a run that ends exactly at its limit stays inside


def check_limits(value: object) -> str:
    """``value`` as one of :data:`LIMITS`, or InputError naming the choices."""
    if not isinstance(value, str) or value not in LIMITS:
        raise InputError(f"simulate: limits {value!r:.40}: use {', '.join(LIMITS)} (warn when a run leaves the joints' "
                         "position limits, stop there with terminal events, or neither)")
    return value


def limit_events(model: Model) -> list[Event]:
    """Terminal events at the finite position limits of ``model``'s coordinates (none without limits)."""
    events = []
    for name, (lower, upper) in model.position_limits().items():
        for bound, direction, side in ((upper, 1, "upper"), (lower, -1, "lower")):
            if bound is not None:
                events.append(Event(f"{name} - ({float(bound)!r})", direction=direction, terminal=True,
                                    name=f"{name}_{side}"))
    return events


def limits_left(model: Model, t: np.ndarray, x: np.ndarray) -> str | None:
    """A sentence naming each limited coordinate of the run(s) ``x`` ``(T, n)`` or ``(N, T, n)`` that left its
    range (the first time, the value, the limit), or None when every one stayed inside."""
    runs = x if x.ndim == 3 else x[None]
    found: list[str] = []
    outside_runs = np.zeros(runs.shape[0], dtype=bool)
    for name, (lower, upper) in model.position_limits().items():
        column = runs[:, :, model.states.index(name)]
        for bound, beyond, word in ((upper, lambda v, b: v > b, "above"), (lower, lambda v, b: v < b, "below")):
            if bound is None:
                continue
            margin = LIMIT_TOLERANCE * max(1.0, abs(bound))
            outside = beyond(column, bound + (margin if word == "above" else -margin))
            if not outside.any():
                continue
            outside_runs |= outside.any(axis=1)
            run, k = np.unravel_index(int(np.argmax(outside.ravel())), outside.shape)
            found.append(f"{name} went {word} its limit {bound:g} at t = {t[k]:.6g} ({column[run, k]:.6g})")
    if not found:
        return None
    which = f" in {int(outside_runs.sum())} of {runs.shape[0]} runs" if runs.shape[0] > 1 else ""
    return (f"model {model.name!r}: the run left the joints' position limits{which}: {'; '.join(found)} "
            "(the limits are not forces: simulate(..., limits='events') or --limits events stops at them)")

