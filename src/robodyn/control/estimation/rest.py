"""Where an estimator block rests (its ``rest_state``) and what it is (its ``role``), for the operating-point search
and the reports (robodyn.control.estimation.blocks).

With its inputs held — the measured outputs y and the applied inputs u — a filter rests where its prediction
x_{k|k-1} is a rest point x* of the plant with those inputs and outputs (f(x*, u) = 0 and h(x*, u) = y for a
continuous plant, found by ``find_equilibrium`` with the outputs as targets; x* = Phi x* + Gamma u and
C x* + D u = y for the held linear one, by least squares) and its covariance P_{k|k-1} is the prior covariance of
the steady-state filter there: the stabilizing solution of the discrete algebraic Riccati equation of the
linearization held over T (:func:`robodyn.control.estimation.kalman.kalman`'s ``P`` of (Phi, H) with Qd and Rn;
Anderson & Moore, *Optimal Filtering*, 1979, ch. 4). At x* the innovation is zero, so the EKF's update leaves x*
where it is and its prediction maps P to itself: the block's state is a fixed point to the Riccati solver's
rounding. (The UKF's covariance map differs from the linearization's at higher order: its rest state is then a
start close to the fixed point, which the search refines.)

The block's state is (x* - x0, upper triangle of P - P0), the coordinates of blocks.py's docstring; None when no
rest point is found (the inputs do not hold the plant at rest) or the filter has no steady state there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import RobodynError
from robodyn.model.roles import EstimatorRole

__all__ = ["REST_RTOL", "estimator_role", "held_linear_rest", "plant_rest", "rest_function"]

Array = NDArray[np.float64]
#: A least-squares rest point of a held linear plant counts when its residual is this small relative to the terms.
REST_RTOL: Final = 1e-9
#: Rest point, transition Phi, process noise Qd and measurement Jacobian H (rows of the measured outputs).
Held = tuple[Array, Array, Array, Array]
RestPoint = Callable[[Any, Any, float, Array, Array, Array], Held | None]


def estimator_role(plant: Any) -> EstimatorRole:
    """The role of an estimator of ``plant`` (its outputs named as blocks.py's ``_block`` names them)."""
    return EstimatorRole("", plant.name, tuple(plant.states), tuple(f"{s}_hat" for s in plant.states),
                         tuple(f"P_{s}" for s in plant.states))


def rest_function(setup: Any, steps: Any, point: RestPoint) -> Callable[[float, Array, Array, Array], Array | None]:
    """The block's ``rest(t, z, v, p)``: its state at rest with its inputs v = (y, u) held, near its state z."""
    plant = setup.plant
    n, p, m = plant.n_states, len(setup.measured), plant.n_inputs
    upper = np.triu_indices(n)

    def rest(t: float, z: Array, v: Array, _: Array) -> Array | None:
        try:
            found = point(setup, steps, t, setup.x0 + z[:n], v[:p], v[p:p + m])
            if found is None:
                return None
            x, Phi, Qd, H = found
            P = steady_prior(Phi, H, Qd, setup.Rn, setup.T)
        except (RobodynError, np.linalg.LinAlgError):
            return None
        return np.concatenate([x - setup.x0, (P - setup.P0)[upper]])

    return rest


def steady_prior(Phi: Array, H: Array, Qd: Array, Rn: Array, T: float) -> Array:
    """P (n, n): the prior covariance of the steady-state filter of x_{k+1} = Phi x_k + w_k (E w w' = Qd),
    y_k = H x_k + v_k (E v v' = Rn): robodyn.kalman's ``P`` of that discrete system."""
    from robodyn.control.estimation.kalman import kalman
    from robodyn.model.kinds.linear import LinearSystem

    n = Phi.shape[0]
    system = LinearSystem(Phi, np.zeros((n, 1)), H, np.zeros((H.shape[0], 1)), dt=T, name="held filter")
    return np.asarray(kalman(system, 0.5 * (Qd + Qd.T), Rn).P, dtype=float)


def held_linear_rest(setup: Any, steps: Any, t: float, x: Array, y: Array, u: Array) -> Held | None:
    """The linear filter's rest point: x = Phi x + Gamma u, C x = y - D u by least squares, kept when it solves
    both to :data:`REST_RTOL`."""
    n = steps.Phi.shape[0]
    M = np.vstack([np.eye(n) - steps.Phi, steps.C])
    rhs = np.concatenate([steps.Gamma @ u, y - steps.D @ u])
    found = np.linalg.lstsq(M, rhs, rcond=None)[0]
    scale = 1.0 + float(np.max(np.abs(M), initial=0.0)) * float(np.max(np.abs(found), initial=0.0)) + float(
        np.max(np.abs(rhs), initial=0.0))
    if float(np.max(np.abs(M @ found - rhs), initial=0.0)) > REST_RTOL * scale:
        return None
    return found, steps.Phi, steps.Qd, steps.C


def plant_rest(setup: Any, steps: Any, t: float, x: Array, y: Array, u: Array) -> Held | None:
    """A nonlinear filter's rest point: the plant's equilibrium with inputs u and measured outputs y (targets) near
    x, and there Phi, Qd (the filter's own ``transition``) and H = dh/dx (exact, or by central differences)."""
    from robodyn.linearization.derivatives import central_differences
    from robodyn.linearization.equilibrium import find_equilibrium

    plant = setup.plant
    targets = {plant.outputs[i]: float(value) for i, value in zip(setup.measured, y, strict=True)}
    points = find_equilibrium(plant, dict(zip(plant.inputs, u.tolist(), strict=True)),
                              dict(zip(plant.states, x.tolist(), strict=True)), params=setup.p, t=t,
                              targets=targets)
    rest = np.array(points[0].x, dtype=float)
    Phi, Qd = steps.transition(t, rest, u)
    exact = plant.output_jacobians_raw(t, rest, u, setup.p) if plant.jacobian_method is not None else None
    if exact is not None:
        H = np.asarray(exact[0], dtype=float)[setup.measured]
    else:
        H = central_differences(lambda s: steps.h(t, s, u), rest)[0]
    return rest, Phi, Qd, H
