"""How far a linearization can be trusted: the remainder bound and a simulation check (``robodyn validity``).

At an operating point z* = (x*, u*) the linearization predicts f(z* + dz) ~ f(z*) + J dz with J = [A B].
Taylor's theorem bounds what it leaves out, the remainder r(dz) = f(z* + dz) - f(z*) - J dz, by
|r| <= L |dz|^p: p = 2 for a twice-differentiable f, p = 3 where the second derivative vanishes
(sin at 0), p = 1 at a kink (|x| at 0). :func:`validity` measures L, p and the radius within which the
remainder stays a small fraction of the linear part, in two ways:

1. Static: r along random unit directions d (plus every coordinate axis, both signs) of the joint
   (dx, du) space at logarithmically spaced radii rho, dz = rho * scale * d, |d|_2 = 1.
2. Dynamic (when a ``horizon`` is given): trajectories of the nonlinear model from x* + dx against the
   linear prediction x* + delta x(t), with u held at u* or under the feedback u = u* - K (x - x*).

Conventions
-----------
- Sizes are infinity norms: |r| = max_i |r_i|, |J dz| = max_i |(J dz)_i|.
- Radii are in the scaled Euclidean norm of the deviation: rho = |dz / scale|_2 = sqrt(sum_i (dz_i / s_i)^2)
  over (dx, du) for the static test, over dx alone for the simulation test (``Validity.norm`` says it in words).
- ``scale`` (n + m,) is the characteristic size of each component; the default is 1 for all, so rho is
  in the model's own units, mixed: a radius 0.1 of the pendulum allows 0.1 rad, 0.1 rad/s, 0.1 N m or
  any combination with that Euclidean length. (Not max(1, |x_i|), the step rule of central differences: how far a model
  is linear around a point depends on the distance from it, not on where it is; theta* = pi is no less
  linear than theta* = 0.) Give ``scale`` when states and inputs have very different units.
- A remainder is rounding when |r| <= ROUNDING (|f(z*)| + |f(z* + dz)| + |J dz|) + JACOBIAN_SAFETY
  e |dz|_1, e the linearization's own error estimate (non-zero for central differences). Rounding counts
  as 0 in the relative errors, the fit and ``L_max``; the absolute errors report what was measured.

- A model on a manifold (a moving base) is sampled in linearize's tangent space at x*, z = (q (-) q*, v)
  (robodyn.mechanisms.floating.chart.TangentModel): x* is (0, v*), ``scale`` has 2 nv + m entries, and the simulation
  test
  runs the robot from x* (+) dz, compared in z (under ``feedback``, the tangent model itself, interpreted).
- A model with closed loops is sampled in its independent coordinates z = (q_i, q_i') at x*
  (robodyn.mechanisms.loops.constraints.ReducedModel: each point assembled); the simulation test runs the mechanism from
  the assembled starts and compares the independent coordinates.

Reference: H. K. Khalil, *Nonlinear Systems*, 3rd ed., sec. 2.3 and 4.3 (linearization and its remainder).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError, NumericalError, ShapeError
from robodyn.base.numbers import A_NUMBER, finite_number
from robodyn.integrate.simulate import simulate
from robodyn.linear.systems import require_continuous
from robodyn.linearization.samples import sampled_model
from robodyn.model.kinds.linear import LinearSystem
from robodyn.model.system import Values, require_model
from robodyn.results.trajectory import BatchTrajectory
from robodyn.signals import StateFeedback

if TYPE_CHECKING:
    from robodyn.mechanisms.floating.chart import TangentModel
    from robodyn.mechanisms.loops.constraints import ReducedModel
    from robodyn.model.protocol import ModelContract

__all__ = ["DEFAULT_RADII", "DEFAULT_SIM_RADII", "Validity", "validity"]

Array = NDArray[np.float64]

ROUNDING: Final = 1e3 * float(np.finfo(float).eps)  # Remainders below this times |f| are rounding.
JACOBIAN_SAFETY: Final = 4.0  # Multiplies the linearization's error estimate in the rounding floor.
DEFAULT_RADII: Final = np.logspace(-4, 0, 25)  # Static radii (in units of ``scale``).
DEFAULT_SIM_RADII: Final = np.logspace(-3, 0, 13)  # Initial deviations of the simulation test.
FIT_FRACTION: Final = 0.5  # The fit uses this fraction of the sampled decades, from the first above rounding.
REFINE_STEPS: Final = 12  # Geometric bisections of the static radius between two grid radii.
SIM_REFINE_STEPS: Final = 6  # The same for the simulation radius (each costs one batch of simulations).
SIM_RTOL: Final = 1e-10  # dopri5 tolerances of the nonlinear runs: far below any useful ``tolerance``.
SIM_ATOL: Final = 1e-12
SIM_POINTS: Final = 201  # Output times on [0, horizon] where trajectories are compared.


# --- the result ----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, eq=False)
class Validity:
    """Where the linearization of ``model`` at (``x_op``, ``u_op``) is accurate to ``tolerance``.

    Attributes
    ----------
    L, exponent
        The fit log max|r| = log L + exponent log rho over ``fit_range`` (the small radii above rounding):
        |r| ~ L rho^exponent. ``L`` = 0 and ``exponent`` None when the model is linear here
        (``linear``); both None when fewer than two radii rise above rounding.
    L_max
        max |r| / rho^2 over every sample: |r| <= L_max rho^2 holds on the sampled set (large at a kink).
    radius
        In the scaled norm |(dx, du) / scale|_2 (see ``norm``): the largest rho where the relative remainder
        max|r| / max|J dz| (over directions) stays below ``tolerance`` at every radius up to it (a monotone
        envelope, refined by bisection); ``inf`` when linear, 0 when it fails already at the smallest radius.
        See ``notes`` for bounds.
    radii : (R,), errors : (R, 2)
        The static radii and, per radius, the relative remainder (column 0) and the max absolute
        remainder (column 1) over the directions.
    sim_radius, sim_radii : (S,), sim_errors : (S,)
        The simulation test (None / empty without ``horizon``): per initial deviation rho, the max over
        runs of max_t |x_nl - x_lin| / max_t |x_nl - x*|; ``sim_radius`` as ``radius`` for these errors, in the
        scaled norm |dx / scale[:n]|_2 of the initial deviation.
    affine
        f(x*, u*) is not zero: x* is not an equilibrium and the linear prediction keeps the constant term.
    method
        The linearization method (``symbolic``, ``manipulator``, ``central``, ``linear``).
    scale : (n + m,)
        The characteristic sizes rho is measured in.
    names
        The states then the inputs (the components of ``scale``), for the description of the norm.
    """

    model: str
    x_op: Array
    u_op: Array
    method: str
    tolerance: float
    L: float | None
    L_max: float
    exponent: float | None
    radius: float
    radii: Array
    errors: Array
    fit_range: tuple[float, float] | None
    scale: Array
    linear: bool
    affine: bool
    horizon: float | None
    sim_radius: float | None
    sim_radii: Array
    sim_errors: Array
    notes: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    @property
    def norm(self) -> str:
        """How rho measures a deviation (dx, du): the scaled Euclidean norm, with the scale of each component."""
        names = self.names if len(self.names) == self.scale.size else [f"z{i}" for i in range(self.scale.size)]
        sizes = ", ".join(f"{name} {value:g}" for name, value in zip(names, self.scale.tolist()))
        unscaled = bool(np.all(self.scale == 1.0))
        return (f"rho = sqrt(sum_i (dz_i / s_i)^2) over the deviations of the states and inputs, s: {sizes}"
                + (" (the default: units are mixed as plain numbers; pass scale to weigh them)" if unscaled else ""))

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        size = self.x_op.size + self.u_op.size
        for label, shape in (("radii", (self.radii.size,)), ("errors", (self.radii.size, 2)),
                             ("scale", (size,)), ("sim_radii", (self.sim_radii.size,)),
                             ("sim_errors", (self.sim_radii.size,))):
            value = np.array(getattr(self, label), dtype=float)
            if value.shape != shape:
                raise ShapeError(f"Validity.{label} has shape {value.shape}, expected {shape}")
            value.setflags(write=False)
            set_(self, label, value)
        if (self.sim_radius is None) != (self.horizon is None):
            raise InputError("Validity: sim_radius is given exactly when a horizon is")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``L, L_max, exponent, radius, tolerance, sim_radius, method, radii, errors`` (errors as
        ``{"relative": [...], "absolute": [...]}``) and ``linear, affine, fit_range, scale, norm, horizon,
        sim_radii, sim_errors, x_op, u_op, notes``; infinite numbers become ``None`` (null), and
        ``radius_unbounded`` says whether a null radius means "holds at every distance probed" (linear here)."""
        return {
            "model": self.model, "L": _number(self.L), "L_max": _number(self.L_max),
            "exponent": _number(self.exponent), "radius": _number(self.radius),
            "radius_unbounded": math.isinf(self.radius), "tolerance": self.tolerance,
            "sim_radius": _number(self.sim_radius), "method": self.method, "radii": _numbers(self.radii),
            "errors": {"relative": _numbers(self.errors[:, 0]), "absolute": _numbers(self.errors[:, 1])},
            "linear": self.linear, "affine": self.affine,
            "fit_range": None if self.fit_range is None else list(self.fit_range),
            "scale": _numbers(self.scale), "norm": self.norm, "horizon": self.horizon,
            "sim_radii": _numbers(self.sim_radii),
            "sim_errors": _numbers(self.sim_errors), "x_op": _numbers(self.x_op), "u_op": _numbers(self.u_op),
            "notes": list(self.notes),
        }

    def text(self) -> str:
        """A few lines for a terminal."""
        exponent = "none (linear)" if self.linear else ("not fitted" if self.exponent is None
                                                         else f"{self.exponent:.3f}")
        L = "n/a" if self.L is None else f"{self.L:.4g}"
        lines = [f"{self.model}: linearization ({self.method}) validity at x = {self.x_op.tolist()}, "
                 f"u = {self.u_op.tolist()}",
                 f"  remainder |r| ~ L rho^p: L = {L}, p = {exponent}; max |r|/rho^2 = {self.L_max:.4g}",
                 f"  radius (relative remainder <= {self.tolerance:g}): {self.radius:.4g}"]
        if self.sim_radius is not None:
            lines.append(f"  simulation radius over {self.horizon:g} s: {self.sim_radius:.4g} (of the states only)")
        lines.append(f"  radii: {self.norm}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)

    def plot(self) -> Any:
        """A matplotlib Figure: the remainder against rho (log-log) with the fit, and the relative errors."""
        from matplotlib.figure import Figure

        from robodyn.display.figures import literal, plain_log

        figure = Figure(figsize=(7, 7))  # fixed margins: its labels are fixed text (a layout engine doubles the cost)
        figure.subplots_adjust(left=0.13, right=0.97, top=0.94, bottom=0.08, hspace=0.08)
        top, bottom = figure.subplots(2, 1, sharex=True)
        absolute, relative = self.errors[:, 1], self.errors[:, 0]
        shown = absolute > 0
        top.loglog(self.radii[shown], absolute[shown], "o-", label="max |r| over directions")
        if self.L is not None and self.exponent is not None:
            top.loglog(self.radii, self.L * self.radii**self.exponent, "--",
                       label=f"fit {self.L:.3g} rho^{self.exponent:.2f}")
        if self.L_max > 0:
            top.loglog(self.radii, self.L_max * self.radii**2, ":", label=f"L_max rho^2 = {self.L_max:.3g} rho^2")
        top.set_ylabel("|f(z*+dz) - f(z*) - J dz| [units of x']")
        top.set_title(f"{literal(self.model)}: remainder of the linearization ({self.method})")
        shown = (relative > 0) & np.isfinite(relative)
        bottom.loglog(self.radii[shown], relative[shown], "o-", label="static: max|r| / max|J dz|")
        shown = (self.sim_errors > 0) & np.isfinite(self.sim_errors)
        if shown.any():
            bottom.loglog(self.sim_radii[shown], self.sim_errors[shown], "s-",
                          label=f"simulation over {self.horizon:g} s")
        bottom.axhline(self.tolerance, color="gray", lw=0.8, label=f"tolerance {self.tolerance:g}")
        for axes in (top, bottom):
            if 0 < self.radius < math.inf:
                axes.axvline(self.radius, color="C3", lw=0.8, label="radius" if axes is bottom else None)
            if self.sim_radius is not None and self.sim_radius > 0:
                axes.axvline(self.sim_radius, color="C2", lw=0.8, ls="--",
                             label="simulation radius" if axes is bottom else None)
            axes.legend(loc="best")
        bottom.set_xlabel("rho [1] (the deviation, in units of scale)")
        bottom.set_ylabel("relative error [1]")
        plain_log(top, bottom)
        return figure

    def _repr_html_(self) -> str:
        from robodyn.display import block, figure_svg, heading, html_table, preformatted

        radius = "unbounded (linear here)" if math.isinf(self.radius) else self.radius
        rows = [("radius (relative remainder <= tolerance)", radius), ("tolerance", self.tolerance),
                ("L, exponent of |r| ~ L rho^p", f"{self.L}, {self.exponent}"), ("method", self.method)]
        return block([heading(f"Validity of the linearization of {self.model!r}"), html_table(rows, row_header=True),
                      preformatted(self.text()), figure_svg(self.plot())])

def _number(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _numbers(values: Array) -> list[float | None]:
    return [_number(float(v)) for v in values]


# --- the analysis --------------------------------------------------------------------------------------
def validity(
    model: ModelContract,
    x_op: Values,
    u_op: Values | None = None,
    *,
    params: Values | None = None,
    tolerance: float = 0.05,
    directions: int = 64,
    radii: ArrayLike | None = None,
    seed: int | None = 0,
    horizon: float | None = None,
    simulate_runs: int = 16,
    feedback: ArrayLike | None = None,
    scale: ArrayLike | None = None,
    sim_radii: ArrayLike | None = None,
    method: str = "auto",
) -> Validity:
    """How far the linearization of ``model`` at (``x_op``, ``u_op``) can be trusted.

    Parameters
    ----------
    model
        Any robodyn model (time-invariant use: everything is evaluated from t = 0).
    x_op, u_op
        The operating point: arrays in model order or ``{name: value}`` mappings (inputs left out are 0).
    params
        Parameter overrides.
    tolerance
        The relative error accepted (> 0).
    directions
        Random unit directions of the joint (dx, du) space, in addition to the 2 (n + m) coordinate axes.
    radii : (R,), optional
        Positive radii, increasing; default :data:`DEFAULT_RADII` (1e-4 .. 1, 25 of them).
    seed
        Seed of the random directions (``None``: fresh randomness).
    horizon
        Length of the simulation test in time units; ``None`` skips it.
    simulate_runs
        Random initial-state directions of the simulation test, in addition to the 2 n state axes.
    feedback : (m, n), optional
        A gain K: the simulations run under u = u* - K (x - x*) (the linear prediction under A - B K).
    scale : (n + m,), optional
        Characteristic sizes s of the states then inputs: radii are the scaled Euclidean norm
        sqrt(sum_i (dz_i / s_i)^2) of the deviation (default all 1: the units mixed as plain numbers).
    sim_radii : (S,), optional
        Initial deviations of the simulation test; default :data:`DEFAULT_SIM_RADII` (1e-3 .. 1).
    method
        The linearization method (see :func:`~robodyn.linearization.linearize.linearize`).

    Returns
    -------
    Validity

    Raises
    ------
    InputError
        A bad option, point or name (:class:`~robodyn.base.errors.UnknownNameError` for unknown names).
    NumericalError
        f is not finite at a sampled point: pass smaller ``radii``.
    """
    require_model(model, "validity")
    require_continuous(model, "validity", "a linear update map is its own linearization (the error is 0)")
    tol = _positive(tolerance, "tolerance")
    grid = _radii(radii, DEFAULT_RADII, "radii")
    model, x, u, p, linear, tangent = sampled_model(model, x_op, u_op, params, method)
    n, m = model.n_states, model.n_inputs
    sizes = _scale(scale, n + m)
    gain = _gain(feedback, m, n)
    run_length = None if horizon is None else _positive(horizon, "horizon")
    rng = np.random.default_rng(_count(seed, "seed") if seed is not None else None)
    steps = _directions(rng, n + m, _count(directions, "directions"))
    assert linear.B is not None
    jacobian = np.hstack([linear.A, linear.B])
    function = _joint_function(model, p)
    z0 = np.concatenate([x, u])
    f0 = function(z0)
    if not np.all(np.isfinite(f0)):
        raise InputError(f"model {model.name!r}: f is not finite at the operating point x = {x.tolist()}, "
                         f"u = {u.tolist()}: choose another point")
    remainder = _Remainder(function, z0, f0, jacobian, float(linear.error_estimate or 0.0), steps * sizes)
    static = _static(remainder, grid, tol)
    notes = list(static.notes)
    affine = bool(np.max(np.abs(f0)) > ROUNDING * (1.0 + np.max(np.abs(jacobian), initial=0.0) * np.max(np.abs(z0))))
    if affine:
        notes.append(f"f(x*, u*) = {f0.tolist()} is not zero: x* is not an equilibrium; the linear prediction "
                     "keeps the constant term (affine model dx' = A dx + B du + f(x*, u*))")
    sim_grid, sim_errors, sim_radius = np.empty(0), np.empty(0), None
    if run_length is not None:
        sim_grid = _radii(sim_radii, DEFAULT_SIM_RADII, "sim_radii")
        runs = _directions(rng, n, _count(simulate_runs, "simulate_runs")) * sizes[:n]
        study = _Simulation(model, linear, x, u, p, f0, gain, run_length, runs, tangent if gain is None else None)
        sim_errors = np.array([study.error(rho) for rho in sim_grid])
        sim_radius, note = _envelope_radius(sim_grid, sim_errors, tol, study.error, SIM_REFINE_STEPS, "simulation")
        if note and affine and sim_radius == 0.0:
            note += "; away from an equilibrium the state drifts whatever the deviation: try a shorter horizon"
        notes += [note] if note else []
    return Validity(model=model.name, x_op=x, u_op=u, method=str(linear.method), tolerance=tol, L=static.L,
                    L_max=static.L_max, exponent=static.exponent, radius=static.radius, radii=grid,
                    errors=static.errors, fit_range=static.fit_range, scale=sizes, linear=static.linear,
                    affine=affine, horizon=run_length, sim_radius=sim_radius, sim_radii=sim_grid,
                    sim_errors=sim_errors, notes=tuple(notes), names=(*model.states, *model.inputs))


# --- the static test -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Remainder:
    """r(dz) = f(z0 + dz) - f0 - J dz along the rows of ``steps`` (D, n + m), unit length before scaling."""

    function: Callable[[Array], Array]  # one point (n + m,) or rows of points (D, n + m)
    z0: Array
    f0: Array
    jacobian: Array
    jacobian_error: float
    steps: Array

    def at(self, rho: float) -> tuple[Array, Array, Array]:
        """Per direction (D,): max|r| as measured, max|r| with rounding set to 0, and max|J dz|."""
        dz = rho * self.steps
        values = self.function(self.z0 + dz)  # every direction in one call
        if not np.all(np.isfinite(values)):
            bad = dz[np.flatnonzero(~np.all(np.isfinite(values), axis=1))[0]]
            raise NumericalError(f"f is not finite at z* + dz with dz = {bad.tolist()} (radius {rho:g}): "
                                 "the model is undefined there; pass smaller radii")
        predicted = dz @ self.jacobian.T
        measured = np.max(np.abs(values - self.f0 - predicted), axis=1)
        linear = np.max(np.abs(predicted), axis=1)
        floor = (ROUNDING * (np.max(np.abs(self.f0)) + np.max(np.abs(values), axis=1) + linear)
                 + JACOBIAN_SAFETY * self.jacobian_error * np.sum(np.abs(dz), axis=1))
        return measured, np.where(measured > floor, measured, 0.0), linear

    def relative(self, rho: float) -> float:
        """max|r| / max|J dz| over the directions at ``rho`` (rounding counts as 0)."""
        _, signal, linear = self.at(rho)
        return _ratio(float(signal.max()), float(linear.max()))


@dataclass(frozen=True, slots=True)
class _Static:
    errors: Array
    L: float | None
    L_max: float
    exponent: float | None
    fit_range: tuple[float, float] | None
    radius: float
    linear: bool
    notes: tuple[str, ...]


def _static(remainder: _Remainder, radii: Array, tolerance: float) -> _Static:
    """Sample the remainder at every radius, fit the power law, find the radius."""
    errors = np.zeros((radii.size, 2))
    signal = np.zeros(radii.size)
    L_max = 0.0
    for k, rho in enumerate(radii):
        measured, cleaned, linear = remainder.at(float(rho))
        signal[k] = cleaned.max()
        errors[k] = _ratio(float(signal[k]), float(linear.max())), measured.max()
        L_max = max(L_max, float(signal[k]) / rho**2)
    if not signal.any():
        linear_note = "the remainder is rounding at every sample: the model is linear here (radius unbounded)"
        return _Static(errors, 0.0, 0.0, None, None, math.inf, True, (linear_note,))
    L, exponent, fit_range = _fit(radii, signal)
    note: str | None
    notes: list[str] = [] if exponent is not None else [
        "fewer than two radii rise above rounding: no power law fitted; pass more radii"]
    radius, note = _envelope_radius(radii, errors[:, 0], tolerance, remainder.relative, REFINE_STEPS, "remainder")
    if radius == 0.0 and not np.any(np.isfinite(errors[:, 0])):
        note = ("the linear part J dz is zero along every sample: the linearization predicts no change, so any "
                "remainder is an error of 100% or more (radius 0)")
    notes += [note] if note else []
    return _Static(errors, L, L_max, exponent, fit_range, radius, False, tuple(notes))


def _fit(radii: Array, envelope: Array) -> tuple[float | None, float | None, tuple[float, float] | None]:
    """Least-squares line through (log rho, log envelope) over the small radii above rounding.

    The window starts at the first radius above rounding and spans FIT_FRACTION of the sampled decades
    (at least three radii): there the leading Taylor term dominates and larger-radius terms do not yet
    bend the line.
    """
    valid = np.flatnonzero(envelope > 0)
    if valid.size < 2:
        return None, None, None
    decades = math.log10(radii[-1] / radii[0]) * FIT_FRACTION
    window = valid[radii[valid] <= radii[valid[0]] * 10**decades * (1 + 1e-12)]
    if window.size < 3:
        window = valid[:3]
    slope, intercept = np.polyfit(np.log(radii[window]), np.log(envelope[window]), 1)
    return float(np.exp(intercept)), float(slope), (float(radii[window[0]]), float(radii[window[-1]]))


def _envelope_radius(radii: Array, errors: Array, tolerance: float, error_at: Callable[[float], float],
                     refinements: int, what: str) -> tuple[float, str | None]:
    """The largest rho with every error up to it <= tolerance (the running max), refined by bisection.

    Returns the radius and a note when it is only a bound (all radii pass, or none).
    """
    passing = np.maximum.accumulate(errors) <= tolerance
    count = int(np.sum(passing))
    if count == radii.size:
        return float(radii[-1]), (f"the {what} error stays within the tolerance up to the largest radius sampled "
                                  f"({radii[-1]:g}): the radius is at least that; pass larger radii")
    if count == 0:
        return 0.0, (f"the {what} error exceeds the tolerance already at the smallest radius ({radii[0]:g}): "
                     "pass smaller radii (or a larger tolerance)")
    low, high = float(radii[count - 1]), float(radii[count])
    for _ in range(refinements):
        middle = math.sqrt(low * high)
        if error_at(middle) <= tolerance:
            low = middle
        else:
            high = middle
    return low, None


# --- the simulation test -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, eq=False)
class _Simulation:
    """Nonlinear trajectories from x* + rho * runs against the linear prediction x* + dx(t)."""

    model: ModelContract
    linear: LinearSystem
    x: Array
    u: Array
    p: Array
    f0: Array
    gain: Array | None
    horizon: float
    runs: Array  # (N, n): initial deviations at rho = 1
    tangent: TangentModel | ReducedModel | None = None  # the robot itself is simulated, from x* (+) dz, compared in z

    def error(self, rho: float) -> float:
        """max over runs of max_t |x_nl - x_lin|_inf / max_t |x_nl - x*|_inf (inf if a run fails)."""
        times = np.linspace(0.0, self.horizon, SIM_POINTS)
        deviations = rho * self.runs
        starts = self.x + deviations  # on a manifold: the robot's own compiled simulation from x* (+) dz
        simulated, starts = (self.model, starts) if self.tangent is None else (self.tangent.robot,
                                                                               self.tangent.stored(starts))
        try:
            nonlinear = simulate(simulated, (0.0, self.horizon), starts, self._inputs(), method="dopri5",
                                 rtol=SIM_RTOL, atol=SIM_ATOL, t_eval=times,
                                 params=dict(zip(self.model.parameters, self.p.tolist())) or None)
        except NumericalError:  # a run that blows up: the linear prediction is certainly off
            return math.inf
        prediction = simulate(self._prediction(), (0.0, self.horizon), deviations, [1.0], method="exact",
                              t_eval=times)
        assert isinstance(nonlinear, BatchTrajectory) and isinstance(prediction, BatchTrajectory)
        states = nonlinear.x if self.tangent is None else self.tangent.coordinates(nonlinear.x)
        gap = np.max(np.abs(states - (self.x + prediction.x)), axis=(1, 2))
        size = np.max(np.abs(states - self.x), axis=(1, 2))
        tiny = ROUNDING * max(1.0, float(np.max(np.abs(self.x))))
        errors = gap / np.maximum(size, tiny)
        return float(np.max(np.where(np.isfinite(errors), errors, math.inf)))

    def _inputs(self) -> Any:
        if self.gain is not None:
            return StateFeedback(self.gain, x_ref=self.x, u_ref=tuple(self.u.tolist()))
        return self.u if self.u.size else None

    def _prediction(self) -> LinearSystem:
        """dx' = (A - B K) dx + f(x*, u*) * 1: the constant term enters as the input ``offset`` = 1."""
        assert self.linear.B is not None
        A = self.linear.A if self.gain is None else self.linear.A - self.linear.B @ self.gain
        return LinearSystem(A, self.f0[:, None], inputs=("offset",), name=f"{self.model.name}_linear")


# --- helpers -------------------------------------------------------------------------------------------
def _joint_function(model: ModelContract, p: Array) -> Callable[[Array], Array]:
    """z = (x, u): (n + m,) -> f(0, x, u, p) (n,), or rows (D, n + m) -> (D, n) in one ``f_many`` call."""
    n = model.n_states

    def function(z: Array) -> Array:
        if z.ndim == 1:
            return model.f_raw(0.0, z[:n], z[n:], p)
        return model.f_many(np.zeros(z.shape[0]), z[:, :n], z[:, n:], p)

    return function


def _directions(rng: np.random.Generator, size: int, count: int) -> Array:
    """The 2 ``size`` coordinate axes (both signs) then ``count`` random unit vectors, (2 size + count, size)."""
    axes = np.eye(size)
    random = rng.standard_normal((count, size))
    random /= np.maximum(np.linalg.norm(random, axis=1, keepdims=True), 1e-300)
    return np.vstack([axes, -axes, random])


def _ratio(numerator: float, denominator: float) -> float:
    if numerator == 0.0:
        return 0.0
    return numerator / denominator if denominator > 0 else math.inf


def _positive(value: Any, label: str) -> float:
    """A tolerance or horizon: a positive finite number."""
    message = "{what} must be a positive finite number, got {number:g}"
    return finite_number(value, label, not_real=A_NUMBER, not_finite=message, positive=message)


def _count(value: Any, label: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise InputError(f"{label} must be a whole number >= 0, got {value!r}")
    return int(value)


def _radii(values: ArrayLike | None, default: Array, label: str) -> Array:
    if values is None:
        return np.array(default, dtype=float)
    try:
        radii = np.array(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"{label} must be numbers, got {values!r}") from None
    if radii.size == 0 or not np.all(np.isfinite(radii)) or np.any(radii <= 0) or np.any(np.diff(radii) <= 0):
        raise InputError(f"{label} must be positive finite numbers in increasing order, got {radii.tolist()}")
    return radii


def _scale(values: ArrayLike | None, size: int) -> Array:
    if values is None:
        return np.ones(size)
    try:
        scale = np.array(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"scale must be {size} numbers (the states then the inputs), got {values!r}") from None
    if scale.shape != (size,):
        raise ShapeError(f"scale has {scale.size} entries, expected {size} (the states then the inputs)")
    if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
        raise InputError(f"scale must be positive finite numbers, got {scale.tolist()}")
    return scale


def _gain(values: ArrayLike | None, m: int, n: int) -> Array | None:
    if values is None:
        return None
    try:
        gain = np.array(values, dtype=float, ndmin=2)
    except (TypeError, ValueError):
        raise InputError(f"feedback must be a gain matrix K of numbers, got {values!r}") from None
    if gain.shape != (m, n):
        raise ShapeError(f"feedback K has shape {gain.shape}, expected ({m}, {n}) (inputs x states)")
    if not np.all(np.isfinite(gain)):
        raise InputError("feedback K has non-finite entries: give finite numbers")
    return gain
