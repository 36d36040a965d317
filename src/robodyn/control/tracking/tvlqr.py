"""Time-varying LQR along a trajectory: :func:`tvlqr` and its result :class:`TVLQR`.

Deviations dx = x - x*(t), du = u - u*(t) from a trajectory of x' = f(t, x, u) obey dx' = A(t) dx + B(t) du to
first order, A, B the model's exact Jacobians on the reference x*(t), u*(t) of
:mod:`~robodyn.control.tracking.reference` (x* cubic Hermite through the samples with the slopes of f, u* held or
linear). The finite-horizon LQR of that LTV system (:mod:`~robodyn.control.tracking.riccati`) gives the feedback
u = u*(t) - K(t) (x - x*(t)) and the cost-to-go (x - x*)' S(t) (x - x*) (Tedrake, *Underactuated Robotics*,
"Trajectory Optimization" / "LQR trajectory stabilization"; Drake's FiniteHorizonLinearQuadraticRegulator).

- continuous time: the Riccati differential equation with A(t), B(t) evaluated on x*(t), u*(t) inside each interval
  (compiled DOP853 over the horizon calling the model's compiled Jacobian, :mod:`~robodyn.control.tracking.riccati_ode`;
  scipy's, interval by interval, for a model without compiled functions); K_k = R^-1 B(t_k)' S(t_k);
- discrete time (``discrete=True``): the exact zero-order-hold model of each interval, Phi_k, Gamma_k of the
  Jacobians at the knot (Van Loan; :mod:`~robodyn.control.tracking.zoh`), and the Riccati recursion
  with the stage cost h_k (x' Q x + u' R u); the last knot's gain repeats the one before;
- ``handover=True``: Qf is the cost-to-go of the infinite-horizon LQR at the final point (``robodyn.lqr`` of
  ``robodyn.linearize`` there; in discrete time of its ZOH model over the last interval, with the weights h Q, h R),
  and after the trajectory the feedback goes on with that LQR's gain about the final point.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import cho_factor, cho_solve

from robodyn.base.blas import one_blas_thread
from robodyn.base.errors import InputError, RobodynWarning, ShapeError
from robodyn.base.numbers import finite_number
from robodyn.control.design import lqr
from robodyn.control.feedback_block import FeedbackBlock, uniform_period
from robodyn.control.tracking.knots import compiled_functions, derivatives_at_knots
from robodyn.control.tracking.reference import INTERPOLATIONS, ReferencePath, check_knots, reference_path
from robodyn.control.tracking.riccati import Jacobians, continuous_riccati, discrete_riccati
from robodyn.control.tracking.riccati_ode import compiled_riccati
from robodyn.control.tracking.zoh import zoh_models
from robodyn.control.weights import lqr_weights, weight_matrix
from robodyn.linearization.linearize import linearize
from robodyn.model.system import Values, require_euclidean, require_model
from robodyn.signals.tracking import TrackingFeedback, hermite

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["DEFAULT_RTOL", "TVLQR", "tvlqr"]

Array = NDArray[np.float64]

DEFAULT_RTOL: Final = 1e-10  # DOP853's relative tolerance for the Riccati differential equation.
HANDOVER_OFFSET: Final = 1e-2  # The hand-over LQR's steady offset from the final point (state units) warned above.
Weight = ArrayLike | Mapping[str, float]


@dataclass(frozen=True, slots=True, eq=False)
class TVLQR:
    """Time-varying LQR along a trajectory (see :func:`tvlqr`).

    Attributes
    ----------
    t : (T,)
        The trajectory's times (the knots).
    K : (T, m, n)
        The gains at the knots.
    S : (T, n, n)
        The cost-to-go matrices at the knots.
    x_ref : (T, n)
    u_ref : (T, m)
    states, inputs
        Names.
    discrete
        Whether the gains are the discrete-time design's (held over each interval).
    handover
        Whether the final gain is the infinite-horizon LQR's at the final point.
    reference
        x*(t), u*(t) between knots (:class:`~robodyn.control.tracking.reference.ReferencePath`).
    """

    t: Array
    K: Array
    S: Array
    x_ref: Array
    u_ref: Array
    states: tuple[str, ...]
    inputs: tuple[str, ...]
    discrete: bool
    handover: bool
    reference: ReferencePath

    def __post_init__(self) -> None:
        T, m, n = self.K.shape
        if self.S.shape != (T, n, n) or self.t.shape != (T,) or self.x_ref.shape != (T, n) or \
                self.u_ref.shape != (T, m):
            raise ShapeError(f"TVLQR: K {self.K.shape}, S {self.S.shape}, t {self.t.shape}, x_ref "
                             f"{self.x_ref.shape}, u_ref {self.u_ref.shape} do not agree")
        for array in (self.t, self.K, self.S, self.x_ref, self.u_ref):
            array.setflags(write=False)

    @property
    def feedback(self) -> TrackingFeedback:
        """u = u*(t) - K(t) (x - x*(t)) for ``robodyn.simulate(model, ..., u=result.feedback)``: K linear between
        knots (held in discrete time), x* and u* as :attr:`reference`; past the end, the final gain about the final
        point."""
        path = self.reference
        return TrackingFeedback(self.t, self.K, self.x_ref, self.u_ref, path.d0, path.d1,
                                input_interpolation=path.interpolation,
                                gain_interpolation="hold" if self.discrete else "linear")

    def block(self, sample: float | None = None, *, name: str = "tvlqr") -> FeedbackBlock:
        """The feedback as a sampled diagram block (:class:`~robodyn.control.feedback_block.FeedbackBlock`): inputs
        the states, outputs the inputs, u_k = u*(t_k) - K(t_k) (x_k - x*(t_k)) computed at each instant and held,
        its exact derivative -K(t_k); ``sample`` defaults to the knot spacing (required when uneven). A discrete
        design sampled at its knots is the loop it was made for."""
        period = uniform_period(self.t, "TVLQR block") if sample is None else sample
        law = self.feedback
        form = "discrete-time" if self.discrete else "continuous-time"
        return FeedbackBlock(law, self.states, self.inputs, period, gain=lambda t, x: -law.gain(t), name=name,
                             describe=f"TVLQR ({form} design) over [{self.t[0]:g}, {self.t[-1]:g}] s")

    def cost_to_go(self, t: float, x: ArrayLike) -> float:
        """(x - x*(t))' S(t) (x - x*(t)), S linear between knots (held in discrete time), the last after the end."""
        time = finite_number(t, "cost_to_go: time t")
        state = np.asarray(x, dtype=float)
        if state.shape != (self.x_ref.shape[1],) or not np.all(np.isfinite(state)):
            raise ShapeError(f"cost_to_go: x must be {self.x_ref.shape[1]} finite numbers, got shape {state.shape}")
        if time >= self.t[-1]:
            S = self.S[-1]
        else:
            k, s = self.reference.interval(time)
            S = self.S[k] if self.discrete else (1.0 - s) * self.S[k] + s * self.S[k + 1]
        dx = state - self.reference.state(time)
        return float(dx @ S @ dx)

    def _repr_html_(self) -> str:
        """The design at a glance (span, knots, form, hand-over) and its first gain K(t0) (for notebooks)."""
        from robodyn.display import block, heading, html_table, matrix_html

        form = "discrete (exact ZOH, Riccati recursion)" if self.discrete else "continuous (Riccati ODE)"
        rows = [("span [s]", f"{self.t[0]:g} to {self.t[-1]:g}"), ("knots", len(self.t)), ("form", form),
                ("hand-over to LQR", self.handover)]
        return block([heading("TVLQR: u = u*(t) - K(t) (x - x*(t))"), html_table(rows, row_header=True),
                      matrix_html(self.K[0], self.inputs, self.states, title=f"K({self.t[0]:g})")])

    def to_dict(self) -> dict[str, Any]:
        """Strict JSON: t, K, S, the reference and the names."""
        return {"t": self.t.tolist(), "K": self.K.tolist(), "S": self.S.tolist(), "x_ref": self.x_ref.tolist(),
                "u_ref": self.u_ref.tolist(), "states": list(self.states), "inputs": list(self.inputs),
                "discrete": self.discrete, "handover": self.handover}


def _samples(model: ModelContract, trajectory: Any) -> tuple[Array, Array, Array]:
    """t (T,), x (T, n), u (T, m) of ``trajectory``, checked against the model's names and sizes."""
    n, m = model.n_states, model.n_inputs
    try:
        t, x, u = (np.array(getattr(trajectory, name), dtype=float) for name in ("t", "x", "u"))
    except (AttributeError, TypeError, ValueError):
        raise InputError("tvlqr: trajectory must be a robodyn Trajectory (t, x, u arrays of numbers)") from None
    for label, names in (("states", model.states), ("inputs", model.inputs)):
        given = getattr(trajectory, label, None)
        if given is not None and tuple(given) != tuple(names):
            raise InputError(f"tvlqr: the trajectory's {label} ({', '.join(given) or 'none'}) are not the model's "
                             f"({', '.join(names) or 'none'}): give a trajectory of {model.name!r}")
    T = t.size
    if t.ndim != 1 or x.shape != (T, n) or u.shape != (T, m):
        raise ShapeError(f"tvlqr: trajectory t {t.shape}, x {x.shape}, u {u.shape}: expected (T,), (T, {n}), "
                         f"(T, {m}) for {model.name!r}")
    for label, array in (("t", t), ("x", x), ("u", u)):
        if not np.all(np.isfinite(array)):
            raise InputError(f"tvlqr: the trajectory's {label} has non-finite entries: give finite numbers")
    return t, x, u


def _jacobian_function(model: ModelContract, p: Array) -> Callable[[float, Array, Array], tuple[Array, Array]]:
    """``jac(t, x, u) -> (A, B)``, new arrays: through the model's ``bound_linearization`` (compiled code on held
    buffers, the numbers of ``jacobians_raw`` bit for bit, ~30x less bookkeeping) when its outputs have exact
    Jacobians, else ``jacobians_raw``."""
    n, m, q = model.n_states, model.n_inputs, model.n_outputs
    out = np.empty(n * (n + m) + q * (n + m))
    try:
        model.linearization_raw(0.0, np.zeros(n), np.zeros(m), p)
    except NotImplementedError:
        def raw(time: float, x: Array, u: Array) -> tuple[Array, Array]:
            A, B = model.jacobians_raw(time, x, u, p)
            return np.asarray(A, dtype=float), np.asarray(B, dtype=float)

        return raw
    except (ArithmeticError, ValueError):
        pass  # a model singular at the origin: its numbers are asked for on the trajectory

    def bound(time: float, x: Array, u: Array) -> tuple[Array, Array]:
        model.bound_linearization(time, p, out)(np.ascontiguousarray(x), np.ascontiguousarray(u))
        return out[:n * n].reshape(n, n).copy(), out[n * n:n * (n + m)].reshape(n, m).copy()

    return bound


def _handover(model: ModelContract, path: ReferencePath, Q: Array, R: Array, params: Values | None,
              discrete: bool) -> tuple[Array, Array]:
    """(S, K) of the infinite-horizon LQR at the final point (module docstring); a RobodynWarning when that point
    is so far from an equilibrium that the LQR after the end would hold the model visibly away from it."""
    linear = linearize(model, path.x[-1], path.u[-1], params=params, t=float(path.t[-1]))
    if discrete:
        h = float(path.t[-1] - path.t[-2])
        result = lqr(linear.discretize(h), h * Q, h * R)
    else:
        result = lqr(linear, Q, R)
    _check_rest(model, path, params, linear.A - linear.B @ np.array(result.K))
    return np.array(result.S), np.array(result.K)


def _check_rest(model: ModelContract, path: ReferencePath, params: Values | None, closed: Array) -> None:
    """Warn when the final point is no equilibrium by enough to matter: with x' = f_N there, the LQR's closed loop
    A - B K settles (to first order) at the offset -(A - B K)^-1 f_N from the final point; above
    :data:`HANDOVER_OFFSET` in any state, the swing-up is not caught where it ends."""
    rate = np.asarray(model.f(float(path.t[-1]), path.x[-1], path.u[-1], params), dtype=float)
    try:
        offset = -np.linalg.solve(closed, rate)
    except np.linalg.LinAlgError:
        return  # a closed loop that is singular has no steady state to speak of: lqr has said what it can
    worst = int(np.argmax(np.abs(offset))) if offset.size else 0
    if offset.size and abs(offset[worst]) > HANDOVER_OFFSET:
        warnings.warn(f"tvlqr: the trajectory's final point is no equilibrium (x' = f there is "
                      f"{float(np.max(np.abs(rate))):.3g} at most): the LQR that takes over after the end holds the "
                      f"model about {abs(offset[worst]):.3g} away from it in {model.states[worst]}; end the trajectory "
                      "at rest with its holding inputs (a terminal constraint or cost on the rates, a longer "
                      "horizon), or leave handover out", RobodynWarning, stacklevel=4)


def tvlqr(model: ModelContract, trajectory: Any, Q: Weight, R: Weight, Qf: Weight | None = None, *,
          discrete: bool = False, params: Values | None = None, handover: bool = False,
          interpolation: str | None = None, rtol: float = DEFAULT_RTOL) -> TVLQR:
    """Finite-horizon time-varying LQR along ``trajectory`` (module docstring).

    Parameters
    ----------
    model
        A continuous-time model with exact Jacobians (``jacobian_method``), states in a vector space.
    trajectory
        A robodyn Trajectory of the model (t (T,), x (T, n), u (T, m); an OptimalTrajectory is one), T >= 2.
    Q : (n, n) or {state: weight}
        State weight, symmetric positive semidefinite (a mapping: its diagonal, names left out weigh 0).
    R : (m, m) or {input: weight}
        Input weight, symmetric positive definite.
    Qf : (n, n) or {state: weight}, optional
        Terminal weight (default Q); not with ``handover``.
    discrete
        The discrete-time design on the exact ZOH model of each interval instead of the Riccati ODE.
    params
        Parameter overrides.
    handover
        Qf from the infinite-horizon LQR at the final point, whose gain the feedback keeps after the end.
    interpolation
        u*(t) between knots: ``"hold"`` or ``"linear"``; default the trajectory's ``input_interpolation``
        when it has one, else ``"hold"`` (a simulation's or the DDP family's inputs).
    rtol
        The relative tolerance of the Riccati ODE's integration (continuous time).

    Returns
    -------
    TVLQR
        t, K (T, m, n), S (T, n, n), the reference, ``.feedback`` for simulate and ``cost_to_go(t, x)``.

    Raises
    ------
    InputError, ShapeError, UnknownNameError
        A model without exact Jacobians, on a manifold or in discrete time; a trajectory of another model or with
        non-finite numbers; weights of the wrong shape or names, not symmetric, Q or Qf not PSD, R not PD.
    NumericalError
        The Riccati equation could not be integrated (a trajectory that is not the model's, badly scaled weights).
    """
    require_model(model, "tvlqr")
    require_euclidean(model, "tvlqr")
    if model.sample_period is not None:
        raise InputError(f"tvlqr: {model.name!r} is a discrete-time model: design on a continuous-time model")
    if model.jacobian_method is None or model.n_inputs == 0:
        raise InputError(f"tvlqr: {model.name!r} has no exact Jacobians (or no inputs): TVLQR needs df/dx and df/du")
    if handover and Qf is not None:
        raise InputError("tvlqr: give Qf or handover=True (which sets Qf to the LQR cost-to-go), not both")
    time_rtol = finite_number(rtol, "tvlqr: rtol")
    if not 1e-14 <= time_rtol < 1e-2:
        raise InputError(f"tvlqr: rtol must lie in [1e-14, 1e-2), got {time_rtol:g}")
    n, m = model.n_states, model.n_inputs
    Q_, R_, _ = lqr_weights(Q, R, None, n, m, where="tvlqr", states=model.states, inputs=model.inputs)
    t, x, u = _samples(model, trajectory)
    p = model.parameter_vector(params)
    how = interpolation if interpolation is not None else getattr(trajectory, "input_interpolation", "hold")
    if how not in INTERPOLATIONS:
        raise InputError(f"tvlqr: interpolation must be 'hold' or 'linear', got {how!r}")
    check_knots(t)
    with one_blas_thread():  # many small products and exponentials: BLAS's threads only cost (robodyn.base.blas)
        knots = derivatives_at_knots(model, t, x, u, p, how == "hold")
        path = reference_path(model, t, x, u, p, how, (knots.d0, knots.d1))
        if handover:
            Qf_, K_end = _handover(model, path, Q_, R_, params, discrete)
        else:
            Qf_ = Q_ if Qf is None else weight_matrix(Qf, (n, n), "tvlqr: Qf", model.states)
            lqr_weights(Qf_, R_, None, n, m, where="tvlqr")  # Qf symmetric PSD
        if discrete:
            h = np.diff(t)
            Phi, Gamma = zoh_models(knots.A[:-1], knots.B[:-1], h)
            K_steps, S = discrete_riccati(Phi, Gamma, h, Q_, R_, Qf_)
            K = np.concatenate([K_steps, (K_end if handover else K_steps[-1])[None]])
        else:
            fns = compiled_functions(model)
            if fns is None:  # Python callables: scipy, one interval at a time
                S = continuous_riccati(t, _interval_jacobians(_jacobian_function(model, p), path), Q_, R_, Qf_,
                                       time_rtol)
            else:
                S = compiled_riccati(fns, t, x, u, knots.d0, knots.d1, how == "hold", p, Q_, R_, Qf_, time_rtol).S
            K = _gains(R_, np.swapaxes(knots.B, 1, 2) @ S)
    return TVLQR(t, K, S, x, u, model.states, model.inputs, discrete, handover, path)


def _gains(R: Array, BtS: Array) -> Array:
    """K_k = R^-1 (B_k' S_k) for ``BtS`` (T, m, n): R (m, m) factored once (Cholesky; positive definite, checked by
    lqr_weights), all T right-hand sides solved in one call (a stacked solve factors R T times)."""
    T, m, n = BtS.shape
    factor = cho_factor(R)
    return np.ascontiguousarray(cho_solve(factor, BtS.transpose(1, 0, 2).reshape(m, T * n))
                                .reshape(m, T, n).transpose(1, 0, 2))


def _interval_jacobians(jac: Callable[[float, Array, Array], tuple[Array, Array]], path: ReferencePath) -> Jacobians:
    """``jacobians(k, t)``: A, B at x*(t), u*(t) inside interval k (u* held at u_k up to its right end)."""
    hold = path.interpolation == "hold"

    def jacobians(k: int, time: float) -> tuple[Array, Array]:
        h = float(path.t[k + 1] - path.t[k])
        s = min(max((time - path.t[k]) / h, 0.0), 1.0)
        x = hermite(s, h, path.x[k], path.x[k + 1], path.d0[k], path.d1[k])
        u = path.u[k] if hold else (1.0 - s) * path.u[k] + s * path.u[k + 1]
        return jac(time, x, u)

    return jacobians
