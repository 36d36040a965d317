"""The report's figures at an operating point: responses (nonlinear and linear), the phase portrait, the arm.

At an unstable point the linear model's response grows without bound (5e5 rad after 5 s for the upright
pendulum) while the nonlinear one stays within a turn; drawn on the same axes it would flatten the nonlinear
curve to a line. Each axis is therefore kept to the nonlinear response's range (plus :data:`CLIP_MARGIN` of it)
when the linear one leaves it by more than :data:`CLIP_FACTOR`, and the caption says so.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import RobodynError
from robodyn.display.page import figure, number
from robodyn.integrate.limits import limit_crossings
from robodyn.results.trajectory import Trajectory

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["CLIP_FACTOR", "CLIP_MARGIN", "MAX_CURVES", "arm", "drawn_states", "phase", "responses"]

CLIP_FACTOR: Final = 3.0  # the linear curve may span this many times the nonlinear one before the axis is cut
CLIP_MARGIN: Final = 0.25  # of the nonlinear range, added on each side of a cut axis
RESPONSE_POINTS: Final = 201  # output times of each response
MAX_CURVES: Final = 8  # states drawn in a response (a model with more: its first coordinates and their velocities)
MOVING_RTOL: Final = 1e-9  # a column of A below this times its largest moves nothing (round-off of a zero column)


def responses(model: ModelContract, linear: Any, point: Any, horizon: float) -> list[str]:
    """Free (an initial offset) and step responses, nonlinear solid and linear dashed, on the same axes."""
    import html

    from robodyn.integrate.simulate import simulate
    from robodyn.signals import Step

    figures = []
    n = model.n_states
    moved = _moving(linear.A)
    offset = np.zeros(n)
    offset[moved] = 0.05 * max(1.0, abs(float(point.x[moved])))
    t_eval = np.linspace(0.0, horizon, RESPONSE_POINTS)
    cases: list[tuple[str, Any, float | None]] = [(f"free response from an offset of {model.states[moved]}",
                                                  point.x + offset, None)]
    acting = _moving(linear.B) if model.n_inputs else 0
    if model.n_inputs:
        size = 0.05 * max(1.0, float(np.max(np.abs(point.u))))
        cases.append((f"step of {number(size)} on {model.inputs[acting]}", point.x, size))
    for caption, x0, step in cases:
        try:
            inputs: dict[str, Any] = {name: float(v) for name, v in zip(model.inputs, point.u)}
            shifted: dict[str, Any] = {name: 0.0 for name in model.inputs}
            if step is not None:
                first = model.inputs[acting]
                inputs[first] = Step(at=0.0, before=inputs[first], after=inputs[first] + step)
                shifted[first] = Step(at=0.0, before=0.0, after=step)
            nonlinear = simulate(model, horizon, x0, inputs or None, t_eval=t_eval, rtol=1e-8,
                                         limits="ignore")  # said in the caption instead of a warning
            deviation = simulate(linear, horizon, x0 - point.x, shifted or None, t_eval=t_eval)
            assert isinstance(nonlinear, Trajectory) and isinstance(deviation, Trajectory)
            lifted = Trajectory(deviation.t, deviation.x + point.x, deviation.u + point.u, deviation.x + point.x,
                                model.states, model.inputs, model.states, f"{model.name} (linear)", deviation.stats,
                                source=model)
            names = drawn_states(model)
            picture, clipped = _overlaid(nonlinear, lifted, names)
            note = "; the linear response leaves the axes, which show the nonlinear one's range" if clipped else ""
            some = f"; {len(names)} of the {n} states" if len(names) < n else ""
            crossed = limit_crossings(model, nonlinear.t, nonlinear.x)[0]
            beyond = f"; the joint limits are not forces: {'; '.join(crossed)}" if crossed else ""
            figures.append(figure(picture, f"{caption}: nonlinear (solid), linear (dashed){some}{note}{beyond}"))
        except RobodynError as exc:
            figures.append(f'<p class="note">{html.escape(caption)}: {html.escape(str(exc))}</p>')
    return figures


def _moving(matrix: np.ndarray) -> int:
    """The first column of A (or B) that moves the system: not 0 to rounding (MOVING_RTOL of the matrix's size).
    An offset along a zero column of A is a neighbouring equilibrium (the base yaw of an arm gravity does not act
    along): its free response would not move at all."""
    norms = np.linalg.norm(matrix, axis=0)
    moving = np.flatnonzero(norms > MOVING_RTOL * max(float(np.max(norms, initial=0.0)), 1e-300))
    return int(moving[0]) if moving.size else 0


def drawn_states(model: ModelContract) -> list[str]:
    """The states a response shows: all of them up to MAX_CURVES, else the first coordinates and their velocities
    (second-order models) or the first states."""
    if model.n_states <= MAX_CURVES:
        return list(model.states)
    if model.order == 2:
        half, k = model.n_states // 2, MAX_CURVES // 2
        return [*model.states[:k], *model.states[half: half + k]]
    return list(model.states[:MAX_CURVES])


def _overlaid(nonlinear: Trajectory, lifted: Trajectory, names: list[str]) -> tuple[Any, bool]:
    """The two responses on one figure, each axis kept to the nonlinear range when the linear one runs away."""
    from robodyn.results import plots

    # both runs are the integrators' dense output at RESPONSE_POINTS even times: drawn as they are
    picture = plots.time_response(nonlinear, names, smooth=False)
    ranges = [ax.get_ylim() for ax in picture.axes]
    plots.time_response(lifted, names, into=picture, style="--", label_suffix=" (linear)", smooth=False)
    clipped = False
    for ax, (low, high) in zip(picture.axes, ranges):
        span = high - low
        now_low, now_high = ax.get_ylim()
        if span > 0 and math.isfinite(span) and (now_high - now_low) > CLIP_FACTOR * span:
            ax.set_ylim(low - CLIP_MARGIN * span, high + CLIP_MARGIN * span)
            clipped = True
    return picture, clipped


def phase(model: ModelContract, point: Any) -> Any:
    """The phase portrait of a two-state model around the point, with three runs from it."""
    from robodyn.integrate.simulate import simulate
    from robodyn.results import plots

    x, v = float(point.x[0]), float(point.x[1])
    runs = []
    for dx in (0.3, 1.0, 2.0):
        try:
            run = simulate(model, 6.0, [x + dx, v], {n: float(u) for n, u in zip(model.inputs, point.u)}
                                   or None, rtol=1e-8)
        except RobodynError:
            continue
        assert isinstance(run, Trajectory)
        runs.append(run)
    return plots.phase_portrait(model, x_range=(x - math.pi, x + math.pi), v_range=(v - 6.0, v + 6.0),
                                u=point.u, trajectories=runs)


def arm(model: ModelContract, point: Any, k: int) -> Any:
    """The mechanism at the point's configuration: every link, gravity down, 2-D when planar."""
    from robodyn.kinematics import kinematics
    from robodyn.kinematics.picture import draw_arm

    K = kinematics(model)
    return draw_arm(K, point.x[: len(K.coordinates)], title=f"{model.name} at point {k}")
