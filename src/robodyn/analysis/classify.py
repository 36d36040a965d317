"""Classification of a model: order, dimension, linearity, time invariance, forcing, autonomy.

Definitions (for x' = f(t, x, u), or M(q) q'' = Q - c for second-order models):

- **order**: 2 for models written as second-order equations (mechanical, Lagrangian), else 1;
- **dimension**: number of coordinates (order 2) or states (order 1); *scalar* when it is 1;
- **linear**: f is affine in (x, u) — every derivative df/dx, df/du is free of x and u; a term with
  neither (a constant, a function of t) is a forcing term and does not break linearity;
- **time invariant**: t appears neither in f nor in h;
- **homogeneous**: no input enters f and f(t, 0, 0) = 0 — no forcing or source term;
- **autonomous**: x' = f(x): t does not appear in f and no input enters it.

A model is classified exactly from its expressions when it has them (its ``symbolic_form()``,
``method="symbolic"``), else from the matrices of its exact ``linear_model()`` (``"structural"``), else by
sampling f at random points (``"sampled"``, with a counter-example when a property fails). The expression-level
decisions (affine in x and u, t appearing) are :mod:`robodyn.model.kinds.symbolic_form`'s, shared with a model's
``affine_form``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy

from robodyn import display
from robodyn.base.errors import InputError, NumericalError
from robodyn.model.expr import MAX_EXPANDED_TERMS, expanded_terms
from robodyn.model.kinds.symbolic_form import SymbolicForm, expanded, linearity, names_of, time_dependence
from robodyn.model.system import require_model

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["Classification", "classify"]

VERDICTS = ("order", "dimension", "linear", "time_invariant", "homogeneous", "autonomous")


@dataclass(frozen=True, slots=True)
class Classification:
    """What kind of differential equation a model is, with one sentence of reason per verdict.

    Attributes
    ----------
    model : the model's name
    order : 1 or 2
    dimension : number of coordinates (order 2) or states (order 1)
    state_dimension : number of first-order states
    scalar : dimension == 1
    linear, time_invariant, homogeneous, autonomous : the verdicts (module docstring)
    method : ``"symbolic"``, ``"structural"`` or ``"sampled"``
    reasons : verdict name -> sentence naming the term responsible
    counterexample : for sampled verdicts that failed, the points that show it
    """

    model: str
    order: int
    dimension: int
    state_dimension: int
    scalar: bool
    linear: bool
    time_invariant: bool
    homogeneous: bool
    autonomous: bool
    method: str
    reasons: Mapping[str, str]
    counterexample: Mapping[str, Any] | None = field(default=None)

    def __post_init__(self) -> None:
        missing = [v for v in VERDICTS if v not in self.reasons]
        if missing:
            raise ValueError(f"classification without reasons for {missing}")
        object.__setattr__(self, "reasons", MappingProxyType(dict(self.reasons)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (the ``classify --json`` contract)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("reasons", "counterexample")}
        data["reasons"] = dict(self.reasons)
        if self.counterexample is not None:
            data["counterexample"] = dict(self.counterexample)
        return data

    def verdict_texts(self) -> dict[str, str]:
        """Verdict name -> its value in words (``"nonlinear"``, ``"order 2"``), in the order of VERDICTS."""
        return {
            "order": f"order {self.order}",
            "dimension": f"dimension {self.dimension} ({'scalar' if self.scalar else 'vector'})",
            "linear": "linear" if self.linear else "nonlinear",
            "time_invariant": "time-invariant" if self.time_invariant else "time-varying",
            "homogeneous": "homogeneous" if self.homogeneous else "forced",
            "autonomous": "autonomous" if self.autonomous else "not autonomous",
        }

    def _basis_text(self) -> str:
        how = {"symbolic": "from its expressions", "structural": "from its matrices"}
        return f"{self.model}: classified {how.get(self.method, 'by sampling at random points')}"

    def __str__(self) -> str:
        verdicts = self.verdict_texts()
        width = max(map(len, verdicts.values()))
        lines = [self._basis_text()]
        lines += [f"  {verdicts[k]:<{width}}  {self.reasons[k]}" for k in VERDICTS]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The verdicts with their reasons as an HTML table (for Jupyter), and the counterexample if any."""
        verdicts = self.verdict_texts()
        rows = [(k.replace("_", " "), verdicts[k], self.reasons[k]) for k in VERDICTS]
        parts = [display.heading(self._basis_text()),
                 display.html_table(rows, header=("property", "verdict", "reason"), row_header=True)]
        if self.counterexample is not None:
            parts.append(display.preformatted(f"counterexample: {dict(self.counterexample)}"))
        return display.block(parts)


def classify(model: ModelContract, *, samples: int = 16, seed: int = 0) -> Classification:
    """Classify ``model`` (see the module docstring for the definitions).

    Parameters
    ----------
    model
        Any robodyn model.
    samples, seed
        Number of random points and the random seed, used only for models given as plain callables.
    """
    require_model(model, "classify")
    form = model.symbolic_form()
    if form is not None:
        return _classify_symbolic(model, form)
    linear = model.linear_model()
    if linear is not None:
        return _classify_linear(model, linear)
    return _classify_sampled(model, samples, seed)


def _shape_verdicts(model: ModelContract) -> tuple[int, int, dict[str, str]]:
    if model.order == 2:
        n = model.n_states // 2
        coords = ", ".join(model.states[:n])
        reasons = {
            "order": f"written as second-order equations in {coords} (state: coordinates, then velocities)",
            "dimension": f"{n} coordinate{'s' if n > 1 else ''} ({coords}): "
                         + ("a scalar equation" if n == 1 else "a vector system"),
        }
        return 2, n, reasons
    n = model.n_states
    reasons = {
        "order": "written in first-order form x' = f(t, x, u)",
        "dimension": f"{n} state{'s' if n > 1 else ''} ({', '.join(model.states)}): "
                     + ("a scalar equation" if n == 1 else "a vector system"),
    }
    return 1, n, reasons


# --- symbolic ---------------------------------------------------------------------------------------
def _first_term_with(expr: sympy.Expr, symbols: set[sympy.Symbol]) -> sympy.Expr:
    terms = [a for a in sympy.Add.make_args(expanded(expr)) if a.free_symbols & symbols]
    return terms[0] if terms else expr


def _classify_symbolic(model: ModelContract, form: SymbolicForm) -> Classification:
    """From the model's labelled expressions (its ``symbolic_form()``)."""
    order, dimension, reasons = _shape_verdicts(model)
    form = form.expanded()
    linear, reasons["linear"] = linearity(form)
    inputs = set(form.inputs)
    equations = [(e.label, e.expr) for e in form.equations]

    timed = time_dependence(form, outputs=False)
    timed_all = time_dependence(form)
    time_invariant = not timed_all
    if time_invariant:
        reasons["time_invariant"] = "t does not appear in the dynamics or the outputs"
    else:
        label, expr = timed_all[0]
        reasons["time_invariant"] = f"t appears in {label} (term {sympy.sstr(_first_term_with(expr, {form.time}))})"

    forced = [(label, e) for label, e in equations if e.free_symbols & inputs]
    homogeneous = not forced
    if forced:
        label, expr = forced[0]
        used = expr.free_symbols & inputs
        term = _first_term_with(expr, used)
        reasons["homogeneous"] = f"the input {names_of(used)} enters {label} (term {sympy.sstr(term)})"
    else:
        variables = form.variables
        for equation in form.equations:
            label, expr = equation.label, equation.expr
            if equation.role == "mass":
                continue
            rest = expr.subs({s: 0 for s in expr.free_symbols & variables})  # only its own: O(size), not O(n)
            is_zero = rest.is_zero
            if is_zero is None:  # simplify only what is small enough to expand (it expands and cancels)
                is_zero = sympy.simplify(rest).is_zero if expanded_terms(rest) <= MAX_EXPANDED_TERMS else False
            if not is_zero:
                homogeneous = False
                reasons["homogeneous"] = (
                    f"{label} keeps the source term {sympy.sstr(rest)} at x = 0: it is forced"
                )
                break
        else:
            reasons["homogeneous"] = "no input enters the dynamics and f(t, 0) = 0: no forcing term"

    timed_f = bool(timed)
    autonomous = not timed_f and not forced
    if autonomous:
        reasons["autonomous"] = "x' = f(x): neither t nor an input appears in the dynamics"
    elif forced:
        reasons["autonomous"] = f"inputs ({names_of(set().union(*(e.free_symbols & inputs for _, e in forced)))}) "\
                                "make x' depend on t through u(t)"
    else:
        reasons["autonomous"] = f"t appears explicitly in {timed[0][0]}"
    return Classification(
        model.name, order, dimension, model.n_states, dimension == 1, linear, time_invariant, homogeneous,
        autonomous, "symbolic", reasons,
    )


# --- linear -----------------------------------------------------------------------------------------
def _classify_linear(model: ModelContract, linear: Any) -> Classification:
    """From the matrices of the model's exact ``linear_model()``."""
    order, dimension, reasons = _shape_verdicts(model)
    driven = [linear.inputs[j] for j in range(linear.n_inputs) if np.any(linear.B[:, j] != 0)]
    reasons["linear"] = "x' = A x + B u with constant matrices"
    reasons["time_invariant"] = "A, B, C and D are constant"
    if driven:
        reasons["homogeneous"] = f"the input {', '.join(driven)} enters through B"
        reasons["autonomous"] = f"the input {', '.join(driven)} makes x' depend on t through u(t)"
    else:
        reasons["homogeneous"] = "no input enters (B = 0): x' = A x"
        reasons["autonomous"] = "x' = A x: neither t nor an input appears"
    homogeneous = not driven
    return Classification(model.name, order, dimension, model.n_states, dimension == 1, True, True,
                          homogeneous, homogeneous, "structural", reasons)


# --- sampled ----------------------------------------------------------------------------------------
_SAMPLE_RTOL = 1e-9  # Relative mismatch tolerated by the sampled tests (rounding is ~1e-16 per operation).


def _close(a: np.ndarray, b: np.ndarray, *scales: np.ndarray) -> bool:
    scale = sum(float(np.max(np.abs(s), initial=0.0)) for s in scales) + 1e-300
    return float(np.max(np.abs(a - b), initial=0.0)) <= _SAMPLE_RTOL * max(scale, 1e-12)


def _point(model: ModelContract, x: np.ndarray, u: np.ndarray) -> dict[str, float]:
    return {**dict(zip(model.states, x.tolist())), **dict(zip(model.inputs, u.tolist()))}


def _classify_sampled(model: ModelContract, samples: int, seed: int) -> Classification:
    order, dimension, reasons = _shape_verdicts(model)
    rng = np.random.default_rng(seed)
    n, m = model.n_states, model.n_inputs
    p = model.parameter_vector()

    def f(t: float, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        return model.f_raw(t, x, u, p)

    counter: dict[str, Any] | None = None
    linear = time_invariant = inputs_free = source_free = True
    evaluated = 0
    constraints = model.constraints()  # closed loops: around an assembled state (x = 0 may be a singular one)
    origin = np.zeros(n) if constraints is None else constraints.assemble(0.0, np.zeros(n), p, {})
    for _ in range(samples):
        t, t2 = rng.uniform(0.0, 10.0, 2)
        x1, x2 = origin + rng.normal(size=n), origin + rng.normal(size=n)
        u1, u2 = rng.normal(size=m), rng.normal(size=m)
        a, b = rng.uniform(-2.0, 2.0, 2)
        try:
            with np.errstate(all="ignore"):
                f0, f1, f2 = f(t, origin, np.zeros(m)), f(t, x1, u1), f(t, x2, u2)
                combo = f(t, origin + a * (x1 - origin) + b * (x2 - origin), a * u1 + b * u2)
                shifted, other_u = f(t2, x1, u1), f(t, x1, u2)
        except NumericalError:  # a singular point (a linkage laid out straight): like a value that is not finite
            continue
        values = (f0, f1, f2, combo, shifted, other_u)
        if not all(np.all(np.isfinite(v)) for v in values):
            continue
        evaluated += 1
        expected = a * (f1 - f0) + b * (f2 - f0)
        if linear and not _close(combo - f0, expected, combo, f0, a * f1, b * f2):
            linear = False
            counter = {"x1": _point(model, x1, u1), "x2": _point(model, x2, u2), "a": a, "b": b, "t": t,
                       "mismatch": float(np.max(np.abs(combo - f0 - expected)))}
            at = "0" if constraints is None else "x0"  # x0: a state on the constraints, x_i = x0 + d_i
            combined = "a x1 + b x2" if constraints is None else "x0 + a d1 + b d2"
            reasons["linear"] = (
                f"f({combined}) - f({at}) differs from a (f(x1) - f({at})) + b (f(x2) - f({at})) by "
                f"{counter['mismatch']:.3g} at a = {a:.3g}, b = {b:.3g} (see counterexample)"
            )
        if time_invariant and not _close(shifted, f1, shifted, f1):
            time_invariant = False
            reasons["time_invariant"] = f"f changes between t = {t:.4g} and t = {t2:.4g} at the same x and u"
        if m and inputs_free and not _close(other_u, f1, other_u, f1):
            inputs_free = False
            reasons["homogeneous"] = "changing the input changes f: the input forces the system"
        if source_free and not _close(f0, np.zeros(n), f1, f2):
            source_free = False
            if inputs_free:
                reasons["homogeneous"] = f"f(t, 0, 0) = {f0.tolist()} at t = {t:.4g}: a source term forces it"
    if evaluated == 0:
        raise InputError(f"model {model.name!r}: f is not finite at any of {samples} random points: "
                         "cannot classify it by sampling")
    where = f"(sampled at {evaluated} random points)"
    reasons.setdefault("linear", f"f(a x1 + b x2) - f(0) = a (f(x1) - f(0)) + b (f(x2) - f(0)) {where}")
    reasons.setdefault("time_invariant", f"f does not change with t {where}")
    homogeneous = inputs_free and source_free
    reasons.setdefault("homogeneous", f"the input does not change f and f(t, 0, 0) = 0 {where}")
    autonomous = time_invariant and inputs_free
    if autonomous:
        reasons["autonomous"] = f"f depends on neither t nor the input {where}"
    elif not time_invariant:
        reasons["autonomous"] = "f depends explicitly on t " + where
    else:
        reasons["autonomous"] = "the input makes x' depend on t through u(t) " + where
    return Classification(model.name, order, dimension, n, dimension == 1, linear, time_invariant,
                          homogeneous, autonomous, "sampled", reasons, counter)
