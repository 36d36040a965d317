"""State estimators as sampled diagram blocks: :func:`kalman` (a linear plant), :func:`ekf` and :func:`ukf` (any
plant), each a ``robodyn.System`` with ``sample=T`` that propagates its own covariance.

Ports (``plant`` the model estimated):

- **inputs**: the measured outputs, named as the plant's outputs (``theta``), then the applied inputs, named as the
  plant's inputs (``tau``): wire ``plant.theta -> ekf.theta`` (or a noisy sensor's output) and the controller's
  output to both ``plant.tau`` and ``ekf.tau``;
- **outputs**: the estimate x_{k|k}, ``<state>_hat``, then the diagonal of its covariance P_{k|k}, ``P_<state>``,
  held from t_k (they depend on the measurements of t_k, not on the applied inputs unless the plant's outputs do);
- **states**: x_{k|k-1} - x0 (``<state>_prior``) and the upper triangle, row by row, of P_{k|k-1} - P0
  (``P_<i>_<j>``, i <= j the states' indices): offsets from the initial guess, so that the diagram's zero initial
  state starts the filter at x0, P0.

At t_k the block's outputs are the measurement update of its state with y_k; its state then becomes the prediction
to t_{k+1} with u_k held (robodyn.diagrams.sampled). Noise: ``Qn`` is the intensity of continuous white process
noise, dx = f(x, u) dt + G dw with E[dw dw'] = Qn dt (G the identity by default), discretized exactly over T with
the Jacobian A at x_{k|k} (Van Loan: Qd = integral_0^T e^{A s} G Qn G' e^{A' s} ds); for a discrete-time plant
(``kalman`` of a LinearSystem with ``dt``) Qn is the covariance of w_k in x_{k+1} = A x_k + B u_k + G w_k. ``Rn`` is
the covariance of the measurement noise of one sample. Weights are matrices or ``{name: variance}`` diagonals.
The plant is evaluated at its parameters' values when the block is made.

Each block also says where it rests for held inputs (``rest_state``: the plant's rest point and the steady-state
filter's prior covariance) and what it is to a report (``roles()``: an estimator of the plant's states):
robodyn.control.estimation.rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.blas import one_blas_thread
from robodyn.base.errors import InputError, ShapeError, UnknownNameError
from robodyn.base.names import did_you_mean
from robodyn.base.numbers import finite_number
from robodyn.control.estimation.discretization import hold_discretization, noise_discretization, rk4_points
from robodyn.control.estimation.filters import (
    joseph_update,
    merwe_weights,
    sigma_points,
    unscented_transform,
    unscented_update,
)
from robodyn.control.estimation.rest import RestPoint, estimator_role, held_linear_rest, plant_rest, rest_function
from robodyn.control.optimal.batch.points import ModelPoints
from robodyn.control.weights import DEFINITE_RTOL, check_definite, check_symmetric, weight_matrix
from robodyn.linear.systems import as_linear
from robodyn.model.kinds.callables import System
from robodyn.model.protocol import ModelContract

if TYPE_CHECKING:  # the compiled samples import numba: loaded when a block is made
    from robodyn.control.estimation.compiled import CompiledExtended, CompiledKalman, CompiledSample
    from robodyn.control.estimation.compiled_ukf import CompiledUnscented

__all__ = ["ekf", "kalman", "ukf"]

Array = NDArray[np.float64]
Weight = ArrayLike | Mapping[str, float]
MAX_SUBSTEPS = 1_000  # RK4 steps per sample of an ekf/ukf prediction.


class _Filter(Protocol):
    """One estimator's two steps on (x (n,), P (n, n)) at t_k; y the measurements, u the applied inputs."""

    def update(self, t: float, x: Array, P: Array, y: Array, u: Array) -> tuple[Array, Array]: ...

    def predict(self, t: float, x: Array, P: Array, u: Array) -> tuple[Array, Array]: ...


class _Setup:
    """The checked arguments every estimator shares."""

    def __init__(self, plant: ModelContract, sample: float, Qn: Weight, Rn: Weight, x0: Weight | None,
                 P0: Weight | None, outputs: Sequence[str] | None, G: ArrayLike | None, name: str):
        self.where = f"{name} ({plant.name})"
        self.plant, self.name = plant, name
        self.T = finite_number(sample, f"{self.where}: sample", positive="{what} must be > 0, got {number}")
        states = list(plant.states)
        n = len(states)
        self.measured = self._measured(outputs)
        self.G = np.eye(n) if G is None else weight_matrix(G, (n, np.shape(G)[-1] if np.ndim(G) else 1),
                                                           f"{self.where}: G")
        g = self.G.shape[1]
        self.Qn = self._covariance(Qn, g, "Qn", states if G is None else None, strict=False)
        self.Rn = self._covariance(Rn, len(self.measured), "Rn", [plant.outputs[i] for i in self.measured],
                                   strict=True)
        self.P0 = self._covariance(np.eye(n) if P0 is None else P0, n, "P0", states, strict=False)
        self.x0 = self._vector(np.zeros(n) if x0 is None else x0, states, "x0")
        self.p = plant.parameter_vector()

    def _measured(self, outputs: Sequence[str] | None) -> list[int]:
        known = list(self.plant.outputs)
        if outputs is None:
            return list(range(len(known)))
        if isinstance(outputs, str) or not outputs:
            raise InputError(f"{self.where}: outputs must be a non-empty list of the plant's outputs "
                             f"({', '.join(known)}), got {outputs!r}")
        for name in outputs:
            if name not in known:
                raise UnknownNameError(f"{self.where}: the plant has no output {name!r} (its outputs: "
                                       f"{', '.join(known)}){did_you_mean(str(name), known)}")
        if len(set(outputs)) != len(outputs):
            raise InputError(f"{self.where}: an output is measured twice in {list(outputs)}: name each once")
        return [known.index(name) for name in outputs]

    def _covariance(self, value: Weight, size: int, label: str, names: Sequence[str] | None, strict: bool
                    ) -> Array:
        matrix = weight_matrix(value, (size, size), f"{self.where}: {label}", names)
        check_symmetric(matrix, f"{self.where}: {label}")
        check_definite(matrix, f"{self.where}: {label} (a covariance)", strict=False)
        if strict:
            smallest = float(np.linalg.eigvalsh(matrix)[0])
            if smallest <= DEFINITE_RTOL * max(1.0, float(np.max(np.abs(matrix)))):
                raise InputError(f"{self.where}: {label} (a covariance) must be positive definite: its smallest "
                                 f"eigenvalue is {smallest:.6g}: give every measured output a positive variance")
        return 0.5 * (matrix + matrix.T)

    def _vector(self, value: Weight, names: Sequence[str], label: str) -> Array:
        if isinstance(value, Mapping):
            unknown = [k for k in value if k not in names]
            if unknown:
                raise UnknownNameError(f"{self.where}: {label} names {unknown[0]!r}, not a state (the states: "
                                       f"{', '.join(names)}){did_you_mean(str(unknown[0]), list(names))}")
            value = [value.get(k, 0.0) for k in names]
        try:
            vector = np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{self.where}: {label} must be numbers, got {value!r:.60}") from None
        if vector.shape != (len(names),):
            raise ShapeError(f"{self.where}: {label} has shape {vector.shape}, expected ({len(names)},)")
        if not np.all(np.isfinite(vector)):
            raise InputError(f"{self.where}: {label} contains non-finite entries: give finite numbers")
        return vector

    def process_noise(self) -> Array:
        """G Qn G' (n, n)."""
        return self.G @ self.Qn @ self.G.T


def _flag(compiled: bool, setup: _Setup) -> bool:
    if not isinstance(compiled, bool | np.bool_):
        raise InputError(f"{setup.where}: compiled must be true or false, got {compiled!r}")
    return bool(compiled)


def _block(setup: _Setup, steps: _Filter, point: RestPoint, fast: CompiledSample | None = None) -> System:
    """The sampled System running ``steps`` (see the module docstring for its ports and state), resting where
    ``point`` says (robodyn.control.estimation.rest), or ``fast`` (the same sample in one compiled call,
    robodyn.control.estimation.compiled) when given."""
    plant, n = setup.plant, setup.plant.n_states
    p, m = len(setup.measured), plant.n_inputs
    upper = np.triu_indices(n)
    measured = [plant.outputs[i] for i in setup.measured]
    clash = sorted(set(measured) & set(plant.inputs))
    if clash:
        raise InputError(f"{setup.where}: the plant's output {clash[0]!r} is named like one of its inputs: the "
                         "block's inputs would be ambiguous; rename one of them")
    states = [*(f"{s}_prior" for s in plant.states), *(f"P_{i}_{j}" for i, j in zip(*upper, strict=True))]
    outputs = [*(f"{s}_hat" for s in plant.states), *(f"P_{s}" for s in plant.states)]
    inputs = [*measured, *plant.inputs]
    rest, role = rest_function(setup, steps, point), estimator_role(plant)
    if fast is not None:
        return System(lambda t, z, v, _: fast.sample(t, z, v)[1], states, inputs,
                      h=lambda t, z, v, _: fast.sample(t, z, v)[0], outputs=outputs, name=setup.name,
                      sample=setup.T, rest=rest, role=role)
    last: dict[str, Any] = {}

    def posterior(t: float, z: Array, v: Array) -> tuple[Array, Array]:
        key = (t, z.tobytes(), v.tobytes())
        if last.get("key") != key:
            x = setup.x0 + z[:n]
            P = setup.P0.copy()
            P[upper] += z[n:]
            P.T[upper] = P[upper]
            with one_blas_thread():  # small factorizations: BLAS's threads cost more than they save
                last["key"], last["value"] = key, steps.update(t, x, P, v[:p], v[p:p + m])
        found: tuple[Array, Array] = last["value"]
        return found

    def output(t: float, z: Array, v: Array, _: Array) -> Array:
        x, P = posterior(t, z, v)
        return np.concatenate([x, np.diag(P)])

    def update(t: float, z: Array, v: Array, _: Array) -> Array:
        prior = posterior(t, z, v)
        with one_blas_thread():
            x, P = steps.predict(t, *prior, v[p:p + m])
        return np.concatenate([x - setup.x0, (P - setup.P0)[upper]])

    return System(update, states, inputs, h=output, outputs=outputs, name=setup.name, sample=setup.T, rest=rest,
                  role=role)


class _Linear:
    """The Kalman filter of x_{k+1} = Phi x_k + Gamma u_k + w_k, y_k = C x_k + D u_k + v_k."""

    def __init__(self, setup: _Setup, Phi: Array, Gamma: Array, Qd: Array, C: Array, D: Array):
        self.where, self.R, self.x0, self.P0 = setup.where, setup.Rn, setup.x0, setup.P0
        self.Phi, self.Gamma, self.Qd = Phi, Gamma, Qd
        self.C, self.D = C[setup.measured], D[setup.measured]

    def update(self, t: float, x: Array, P: Array, y: Array, u: Array) -> tuple[Array, Array]:
        return joseph_update(x, P, y - self.C @ x - self.D @ u, self.C, self.R, self.where)

    def predict(self, t: float, x: Array, P: Array, u: Array) -> tuple[Array, Array]:
        return self.Phi @ x + self.Gamma @ u, self.Phi @ P @ self.Phi.T + self.Qd

    def compiled(self) -> CompiledKalman:
        """The same sample in one compiled call."""
        from robodyn.control.estimation.compiled import CompiledKalman

        return CompiledKalman(self.x0, self.P0, self.C, self.D, self.R, self.Phi, self.Gamma, self.Qd, self.where)


class _Nonlinear:
    """What the EKF and the UKF share: the plant's f at many points, its h, the RK4 mean, Van Loan's Qd."""

    def __init__(self, setup: _Setup, substeps: int):
        if isinstance(substeps, bool) or not isinstance(substeps, int | np.integer) or not (
                1 <= substeps <= MAX_SUBSTEPS):
            raise InputError(f"{setup.where}: substeps must be a whole number in [1, {MAX_SUBSTEPS}], got "
                             f"{substeps!r}")
        self.setup, self.where, self.R, self.T = setup, setup.where, setup.Rn, setup.T
        self.plant, self.p, self.measured = setup.plant, setup.p, setup.measured
        self.points = ModelPoints(setup.plant, setup.p)
        self.Qc = setup.process_noise()
        self.substeps = int(substeps)

    def h(self, t: float, x: Array, u: Array) -> Array:
        return np.asarray(self.plant.h_raw(t, x, u, self.p), dtype=float)[self.measured]

    def mean(self, t: float, X: Array, u: Array) -> Array:
        return rk4_points(self.points, t, X, u, self.T, self.substeps)

    def transition(self, t: float, x: Array, u: Array) -> tuple[Array, Array]:
        """(Phi, Qd) of the Jacobian at (x, u) over T."""
        A = self.points.jacobians(np.array([t]), x[None], u[None])[0][0]
        return noise_discretization(A, self.Qc, self.T)


class _Extended(_Nonlinear):
    def __init__(self, setup: _Setup, substeps: int):
        super().__init__(setup, substeps)
        plant = setup.plant
        n, m = plant.n_states, plant.n_inputs
        if plant.jacobian_method is None or plant.output_jacobians_raw(0.0, np.zeros(n), np.zeros(m),
                                                                       setup.p) is None:
            raise InputError(f"{self.where}: the ekf needs the plant's exact Jacobians of f and h, and "
                             f"{plant.name!r} has none: use the ukf")

    def update(self, t: float, x: Array, P: Array, y: Array, u: Array) -> tuple[Array, Array]:
        found = self.plant.output_jacobians_raw(t, x, u, self.p)
        assert found is not None  # checked when made
        H = np.asarray(found[0], dtype=float)[self.measured]
        return joseph_update(x, P, y - self.h(t, x, u), H, self.R, self.where)

    def predict(self, t: float, x: Array, P: Array, u: Array) -> tuple[Array, Array]:
        Phi, Qd = self.transition(t, x, u)
        return self.mean(t, x, u)[0], Phi @ P @ Phi.T + Qd

    def compiled(self) -> CompiledExtended | None:
        """The same sample in one compiled call, or None for a plant without compiled f and Jacobian."""
        dynamics = self.points.compiled()
        if dynamics is None:
            return None
        from robodyn.control.estimation.compiled import CompiledExtended

        setup = self.setup

        def outputs(t: float, x: Array, u: Array) -> tuple[Array, Array]:
            found = self.plant.output_jacobians_raw(t, x, u, self.p)
            assert found is not None  # checked when made
            return self.h(t, x, u), np.asarray(found[0], dtype=float)[self.measured]

        return CompiledExtended(dynamics.addresses, dynamics.p, setup.x0, setup.P0, self.measured, self.R, self.Qc,
                                self.T, self.substeps, None if self.plant.outputs_are_states else outputs,
                                self.plant.n_inputs, self.where)


class _Unscented(_Nonlinear):
    def __init__(self, setup: _Setup, substeps: int, alpha: float, beta: float, kappa: float):
        super().__init__(setup, substeps)
        values = [finite_number(v, f"{self.where}: {k}") for k, v in (("alpha", alpha), ("beta", beta),
                                                                        ("kappa", kappa))]
        self.weights = merwe_weights(setup.plant.n_states, *values)
        self.exact = setup.plant.jacobian_method is not None

    def update(self, t: float, x: Array, P: Array, y: Array, u: Array) -> tuple[Array, Array]:
        X = sigma_points(x, P, self.weights, self.where)
        Y = np.array([self.h(t, row, u) for row in X])
        return unscented_update(x, P, X, Y, y, self.R, self.weights, self.where)

    def predict(self, t: float, x: Array, P: Array, u: Array) -> tuple[Array, Array]:
        X = sigma_points(x, P, self.weights, self.where)
        Qd = self.transition(t, x, u)[1] if self.exact else self.Qc * self.T  # first order without a Jacobian
        return unscented_transform(self.mean(t, X, u), self.weights, Qd)

    def compiled(self) -> CompiledUnscented | None:
        """The same sample in one compiled call, or None: for a plant with compiled f and exact Jacobian whose
        measured outputs are states."""
        dynamics = self.points.compiled()
        if dynamics is None or not self.exact or not self.plant.outputs_are_states:
            return None
        from robodyn.control.estimation.compiled_ukf import CompiledUnscented

        setup = self.setup
        return CompiledUnscented(dynamics.addresses, dynamics.p, setup.x0, setup.P0, self.measured, self.R, self.Qc,
                                 self.T, self.substeps, self.weights, self.plant.n_inputs, self.where)


def kalman(plant: ModelContract, sample: float | None, Qn: Weight, Rn: Weight, *,
           x0: Weight | None = None, P0: Weight | None = None, outputs: Sequence[str] | None = None,
           G: ArrayLike | None = None, name: str = "kalman", compiled: bool = True) -> System:
    """The linear Kalman filter of a linear plant as a sampled block (time-varying covariance).

    Parameters
    ----------
    plant
        A model linear by construction (``plant.linear_model()``: a ``LinearSystem``, a ``kind: linear`` file). A
        continuous one is held over ``sample`` (Phi = e^{A T}, Gamma by the zero-order hold, Qd by Van Loan); a
        discrete one (``dt``) is used as it is, ``sample`` its ``dt`` (the default) and Qn the covariance per step.
    sample
        The period T in s (None for a discrete plant: its ``dt``).
    Qn : (n, n) or (g, g) with G
        Process noise (the module docstring): a matrix, or ``{state: variance}``.
    Rn : (p, p)
        Measurement noise covariance per sample, symmetric positive definite; or ``{output: variance}``.
    x0 : (n,), P0 : (n, n)
        The initial estimate x_{0|-1} and its covariance (default 0 and the identity).
    outputs
        The measured outputs (default: all the plant's).
    G : (n, g)
        How the process noise enters the states (default the identity).
    compiled
        Run each sample (update and prediction) as one compiled call (:mod:`robodyn.control.estimation.compiled`;
        the default); False: numpy and scipy per sample, the reference the compiled sample equals to ~1e-12
        (tests/control/estimation/test_estimation_compiled.py).

    Its gain converges to python-control's ``dlqe`` of the held plant (tests/control/estimation/test_blocks.py).
    """
    linear = as_linear(plant, "kalman (use ekf or ukf for a nonlinear plant)")
    period = linear.dt if sample is None else sample
    if period is None:
        raise InputError(f"kalman ({plant.name}): give the sample period T of the block (sample=...)")
    setup = _Setup(plant, period, Qn, Rn, x0, P0, outputs, G, name)
    A, B, C, D = (np.asarray(a, dtype=float) for a in (linear.A, linear.B, linear.C, linear.D))
    if linear.dt is None:
        Phi, Gamma = hold_discretization(A, B, setup.T)
        Qd = noise_discretization(A, setup.process_noise(), setup.T)[1]
    elif abs(linear.dt - setup.T) > 1e-12 * linear.dt:
        raise InputError(f"kalman ({plant.name}): sample {setup.T:g} s differs from the plant's dt {linear.dt:g} s: "
                         "a discrete plant is estimated at its own period (leave sample out)")
    else:
        Phi, Gamma, Qd = A, B, setup.process_noise()
    steps = _Linear(setup, Phi, Gamma, Qd, C, D)
    return _block(setup, steps, held_linear_rest, steps.compiled() if _flag(compiled, setup) else None)


def ekf(plant: ModelContract, sample: float, Qn: Weight, Rn: Weight, *, x0: Weight | None = None,
        P0: Weight | None = None, outputs: Sequence[str] | None = None, G: ArrayLike | None = None,
        substeps: int = 1, name: str = "ekf", compiled: bool = True) -> System:
    """The extended Kalman filter of a plant with exact Jacobians of f and h, as a sampled block.

    Update: H = dh/dx at x_{k|k-1}, the Joseph form. Prediction: the mean by ``substeps`` classic RK4 steps of
    the plant over T with u_k held (:func:`~robodyn.control.estimation.discretization.rk4_points`), the covariance
    Phi P Phi' + Qd with Phi = e^{A T}, A = df/dx at (x_{k|k}, u_k), and Qd by Van Loan. The arguments are
    :func:`kalman`'s (``sample`` required). ``compiled``: the whole sample in one compiled call when the plant has
    compiled f and Jacobian (:class:`~robodyn.control.estimation.compiled.CompiledExtended`: its rhs_c and jac_c;
    a plant without them runs numpy and scipy per sample, as ``compiled=False``).
    """
    setup = _Setup(plant, sample, Qn, Rn, x0, P0, outputs, G, name)
    steps = _Extended(setup, substeps)
    return _block(setup, steps, plant_rest, steps.compiled() if _flag(compiled, setup) else None)


def ukf(plant: ModelContract, sample: float, Qn: Weight, Rn: Weight, *, x0: Weight | None = None,
        P0: Weight | None = None, outputs: Sequence[str] | None = None, G: ArrayLike | None = None,
        alpha: float = 1.0, beta: float = 2.0, kappa: float = 0.0, substeps: int = 1, name: str = "ukf",
        compiled: bool = True) -> System:
    """The unscented Kalman filter (additive noise; Särkkä 2013, algorithm 5.14) of a plant, as a sampled block.

    Sigma points: Wan & van der Merwe's scaled points with ``alpha`` (spread, in (0, 1]), ``beta`` (2: optimal for
    a Gaussian prior) and ``kappa`` (robodyn.control.estimation.filters); the defaults alpha = 1, beta = 2,
    kappa = 0 put the 2 n points at +- sqrt(n) standard deviations with no weight on the mean's own point. The
    prediction propagates the points of (x_{k|k}, P_{k|k}) by RK4 (as :func:`ekf`'s mean) and adds Qd (Van Loan
    at the Jacobian at x_{k|k} when the plant has exact Jacobians, else Qn T); the update draws points of
    (x_{k|k-1}, P_{k|k-1}) anew. P0 must be positive definite. The other arguments are :func:`ekf`'s; ``compiled``:
    the whole sample in one compiled call (:class:`~robodyn.control.estimation.compiled_ukf.CompiledUnscented`) when
    the plant has compiled f and exact Jacobian and its measured outputs are states, else numpy and scipy per sample.
    """
    setup = _Setup(plant, sample, Qn, Rn, x0, P0, outputs, G, name)
    check_definite(setup.P0, f"{setup.where}: P0 (the sigma points need a positive definite covariance)", True)
    steps = _Unscented(setup, substeps, alpha, beta, kappa)
    return _block(setup, steps, plant_rest, steps.compiled() if _flag(compiled, setup) else None)
