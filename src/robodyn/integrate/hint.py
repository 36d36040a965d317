"""The stiffness hint: an explicit method whose step size was limited by stability says so.

An explicit Runge–Kutta method on a stiff problem cannot take steps much larger than ``B / |lambda|``,
where ``lambda`` is the fastest eigenvalue of the Jacobian and ``B`` the size of the method's stability
region along the negative real axis (about 3.3 for DOPRI5, 6.1 for DOP853, [HW] IV.2). Its controller then
keeps proposing steps just beyond that limit: many steps are rejected, and ``h |lambda|`` sits near ``B``
however loose the tolerance is. :func:`stiffness_hint` checks exactly that after a run — a run with many
rejected steps whose mean step times the Jacobian's spectral radius at the end is of order one or more —
and returns a sentence naming the implicit methods, for ``SimulationStats.hint``.

[HW] E. Hairer, G. Wanner, "Solving Ordinary Differential Equations II", 2nd ed., Springer 1996, IV.2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

if TYPE_CHECKING:
    from robodyn.integrate.runs import RunResult
    from robodyn.model.protocol import ModelContract
    from robodyn.signals import Inputs

__all__ = ["stiffness_hint"]

STABILITY_BOUNDARY: Final = {"dopri5": 3.3, "dop853": 6.1}  # |h lambda| on the negative real axis
MIN_STEPS: Final = 200  # shorter runs cost too little to matter
MIN_REJECTED: Final = 0.1  # rejected / accepted steps: the controller keeps hitting the stability limit
MIN_H_LAMBDA: Final = 1.0  # mean step times the spectral radius: an accuracy-limited step has h |lambda| << 1


def stiffness_hint(model: ModelContract, method: str, run: RunResult, p: np.ndarray, inputs: Inputs) -> str | None:
    """A sentence when ``run`` of an explicit adaptive ``method`` was limited by stability, else None."""
    boundary = STABILITY_BOUNDARY.get(method)
    if boundary is None or run.steps < MIN_STEPS or run.rejected < MIN_REJECTED * run.steps or run.t.size < 2:
        return None
    span = float(run.t[-1] - run.t[0])
    if not span > 0.0:
        return None
    radius = _spectral_radius(model, float(run.t[-1]), run.x[-1], p, inputs)
    h = span / run.steps
    if not (radius is not None and h * radius >= MIN_H_LAMBDA):
        return None
    return (f"{method}'s step was limited by stability, not accuracy: {run.rejected} of "
            f"{run.steps + run.rejected} steps were rejected at a mean step of {h:.3g}, where the fastest mode "
            f"has |lambda| = {radius:.3g} (h |lambda| = {h * radius:.2g}, {method}'s limit is about {boundary}): "
            "the problem is stiff, use method='radau' (or 'rosenbrock' if it is only moderately stiff)")


def _spectral_radius(model: ModelContract, t: float, x: np.ndarray, p: np.ndarray, inputs: Inputs) -> float | None:
    """max |eigenvalue| of the closed loop's d f(t, x, u(t, x)) / dx at (t, x), or None when it cannot be computed
    (state feedback makes a loop stiff that the model alone is not)."""
    try:
        x = np.asarray(x, dtype=float)
        values = np.linalg.eigvals(_closed_loop_jacobian(model, t, x, p, inputs))
    except Exception:  # a hint must never turn a finished simulation into an error
        return None
    radius = float(np.max(np.abs(values))) if values.size else 0.0
    return radius if np.isfinite(radius) else None


def _closed_loop_jacobian(model: ModelContract, t: float, x: np.ndarray, p: np.ndarray, inputs: Inputs) -> Any:
    """df/dx + df/du du/dx: the model's Jacobians where it has them, forward differences otherwise (and for
    du/dx, the inputs' dependence on the state)."""
    def u_at(state: np.ndarray) -> np.ndarray:
        return np.asarray(inputs.evaluate(t, state), dtype=float)

    def differences(function: Any, base: np.ndarray) -> np.ndarray:
        columns = []
        for j in range(x.size):
            step = np.sqrt(np.finfo(float).eps) * max(1.0, abs(x[j]))
            shifted = x.copy()
            shifted[j] += step
            columns.append((np.asarray(function(shifted), dtype=float) - base) / step)
        return np.column_stack(columns) if columns else np.zeros((base.size, 0))

    u = u_at(x)
    if model.jacobian_method is None:
        return differences(lambda state: model.f_raw(t, state, u_at(state), p), np.asarray(model.f_raw(t, x, u, p)))
    dfdx, dfdu = (np.asarray(a, dtype=float) for a in model.jacobians_raw(t, x, u, p))
    if u.size == 0:
        return dfdx
    return dfdx + dfdu @ differences(u_at, u)
