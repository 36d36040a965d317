"""Linearization along a trajectory: a linear time-varying (LTV) model of the deviations from it.

Along a reference trajectory (x_ref(t), u_ref(t)) of x' = f(t, x, u), small deviations dx = x - x_ref,
du = u - u_ref obey, to first order, the variational equation

    dx' = A(t) dx + B(t) du,    dy = C(t) dx + D(t) du,

with A(t) = df/dx, B(t) = df/du (and C, D from the outputs) evaluated on the reference. The Jacobians are
taken at every sample t_k of the trajectory with :func:`robodyn.linearize` (exact for symbolic and
manipulator models), and each interval [t_k, t_{k+1}] is discretized for an input held constant over it
(zero-order hold):

    dx_{k+1} = Phi_k dx_k + Gamma_k du_k.

Phi_k and Gamma_k are the top block row of expm(h_k [[A_k, B_k], [0, 0]]) (Van Loan, "Computing integrals
involving the matrix exponential", IEEE TAC 23(3), 1978), exact for the frozen matrices. Freezing
A(t), B(t) over the interval is the only approximation of the continuous variational equation:

- ``rule="start"`` (default) freezes them at the interval's start, (A_k, B_k): the usual causal
  convention of discrete-time LTV design (TV-LQR, iLQR); global error O(h) relative to dx;
- ``rule="trapezoid"`` uses the mean of the two end samples, ((A_k + A_{k+1}) / 2, ...): the
  second-order Magnus approximation with trapezoidal quadrature (Blanes, Casas, Oteo & Ros, "The Magnus
  expansion and some of its applications", Phys. Rep. 470, 2009, section 5); global error O(h^2), at the
  same cost since every sample is linearized anyway.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError, ShapeError
from robodyn.base.numbers import float_array
from robodyn.linear.systems import require_continuous
from robodyn.linearization.linearize import linearize
from robodyn.model.kinds.linear import LinearSystem
from robodyn.model.system import Values, require_euclidean, require_model
from robodyn.results.trajectory import BatchTrajectory, Trajectory

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["RULES", "LTVSystem", "linearize_trajectory", "zoh_discretization"]

Array = NDArray[np.float64]

RULES: Final = ("start", "trapezoid")  # Where A(t), B(t) are frozen over each interval (module docstring).


def _frozen(value: ArrayLike, shape: tuple[int, ...], label: str) -> Array:
    """A read-only float64 copy of ``value`` with the expected shape and finite entries."""
    return float_array(value, label, shape=shape, not_array="LTV system: {what} must be an array of numbers",
                       wrong_shape="LTV system: {what} has shape {shape}, expected {expected}",
                       not_finite="LTV system: {what} has non-finite entries at sample {sample}: give finite numbers")


def zoh_discretization(A: Array, B: Array, h: Array) -> tuple[Array, Array]:
    """Zero-order-hold discretization of K intervals at once.

    Phi_k = e^{A_k h_k} and Gamma_k = integral_0^{h_k} e^{A_k s} ds B_k are the top block row of
    ``expm(h_k [[A_k, B_k], [0, 0]])`` (Van Loan 1978). The stacked augmented matrices are exponentiated
    by one batched ``scipy.linalg.expm`` call (scipy >= 1.9), after removing duplicates: a
    time-invariant model on a uniform grid costs a few exponentials, not K.

    Parameters
    ----------
    A : (K, n, n)
    B : (K, n, m)
    h : (K,), >= 0

    Returns
    -------
    Phi : (K, n, n)
    Gamma : (K, n, m)
    """
    K, n, m = A.shape[0], A.shape[1], B.shape[2]
    M = np.zeros((K, n + m, n + m))
    M[:, :n, :n] = A
    M[:, :n, n:] = B
    M *= h[:, None, None]
    distinct, inverse = np.unique(M.reshape(K, -1), axis=0, return_inverse=True)
    E = scipy.linalg.expm(distinct.reshape(-1, n + m, n + m))[inverse.reshape(-1)]
    return E[:, :n, :n], E[:, :n, n:]


@dataclass(frozen=True, slots=True, eq=False)
class LTVSystem:
    """A linear time-varying model of the deviations from a reference trajectory. Frozen; arrays read-only.

    dx' = A(t) dx + B(t) du, dy = C(t) dx + D(t) du, with dx = x - x_ref, du = u - u_ref, sampled at the
    times ``t``, and its exact zero-order-hold discretization ``dx_{k+1} = Phi_k dx_k + Gamma_k du_k``
    with the matrices frozen over each interval by ``rule`` (module docstring). ``Phi`` and ``Gamma``
    are computed here from ``t``, ``A``, ``B`` and ``rule``, so they always agree with them.

    Attributes
    ----------
    t : (T,), T >= 2, non-decreasing
    A : (T, n, n)
    B : (T, n, m)
    C : (T, p, n)
    D : (T, p, m)
    x_ref : (T, n)
    u_ref : (T, m)
    states, inputs, outputs
        Names (those of the linearized model).
    method
        How the Jacobians were obtained (``"manipulator"``, ``"symbolic"``, ``"central"``, ``"linear"``).
    rule
        ``"start"`` or ``"trapezoid"``: where A, B are frozen over each interval.
    name
        The linearized model's name.
    error_estimate
        The largest error estimate of the Jacobians over the samples (0 for exact methods).
    Phi : (T-1, n, n)
        e^{A_k h_k} (``"start"``) with h_k = t_{k+1} - t_k; the averaged A for ``"trapezoid"``.
    Gamma : (T-1, n, m)
        integral_0^{h_k} e^{A_k s} ds B_k (same rule).
    """

    t: Array
    A: Array
    B: Array
    C: Array
    D: Array
    x_ref: Array
    u_ref: Array
    states: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    method: str
    rule: str = "start"
    name: str = "ltv"
    error_estimate: float = 0.0
    Phi: Array = field(init=False, repr=False)
    Gamma: Array = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        for label in ("states", "inputs", "outputs"):
            value = getattr(self, label)
            if isinstance(value, str):
                raise InputError(f"LTV system: {label} must be a list of names, got the string {value!r}")
            set_(self, label, tuple(value))
        if self.rule not in RULES:
            raise InputError(f"LTV system: unknown rule {self.rule!r}: one of {', '.join(RULES)}")
        t = np.asarray(self.t, dtype=float)
        if t.ndim != 1 or t.shape[0] < 2:
            raise InputError(f"LTV system: t must be a vector of at least 2 times, got shape {t.shape}")
        T, n, m, p = t.shape[0], len(self.states), len(self.inputs), len(self.outputs)
        for label, shape in (("t", (T,)), ("A", (T, n, n)), ("B", (T, n, m)), ("C", (T, p, n)),
                             ("D", (T, p, m)), ("x_ref", (T, n)), ("u_ref", (T, m))):
            set_(self, label, _frozen(getattr(self, label), shape, label))
        h = np.diff(self.t)
        if np.any(h < 0.0):
            k = int(np.argmax(h < 0.0))
            raise InputError(f"LTV system: t must be sorted, but t[{k + 1}] = {self.t[k + 1]} < t[{k}] = {self.t[k]}")
        if self.rule == "start":
            A, B = self.A[:-1], self.B[:-1]
        else:
            A, B = 0.5 * (self.A[:-1] + self.A[1:]), 0.5 * (self.B[:-1] + self.B[1:])
        Phi, Gamma = zoh_discretization(A, B, h)
        for label, array in (("Phi", Phi), ("Gamma", Gamma)):
            array = np.ascontiguousarray(array)
            array.setflags(write=False)
            set_(self, label, array)

    def __len__(self) -> int:
        """The number of samples T."""
        return self.t.shape[0]

    @property
    def n_states(self) -> int:
        return len(self.states)

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    def at(self, k: int) -> LinearSystem:
        """The continuous-time linearization at sample ``k`` (negative counts from the end).

        Returns
        -------
        LinearSystem
            ``A[k], B[k], C[k], D[k]`` with ``x_op = x_ref[k]``, ``u_op = u_ref[k]`` and ``method``.
        """
        T = len(self)
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or not -T <= k < T:
            raise InputError(f"at(): sample index must be an integer in [-{T}, {T - 1}], got {k!r}")
        return LinearSystem(self.A[k], self.B[k], self.C[k], self.D[k], states=self.states, inputs=self.inputs,
                            outputs=self.outputs, name=self.name, x_op=self.x_ref[k], u_op=self.u_ref[k],
                            method=self.method, error_estimate=self.error_estimate)

    def _deviation_inputs(self, du: ArrayLike | None) -> Array:
        T, m = len(self), self.n_inputs
        if du is None:
            return np.zeros((T, m))
        try:
            values = np.array(du, dtype=float)
        except (TypeError, ValueError):
            raise InputError("du must be an array of numbers") from None
        if values.shape != (T, m):
            raise ShapeError(f"du has shape {values.shape}, expected ({T}, {m}): one input row per sample")
        if not np.all(np.isfinite(values)):
            raise InputError("du has non-finite entries: give finite numbers")
        return values

    def propagate(self, dx0: ArrayLike, du: ArrayLike | None = None) -> Array:
        """State deviations along the trajectory by the discrete model dx_{k+1} = Phi_k dx_k + Gamma_k du_k.

        Parameters
        ----------
        dx0 : (n,)
            Deviation at ``t[0]``.
        du : (T, m), optional
            Input deviations; ``du[k]`` is held over [t_k, t_{k+1}] (the last row is not used).
            Default zero.

        Returns
        -------
        dx : (T, n)
            ``dx[k]`` is the deviation at ``t[k]``.
        """
        n = self.n_states
        try:
            start = np.array(dx0, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"dx0 must be numbers, got {dx0!r}") from None
        if start.shape != (n,):
            raise ShapeError(f"dx0 has shape {start.shape}, expected ({n},) for {', '.join(self.states)}")
        if not np.all(np.isfinite(start)):
            raise InputError("dx0 has non-finite entries: give finite numbers")
        forcing = np.einsum("kij,kj->ki", self.Gamma, self._deviation_inputs(du)[:-1])
        dx = np.empty((len(self), n))
        dx[0] = start
        for k in range(len(self) - 1):
            dx[k + 1] = self.Phi[k] @ dx[k] + forcing[k]
        return dx

    def output(self, dx: ArrayLike, du: ArrayLike | None = None) -> Array:
        """Output deviations dy_k = C_k dx_k + D_k du_k.

        Parameters
        ----------
        dx : (T, n)
            State deviations, e.g. from :meth:`propagate`.
        du : (T, m), optional
            Input deviations; default zero.

        Returns
        -------
        dy : (T, p)
        """
        states = np.array(dx, dtype=float)
        if states.shape != (len(self), self.n_states):
            raise ShapeError(f"dx has shape {states.shape}, expected ({len(self)}, {self.n_states})")
        inputs = self._deviation_inputs(du)
        return np.asarray(np.einsum("kij,kj->ki", self.C, states) + np.einsum("kij,kj->ki", self.D, inputs))

    def __repr__(self) -> str:
        return (f"LTVSystem(name={self.name!r}, samples={len(self)}, t=[{self.t[0]:g}, {self.t[-1]:g}], "
                f"states={list(self.states)}, inputs={list(self.inputs)}, outputs={list(self.outputs)}, "
                f"method={self.method!r}, rule={self.rule!r})")

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        return result_html(self, "Linear time-varying model along a trajectory", units={"t": "s"}, plot=False)

def _check_trajectory(model: ModelContract, trajectory: Trajectory) -> None:
    """Raise InputError unless ``trajectory`` is one finite run of ``model`` with at least 2 samples."""
    if isinstance(trajectory, BatchTrajectory):
        raise InputError("linearize_trajectory() takes one Trajectory, got a BatchTrajectory: pass batch[i]")
    if not isinstance(trajectory, Trajectory):
        raise InputError(f"linearize_trajectory() takes a Trajectory, got {type(trajectory).__name__}")
    for label, ours, theirs in (("states", model.states, trajectory.states),
                                ("inputs", model.inputs, trajectory.inputs)):
        if tuple(ours) != tuple(theirs):
            raise InputError(
                f"the trajectory (of model {trajectory.model!r}) has {label} {list(theirs)}, but model "
                f"{model.name!r} has {list(ours)}: linearize along a trajectory simulated with this model"
            )
    if len(trajectory) < 2:
        raise InputError(f"the trajectory has {len(trajectory)} sample(s): linearizing along it needs at least 2 "
                         "(pass t_eval with several times to simulate())")
    for label, values in (("t", trajectory.t[:, None]), ("x", trajectory.x), ("u", trajectory.u)):
        bad = ~np.all(np.isfinite(values), axis=1)
        if np.any(bad):
            k = int(np.argmax(bad))
            raise InputError(f"the trajectory's {label} is not finite at sample {k} (t = {trajectory.t[k]}): "
                             "the simulation diverged or failed there; shorten it or fix the model")


def linearize_trajectory(
    model: ModelContract,
    trajectory: Trajectory,
    *,
    params: Values | None = None,
    method: str = "auto",
    rule: str = "start",
) -> LTVSystem:
    """Linearize ``model`` at every sample (t_k, x_k, u_k) of ``trajectory`` and discretize between samples.

    Each sample is one call of :func:`robodyn.linearize` (with ``t=t_k``), which evaluates the model's
    cached Jacobian functions: about 0.2 ms per sample for the catalog pendulum, so a 2001-sample
    trajectory takes ~0.4 s; the discretization adds one batched matrix exponential (~10 us per interval).

    Parameters
    ----------
    model
        The model ``trajectory`` was simulated with (its state and input names must match).
    trajectory
        One run of :func:`robodyn.simulate`, with at least 2 finite samples. Its samples are the
        discretization grid: pass ``t_eval`` to ``simulate()`` to choose it.
    params
        Parameter overrides; give the ones the trajectory was simulated with.
    method
        Passed to :func:`robodyn.linearize`: ``auto`` (the best available), ``symbolic``,
        ``manipulator``, ``central``.
    rule
        ``start`` (A_k, B_k frozen at each interval's start; error O(h)) or ``trapezoid`` (the mean of
        the end samples; error O(h^2)); see the module docstring.

    Returns
    -------
    LTVSystem
    """
    require_model(model, "linearize_trajectory")
    require_euclidean(model, "linearize_trajectory")
    require_continuous(model, "linearize_trajectory", "a linear update map is its own linearization")
    if rule not in RULES:
        raise InputError(f"unknown rule {rule!r}: one of {', '.join(RULES)}")
    _check_trajectory(model, trajectory)
    samples = [linearize(model, trajectory.x[k], trajectory.u[k], params=params, t=float(trajectory.t[k]),
                         method=method) for k in range(len(trajectory))]
    first = samples[0]
    return LTVSystem(
        t=trajectory.t,
        A=np.stack([s.A for s in samples]),
        B=np.stack([s.B for s in samples]),
        C=np.stack([s.C for s in samples]),
        D=np.stack([s.D for s in samples]),
        x_ref=trajectory.x,
        u_ref=trajectory.u,
        states=first.states,
        inputs=first.inputs,
        outputs=first.outputs,
        method=first.method or method,
        rule=rule,
        name=model.name,
        error_estimate=max(float(s.error_estimate or 0.0) for s in samples),
    )
