"""Existence and uniqueness of solutions (Picard–Lindelöf) as numbers: L, M, delta and Picard iterates.

On R = [t0, t0 + T] x B, B = {x : ||x - x0||_inf <= r}, with ||f|| <= M and ||f(t, x) - f(t, y)|| <= L ||x - y||,
x' = f(t, x), x(t0) = x0 has exactly one solution on [t0, t0 + delta], delta = min(T, r / M), the limit of
the Picard iterates; when delta L < 1 the Picard operator is a contraction there (Hairer, Nørsett and
Wanner, *Solving ODEs I*, Thm. I.7.3). A continuous bounded f without a Lipschitz bound still has a
solution on that interval (Peano), not necessarily unique. Norms are infinity norms; for matrices the
induced one, ||J||_inf = max_i sum_j |J_ij|, and L = sup over the box of ||df/dx||_inf.

Models with an explicit symbolic f (SymbolicSystem, LinearSystem, manipulators with at most two
coordinates via adj(M) / det(M)) get rigorous bounds from interval enclosures
(:mod:`robodyn.analysis.intervals`); others get sampled estimates (``rigorous=False``).

x' = sqrt(|x|), x(0) = 0 has two solutions, x = 0 and x = t^2/4 for t >= 0 ((t^2/4)' = t/2 = sqrt(t^2/4)):
f is continuous but df/dx = sign(x) / (2 sqrt(|x|)) is unbounded at 0, and :func:`existence` says
"uniqueness is not guaranteed" (existence by Peano). The Picard iterates from 0 stay at x = 0. See
docs/existence.md for the full discussion; tests/analysis/test_existence.py checks both solutions.

>>> import robodyn
>>> model = robodyn.SymbolicSystem(["x"], None, {"x": "sqrt(abs(x))"})
>>> report = existence(model, [0.0], radius=1.0, horizon=1.0)
>>> report.contraction, "uniqueness is not guaranteed" in report.explanation
(False, True)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import numpy as np
import scipy.integrate
import sympy
from numpy.typing import NDArray

from robodyn.analysis.intervals import UNSUPPORTED, Interval, Issue, enclose, round_down, round_up, sum_up
from robodyn.base.errors import InputError, NumericalError, UnknownNameError
from robodyn.base.numbers import A_NUMBER, finite_number
from robodyn.codegen.printer import numpy_printer
from robodyn.linear.systems import require_continuous
from robodyn.model.expr import TIME
from robodyn.model.system import Model, Values

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["NORM", "Existence", "LipschitzBound", "PicardIterates", "box_around", "existence", "lipschitz",
           "picard"]

NORM: Final = "inf"  # ||x||_inf = max |x_i|; ||J||_inf = max_i sum_j |J_ij| (the induced matrix norm).
SAMPLES: Final = 2000  # Random points of the sampled estimates.
MAX_SYMBOLIC_COORDINATES: Final = 2  # Manipulators up to this size get an explicit M^-1 and interval bounds.
_STEP: Final = float(np.finfo(float).eps ** (1 / 3))  # Central-difference step, relative to max(1, |x_i|).
_BOX_MARGIN: Final = 0.01  # picard(): relative room added to the hull of the iterates for the bound's box.

Array: TypeAlias = NDArray[np.float64]
BoxLike: TypeAlias = Mapping[str, tuple[float, float] | float]


# --- results -------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LipschitzBound:
    """A Lipschitz constant of x -> f(t, x, u) on a box (``box``, times ``t``), in the infinity norm.

    ``L_upper`` is a rigorous bound on sup ||df/dx||_inf from interval enclosures of the Jacobian entries
    (``jacobian`` (n, n, 2): their [lo, hi]); ``inf`` when an enclosure is unbounded (``issues`` says
    where), ``None`` when the model has no symbolic f. ``L_sampled`` is the maximum of ||df/dx||_inf over
    ``samples`` points of the box, a lower estimate. ``method`` is ``"interval"`` or ``"sampled"``.
    """

    L_upper: float | None
    L_sampled: float
    rigorous: bool
    method: str
    samples: int
    box: Mapping[str, tuple[float, float]]
    t: tuple[float, float]
    issues: tuple[str, ...] = ()
    jacobian: Array | None = None
    norm: str = NORM

    def __post_init__(self) -> None:
        n = len(self.box)
        if self.jacobian is not None and self.jacobian.shape != (n, n, 2):
            raise InputError(f"jacobian enclosure has shape {self.jacobian.shape}, expected ({n}, {n}, 2)")
        if self.rigorous != (self.L_upper is not None):
            raise InputError("a LipschitzBound is rigorous exactly when it has L_upper")

    @property
    def L(self) -> float:
        """The constant to use: ``L_upper`` if rigorous, else the sampled estimate."""
        return self.L_upper if self.L_upper is not None else self.L_sampled

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        return result_html(self, "Lipschitz bound of f on the box", plot=False)

@dataclass(frozen=True, slots=True)
class Existence:
    """What Picard–Lindelöf (or Peano) guarantees for x' = f(t, x, u), x(t0) = x0.

    The box is ||x - x0||_inf <= ``radius`` (x0 : (n,)), the times [t0, t0 + ``horizon``]. ``M`` bounds
    ||f||_inf there and ``L`` is the Lipschitz constant in x (infinity norm): proven upper bounds when
    ``rigorous``, sampled maxima otherwise. ``delta = min(horizon, radius / M)`` rounded down (horizon if
    M = 0, 0 if M is unbounded); ``contraction``: delta L < 1. ``exists`` / ``unique``: whether a solution
    on [t0, t0 + delta] is guaranteed and unique. ``lipschitz`` holds the computation behind L.
    """

    x0: Array
    radius: float
    t0: float
    horizon: float
    M: float
    L: float
    delta: float
    contraction: bool
    exists: bool
    unique: bool
    rigorous: bool
    explanation: str
    lipschitz: LipschitzBound

    def __post_init__(self) -> None:
        if self.x0.shape != (len(self.lipschitz.box),):
            raise InputError(f"x0 has shape {self.x0.shape}, expected ({len(self.lipschitz.box)},)")

    def to_dict(self) -> dict[str, float | bool | str | None]:
        """``{"L", "M", "delta", "contraction", "rigorous", "explanation"}``; infinite values become ``None``
        (JSON null: no finite bound exists)."""
        def number(value: float) -> float | None:
            return float(value) if math.isfinite(value) else None

        return {"L": number(self.L), "M": number(self.M), "delta": number(self.delta),
                "contraction": bool(self.contraction), "rigorous": bool(self.rigorous),
                "explanation": self.explanation}

    def _repr_html_(self) -> str:
        from robodyn.display import block, heading, html_table, note

        rows = [("M (bound on |f|)", self.M), ("L (Lipschitz constant)", self.L), ("delta [s]", self.delta),
                ("contraction (delta L < 1)", self.contraction), ("rigorous", self.rigorous)]
        return block([heading("Picard-Lindelof: existence and uniqueness"), html_table(rows, row_header=True),
                      note(self.explanation)])

@dataclass(frozen=True, slots=True)
class PicardIterates:
    """Picard iterates on a uniform grid ``t`` (G,) and how fast they approach each other.

    ``iterates`` (K+1, G, n): x_0 = x0, x_{k+1} = x0 + int f(s, x_k(s)) ds; last axis ordered like
    ``states``. ``differences`` (K,): max_t ||x_{k+1} - x_k||_inf. ``apriori`` (K,): the contraction
    estimate (L T)^k differences[0], T = t1 - t0; ``apriori_factorial`` (K,): the classical sharper
    (L T)^k / k! differences[0], valid without contraction. L comes from ``bound`` = :func:`existence` on a
    box holding every iterate (their hull, 1% wider), so it applies on all of [t0, t1] even where
    ``bound.delta`` < T. ``quadrature_error``: the largest Richardson estimate |S_h - S_2h| / 15 of one
    integration.
    """

    t: Array
    iterates: Array
    differences: Array
    apriori: Array
    apriori_factorial: Array
    quadrature_error: float
    bound: Existence
    states: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        K1, G, n = self.iterates.shape
        if self.t.shape != (G,) or n != len(self.states):
            raise InputError(f"iterates {self.iterates.shape} do not match t {self.t.shape} and {self.states}")
        for name in ("differences", "apriori", "apriori_factorial"):
            if getattr(self, name).shape != (K1 - 1,):
                raise InputError(f"{name} has shape {getattr(self, name).shape}, expected ({K1 - 1},)")


# --- the problem: model, box, time, inputs, parameters ------------------------------------------------------

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        return result_html(self, "Picard iterates", units={"t": "s"})

@dataclass(frozen=True, slots=True)
class _Form:
    """An explicit symbolic right-hand side f (n, 1) and the symbols it is written in."""

    f: sympy.Matrix
    states: tuple[sympy.Symbol, ...]
    inputs: tuple[sympy.Symbol, ...]
    parameters: tuple[sympy.Symbol, ...]
    jacobian: sympy.Matrix

    def vectorized(self, exprs: list[sympy.Expr]) -> Callable[[Array, Array, Array, Array], Array]:
        """``fn(t (S,), x (S, n), u, p) -> (S, len(exprs))``, NaN where undefined."""
        exprs = [e.replace(sympy.DiracDelta, lambda *a: sympy.S.Zero)  # zero off the jump
                 .replace(sympy.Derivative, lambda *a: sympy.nan) for e in exprs]  # sympy could not differentiate
        arguments = (TIME, self.states, self.inputs, self.parameters)
        try:
            raw = sympy.lambdify(arguments, exprs, modules="numpy", printer=numpy_printer(), dummify=True)
        except TypeError:  # robodyn's printer writes Heaviside as a Piecewise whose condition sympy simplifies, and
            # sympy refuses a condition that orders a non-real constant (x > asin(2)): numpy's heaviside instead
            raw = sympy.lambdify(arguments, exprs, modules=[{"Heaviside": _heaviside}, "numpy"], dummify=True)

        def evaluate(t: Array, x: Array, u: Array, p: Array) -> Array:
            with np.errstate(all="ignore"):
                values = raw(t, x.T, u, p)
            return np.stack([np.broadcast_to(np.asarray(v, dtype=float), t.shape) for v in values], axis=1)

        return evaluate


def _heaviside(x: Array, at_zero: float = 0.5) -> Array:
    """sympy's Heaviside (1/2 at 0 unless told) on arrays."""
    return np.heaviside(x, at_zero)


def _form(model: ModelContract) -> _Form | None:
    """The explicit symbolic f of ``model``, or ``None`` when only sampling is possible."""
    form = model.explicit_form(MAX_SYMBOLIC_COORDINATES)
    if form is None:
        return None
    return _Form(form.f, tuple(form.x), tuple(form.u), tuple(form.p), form.jacobian)


@dataclass(frozen=True, slots=True)
class _Problem:
    model: ModelContract
    lo: Array
    hi: Array
    t: tuple[float, float]
    u: Array
    p: Array
    form: _Form | None

    def interval_box(self) -> dict[str, Interval]:
        box = {s: Interval(a, b) for s, a, b in zip(self.model.states, self.lo, self.hi)}
        box.update({s: Interval.point(v) for s, v in zip(self.model.inputs, self.u)})
        box.update({s: Interval.point(v) for s, v in zip(self.model.parameters, self.p)})
        box[TIME.name] = Interval(*self.t)
        return box

    def samples(self, count: int, seed: int) -> tuple[Array, Array]:
        """Times (S,) and states (S, n): the box's center first, then uniform random points."""
        rng = np.random.default_rng(seed)
        x = rng.uniform(self.lo, self.hi, size=(count, self.lo.size))
        t = rng.uniform(*self.t, size=count)
        x[0], t[0] = (self.lo + self.hi) / 2, self.t[0]
        return t, x

    def f_many(self) -> Callable[[Array, Array], Array]:
        """``fn(t (S,), x (S, n)) -> (S, n)``: f at many points."""
        if self.form is not None:
            vectorized = self.form.vectorized(list(self.form.f))
            return lambda t, x: vectorized(t, x, self.u, self.p)
        return lambda t, x: np.array([self.model.f(ti, xi, self.u, self.p) for ti, xi in zip(t, x)])

    def _f_at(self, t: float, x: Array) -> Array:
        return self.model.f(t, x, self.u, self.p)

    def jacobian_norms(self, t: Array, x: Array) -> Array:
        """||df/dx||_inf at each sample (exact where the model has Jacobians; central differences else)."""
        n = self.lo.size
        if self.form is not None:
            entries = self.form.vectorized(list(self.form.jacobian))(t, x, self.u, self.p)
            return np.sum(np.abs(entries.reshape(-1, n, n)), axis=2).max(axis=1)
        if self.model.jacobian_method is not None:
            jac = [self.model.jacobians_raw(float(ti), xi, self.u, self.p)[0] for ti, xi in zip(t, x)]
        else:
            jac = [_central(functools.partial(self._f_at, ti), xi) for ti, xi in zip(t, x)]
        return np.array([np.abs(j).sum(axis=1).max() for j in jac])


def _central(function: Callable[[Array], Array], point: Array) -> Array:
    """Jacobian by central differences with the step eps^(1/3) max(1, |x_i|) (error O(step^2))."""
    columns = []
    for i in range(point.size):
        step = np.zeros(point.size)
        step[i] = _STEP * max(1.0, abs(point[i]))
        columns.append((np.asarray(function(point + step)) - np.asarray(function(point - step))) / (2 * step[i]))
    return np.stack(columns, axis=1)


def _pair(value: Any, label: str) -> tuple[float, float]:
    """(lo, hi) from a pair or a number, finite, lo <= hi."""
    items = [value, value] if np.ndim(value) == 0 else list(np.ravel(value))
    try:
        lo, hi = (float(v) for v in items)
    except (TypeError, ValueError):
        raise InputError(f"{label} must be (lo, hi) or a number, got {value!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise InputError(f"{label} = ({lo}, {hi}) is not finite: give finite bounds")
    if lo > hi:
        raise InputError(f"{label} = ({lo}, {hi}) has lo > hi: swap them")
    return lo, hi


def _check_box(model: ModelContract, box: BoxLike) -> tuple[Array, Array]:
    if not isinstance(box, Mapping):
        raise InputError(f"box must map state names to (lo, hi), got {type(box).__name__}: use box_around()")
    lo, hi = np.empty(model.n_states), np.empty(model.n_states)
    index = {s: i for i, s in enumerate(model.states)}
    for name, value in box.items():
        if name not in index:
            raise UnknownNameError(f"box names {name!r}, which is not a state (states: {', '.join(model.states)})")
        a, b = _pair(value, f"box[{name!r}]")
        lo[index[name]], hi[index[name]] = a, b
    missing = [s for s in model.states if s not in box]
    if missing:
        raise InputError(f"box gives no range for state(s) {', '.join(missing)}: give (lo, hi) for every state")
    return lo, hi


def _positive(value: Any, label: str) -> float:
    """A radius or horizon: a positive finite number (or an array of one)."""
    message = "{what} must be positive and finite, got {number}"
    return finite_number(value, label, not_real=A_NUMBER, not_finite=message, positive=message, arrays=True)


def _problem(model: ModelContract, box: BoxLike, u: Values | None, params: Values | None,
             t: float | tuple[float, float]) -> _Problem:
    if not isinstance(model, Model):
        raise InputError(f"expected a robodyn model, got {type(model).__name__}")
    require_continuous(model, "existence analysis", "the solution of a difference equation exists and is unique by "
                       "construction (Picard-Lindelof concerns differential equations)")
    lo, hi = _check_box(model, box)
    return _Problem(model, lo, hi, _pair(t, "time interval t"), model.input_vector(u),
                    model.parameter_vector(params), _form(model))


def box_around(model: ModelContract, x0: Values, radius: float) -> dict[str, tuple[float, float]]:
    """The box {x : ||x - x0||_inf <= radius} as ``{state: (lo, hi)}`` (rounded outward)."""
    center = model.state_vector(x0)
    r = _positive(radius, "radius")
    return {s: (round_down(Fraction(c) - Fraction(r)), round_up(Fraction(c) + Fraction(r)))
            for s, c in zip(model.states, center.tolist())}


# --- Lipschitz constant and bound on f -------------------------------------------------------------------
def _enclose_all(exprs: sympy.Matrix, box: dict[str, Interval]) -> tuple[list[Interval], list[Issue]]:
    issues: list[Issue] = []
    return [enclose(e, box, issues) for e in exprs], issues


def _messages(issues: list[Issue]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(i) for i in issues))  # unique, in order


def _lipschitz(problem: _Problem, samples: int, seed: int) -> LipschitzBound:
    if isinstance(samples, bool) or not isinstance(samples, int | np.integer) or samples < 1:
        raise InputError(f"samples must be a positive integer, got {samples!r}")
    t, x = problem.samples(int(samples), seed)
    with np.errstate(all="ignore"):  # only points where f is defined count (numpy may not say where it is not)
        defined = np.all(np.isfinite(problem.f_many()(t, x)), axis=1)
    norms = problem.jacobian_norms(t[defined], x[defined])
    norms = norms[~np.isnan(norms)]
    sampled = float(norms.max()) if norms.size else math.nan
    box = MappingProxyType({s: (float(a), float(b)) for s, a, b in zip(problem.model.states, problem.lo, problem.hi)})
    if problem.form is None:
        return LipschitzBound(None, sampled, False, "sampled", int(samples), box, problem.t)
    n = problem.lo.size
    entries, issues = _enclose_all(problem.form.jacobian, problem.interval_box())
    upper = max(sum_up([entries[i * n + j].magnitude for j in range(n)]) for i in range(n))
    jacobian = np.array([[e.lo, e.hi] for e in entries]).reshape(n, n, 2)
    # A jump of df/dx (a kink of f, like |x| at 0) does not spoil a Lipschitz bound; unbounded entries do.
    issues = [] if math.isfinite(upper) else [i for i in issues if i.kind != "jump"]
    return LipschitzBound(upper, sampled, True, "interval", int(samples), box, problem.t, _messages(issues), jacobian)


def lipschitz(
    model: ModelContract,
    box: BoxLike,
    u: Values | None = None,
    params: Values | None = None,
    *,
    t: float | tuple[float, float] = 0.0,
    samples: int = SAMPLES,
    seed: int = 0,
) -> LipschitzBound:
    """A Lipschitz constant of x -> f(t, x, u) on ``box`` in the infinity norm: sup ||df/dx||_inf.

    Parameters
    ----------
    model
        Any robodyn model.
    box
        ``{state: (lo, hi)}`` for every state (a number: a degenerate range); see :func:`box_around`.
    u, params
        Constant inputs (0 where not given) and parameter overrides.
    t
        A time or a time interval (t0, t1) the bound must hold over.
    samples, seed
        Random points of the sampled estimate (the box's center is always one).

    Returns
    -------
    LipschitzBound
        ``L_upper`` (rigorous) for models with a symbolic f; ``L_sampled`` always.

    Examples
    --------
    >>> import robodyn
    >>> lipschitz(robodyn.SymbolicSystem(["x"], None, {"x": "-2*x"}), {"x": (-1.0, 1.0)}).L_upper
    2.0
    """
    return _lipschitz(_problem(model, box, u, params, t), samples, seed)


def _sup_f(problem: _Problem, samples: int, seed: int) -> tuple[float, bool, tuple[str, ...]]:
    """sup ||f||_inf over the box: (bound, continuity established, issues)."""
    if problem.form is None:
        t, x = problem.samples(samples, seed + 1)
        values = np.abs(problem.f_many()(t, x))
        return (float(values.max()) if np.all(np.isfinite(values)) else math.inf), True, ()
    enclosures, issues = _enclose_all(problem.form.f, problem.interval_box())
    bound = max(e.magnitude for e in enclosures)
    return bound, not issues, _messages(issues)


# --- existence ----------------------------------------------------------------------------------------------
def existence(
    model: ModelContract,
    x0: Values,
    radius: float,
    horizon: float = 1.0,
    u: Values | None = None,
    params: Values | None = None,
    *,
    t0: float = 0.0,
    samples: int = SAMPLES,
    seed: int = 0,
) -> Existence:
    """Picard–Lindelöf on the box ||x - x0||_inf <= radius over [t0, t0 + horizon], with numbers.

    ``x0`` is an array (n,) or a mapping; ``radius`` and ``horizon`` are positive; ``u``, ``params``,
    ``samples`` and ``seed`` as for :func:`lipschitz`. Returns M, L, delta = min(horizon, radius / M),
    ``contraction`` (delta L < 1) and an explanation; ``to_dict()`` gives the CLI's JSON.

    Examples
    --------
    >>> import robodyn
    >>> report = existence(robodyn.SymbolicSystem(["x"], None, {"x": "-2*x"}), [1.0], radius=0.5)
    >>> report.M, report.L, report.contraction
    (3.0, 2.0, True)
    """
    center = model.state_vector(x0) if isinstance(model, Model) else None
    if center is None:
        raise InputError(f"expected a robodyn model, got {type(model).__name__}")
    r, T = _positive(radius, "radius"), _positive(horizon, "horizon")
    start = float(t0)
    if not math.isfinite(start):
        raise InputError(f"t0 must be finite, got {t0}")
    problem = _problem(model, box_around(model, center, r), u, params, (start, start + T))
    bound = _lipschitz(problem, samples, seed)
    M, continuous, f_issues = _sup_f(problem, samples, seed)
    L = bound.L
    if M == 0:
        delta = T
    elif math.isinf(M):
        delta = 0.0
    else:
        delta = min(T, round_down(Fraction(r) / Fraction(M)))
    exists = continuous and math.isfinite(M)
    unique = exists and math.isfinite(L)
    product = round_up(Fraction(delta) * Fraction(L)) if unique else math.inf
    contraction = unique and product < 1
    numbers = {"t0": start, "r": r, "T": T, "M": M, "L": L, "delta": delta, "dL": product}
    text = _explain(numbers, bound, f_issues, continuous)
    if not bound.rigorous:
        text = (f"estimated from {bound.samples} random samples, not proven (the model has no symbolic "
                f"right-hand side to bound with interval arithmetic): {text}")
    return Existence(center, r, start, T, M, L, delta, contraction, exists, unique, bound.rigorous, text, bound)


def _explain(v: dict[str, float], bound: LipschitzBound, f_issues: tuple[str, ...], continuous: bool) -> str:
    """The verdict of :func:`existence` in words; ``v`` holds t0, r, T, M, L, delta and dL (delta L)."""
    M, L = v["M"], v["L"]
    if math.isinf(M):
        return (f"no finite bound on |f| over the box ({'; '.join(f_issues) or 'not found'}): neither Peano's "
                "nor the Picard-Lindelof theorem applies on this box; try a smaller radius")
    if not continuous:
        return (f"f is not continuous on the box ({'; '.join(f_issues)}): neither Peano's nor the Picard-Lindelof "
                "theorem applies, and uniqueness is not guaranteed; try a box that avoids it")
    interval = f"[{v['t0']:g}, {v['t0'] + v['delta']:.6g}] with delta = " + (
        f"horizon = {v['delta']:.6g} (f = 0)" if M == 0 else
        f"min(horizon, radius/M) = min({v['T']:g}, {v['r']:g}/{M:.6g}) = {v['delta']:.6g}")
    if not math.isfinite(L) and any(UNSUPPORTED in i for i in bound.issues):
        return (f"no Lipschitz bound could be proven on the box ({'; '.join(bound.issues)}), so uniqueness is not "
                f"guaranteed; a solution exists on {interval} by Peano's theorem (f is continuous, |f| <= M)")
    if not math.isfinite(L):
        why = "; ".join(bound.issues) or "the sampled Jacobian is not finite"
        return (f"f is not Lipschitz near x0 (df/dx unbounded: {why}; sampled max ||df/dx|| = {bound.L_sampled:.6g})"
                f", so uniqueness is not guaranteed; a solution exists on {interval} by Peano's theorem, because f "
                f"is continuous and |f| <= M = {M:.6g} on the box")
    head = (f"a unique solution exists on {interval} (|f| <= M = {M:.6g} and f is Lipschitz with L = {L:.6g} "
            "in the infinity norm on the box)")
    if v["dL"] < 1:
        return f"{head}; the Picard operator is a contraction on that interval because delta L = {v['dL']:.6g} < 1"
    shorter = f"; it contracts on intervals shorter than 1/L = {1 / L:.6g}" if L > 0 else ""
    return (f"{head}; the Picard operator is not a contraction in the sup norm on that interval because "
            f"delta L = {v['dL']:.6g} >= 1, but its iterates still converge (||x_(k+1) - x_k|| <= "
            f"M delta (L delta)^k / k!){shorter}")


# --- Picard iterates ----------------------------------------------------------------------------------------
def _span(t_span: Any) -> tuple[float, float]:
    start, stop = _pair((0.0, t_span) if np.ndim(t_span) == 0 else t_span, "t_span")
    if not stop > start:
        raise InputError(f"t_span ({start}, {stop}) must have t1 > t0")
    return start, stop


def _count(value: Any, label: str, smallest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < smallest:
        raise InputError(f"{label} must be an integer >= {smallest}, got {value!r}")
    return int(value)


def picard(
    model: ModelContract,
    x0: Values,
    t_span: float | tuple[float, float],
    iterations: int = 5,
    u: Values | None = None,
    params: Values | None = None,
    grid: int = 201,
) -> PicardIterates:
    """The Picard iterates x_{k+1}(t) = x0 + int_{t0}^{t} f(s, x_k(s), u) ds on a uniform grid.

    ``t_span`` is (t0, t1) or t1 (t0 = 0); ``iterations`` is K; ``grid`` is G >= 5 points; ``u`` and
    ``params`` as for :func:`lipschitz`. The integrals are cumulative Simpson sums
    (``scipy.integrate.cumulative_simpson``), exact for quadratic integrands, with error O(h^4) times the
    third and fourth derivatives of s -> f(s, x_k(s)) otherwise (h = (t1 - t0) / (G - 1));
    ``quadrature_error`` reports the Richardson estimate of the largest one.
    """
    center = model.state_vector(x0) if isinstance(model, Model) else None
    if center is None:
        raise InputError(f"expected a robodyn model, got {type(model).__name__}")
    t0, t1 = _span(t_span)
    K, G = _count(iterations, "iterations", 1), _count(grid, "grid", 5)
    problem = _problem(model, {s: (v, v) for s, v in zip(model.states, center)}, u, params, (t0, t1))
    t = np.linspace(t0, t1, G)
    iterates = np.empty((K + 1, G, center.size))
    iterates[0] = center
    quadrature, f = 0.0, problem.f_many()
    for k in range(K):
        values = f(t, iterates[k])
        if not np.all(np.isfinite(values)):
            raise NumericalError(f"f is not finite along Picard iterate {k}: shorten t_span or check the model")
        fine = scipy.integrate.cumulative_simpson(values, x=t, axis=0, initial=0.0)
        coarse = scipy.integrate.cumulative_simpson(values[::2], x=t[::2], axis=0, initial=0.0)
        quadrature = max(quadrature, float(np.max(np.abs(fine[::2] - coarse))) / 15)
        iterates[k + 1] = center + fine
    differences = np.max(np.abs(np.diff(iterates, axis=0)), axis=(1, 2))
    spread = float(np.max(np.abs(iterates - center)))
    radius = spread * (1 + _BOX_MARGIN) + 1e-9 * (1 + float(np.max(np.abs(center))))
    bound = existence(model, center, radius, t1 - t0, u, params, t0=t0)
    apriori, factorial = _estimates(bound.L * (t1 - t0), float(differences[0]), K)
    return PicardIterates(t, iterates, differences, apriori, factorial, quadrature, bound, model.states)


def _estimates(rate: float, first: float, count: int) -> tuple[Array, Array]:
    """first (LT)^k and first (LT)^k / k! for k < count (``rate`` = L T)."""
    if first == 0:
        return np.zeros(count), np.zeros(count)
    if not math.isfinite(rate):
        return np.full(count, math.inf), np.full(count, math.inf)
    with np.errstate(over="ignore"):
        powers = first * np.power(rate, np.arange(count, dtype=float))
    factorial = [first]
    for k in range(1, count):
        factorial.append(factorial[-1] * rate / k)
    return powers, np.array(factorial)
