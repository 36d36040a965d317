"""A model's dynamics as labelled sympy expressions, and the facts read from them exactly.

:class:`SymbolicForm` is what a model with symbolic equations answers to ``symbolic_form()`` (None for the
others): its time, state and input symbols, every expression of its dynamics with a label that names it in a
sentence (``"the equation for theta''"``) and a role — ``"rate"`` for a right-hand side (a row of x' = f or of
M(q) q'' = Q - c), ``"mass"`` for an entry of M(q) —, its outputs, and why it is linear by construction when it
is. :func:`linearity` and :func:`time_dependence` decide from the expressions whether f is affine in (x, u) and
whether t appears; :func:`robodyn.classify` words its verdicts from them, and a model's ``affine_form`` uses the
same decision.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

import sympy

from robodyn.model.expr import expand_bounded

__all__ = ["Equation", "SymbolicForm", "depends_on", "expanded", "linearity", "names_of", "nonlinear_term",
           "time_dependence"]

Role = Literal["rate", "mass"]


@dataclass(frozen=True, slots=True)
class Equation:
    """One expression of a model's dynamics.

    label : names it in a sentence (``"the mass matrix entry M[0][1]"``, ``"the equation for x'"``)
    expr : the sympy expression
    role : ``"rate"`` (a right-hand side: f_i, or a row of Q - c) or ``"mass"`` (an entry of M(q))
    """

    label: str
    expr: Any
    role: Role = "rate"


@dataclass(frozen=True, slots=True)
class SymbolicForm:
    """x' = f(t, x, u) (or M(q) q'' = Q - c) and y = h as labelled sympy expressions.

    time : the time symbol; states, inputs : the symbols of x ``(n,)`` and u ``(m,)`` in model order
    equations : every expression of the dynamics (:class:`Equation`)
    outputs : (output name, expression) for each output, in model order
    linear_reason : a sentence saying why the dynamics are linear whatever the parameters, or None
    """

    time: Any
    states: tuple[Any, ...]
    inputs: tuple[Any, ...]
    equations: tuple[Equation, ...]
    outputs: tuple[tuple[str, Any], ...]
    linear_reason: str | None = None

    @property
    def variables(self) -> set[Any]:
        """The state and input symbols."""
        return set(self.states) | set(self.inputs)

    def expanded(self) -> SymbolicForm:
        """The same form with each small equation multiplied out (:func:`expanded`), so that cancelling terms
        vanish before anything is decided."""
        equations = tuple(Equation(e.label, expanded(e.expr), e.role) for e in self.equations)
        return SymbolicForm(self.time, self.states, self.inputs, equations, self.outputs, self.linear_reason)


EXPAND_LIMIT: Final = 2000  # Operations up to which expressions are expanded before deciding (cancellation).
PROBES: Final = 3  # Random points at which a dependence is looked for (depends_on).
DIGITS: Final = 40  # Digits of those evaluations: rounding far below CHANGE_RTOL.
CHANGE_RTOL: Final = 1e-25  # A change this small (relative) is rounding of the DIGITS-digit evaluation, not dependence.
SHORT_TEXT: Final = 160  # Characters of an expression written into a sentence; longer ones are described by size.


def expanded(expr: Any) -> Any:
    """``expr`` with products and powers multiplied out, so that cancelling terms vanish (small ones only)."""
    if sympy.count_ops(expr) > EXPAND_LIMIT:
        return expr
    result = expand_bounded(expr)
    return expr if result is None else result


def names_of(symbols: Iterable[Any]) -> str:
    """The symbols' names, sorted and comma-separated."""
    return ", ".join(sorted(str(s) for s in symbols))


def nonlinear_term(expr: Any, variables: set[Any]) -> Any | None:
    """The smallest sub-expression that makes ``expr`` nonlinear in ``variables`` (a best effort), or None."""
    products = []
    for node in sympy.preorder_traversal(expr):
        if not node.free_symbols & variables:
            continue
        if isinstance(node, sympy.Function | sympy.Abs | sympy.sign | sympy.Min | sympy.Max):
            return node
        if isinstance(node, sympy.Pow) and node.exp != 1:
            return node
        if isinstance(node, sympy.Mul) and sum(bool(a.free_symbols & variables) for a in node.args) > 1:
            products.append(node)
    return products[-1] if products else None


def _changes(expr: Any, base: dict[Any, Any], moved: dict[Any, Any]) -> bool:
    """Whether ``expr`` differs at the two points beyond the rounding of a DIGITS-digit evaluation."""
    a, b = (expr.xreplace(point).evalf(DIGITS) for point in (base, moved))
    if not all(value.is_number and value.is_finite for value in (a, b)):
        return True  # undefined at a probe: counted as depending (the structure says it may)
    # compared in DIGITS-digit arithmetic: values beyond the range of a float (x^10000) are fine
    try:
        return bool((abs(a - b) - CHANGE_RTOL * (1 + abs(a) + abs(b))).evalf(DIGITS) > 0)
    except TypeError:  # an undecidable comparison: counted as depending
        return True


def depends_on(expr: Any, symbols: set[Any]) -> set[Any]:
    """The ``symbols`` that ``expr`` depends on *numerically*: among those it contains, each whose change, at
    :data:`PROBES` random points (every free symbol, parameters included, drawn in +-[0.3, 1.7]), changes the value
    evaluated in DIGITS digits by more than CHANGE_RTOL relative. sin(q)^2 + cos(q)^2 does not depend on q."""
    candidates = sorted(expr.free_symbols & symbols, key=str)
    if not candidates:
        return set()
    rng = random.Random(0)  # fixed: the answer is repeatable
    free = sorted(expr.free_symbols, key=str)

    def draw() -> Any:
        return sympy.Float(rng.choice((-1, 1)) * rng.uniform(0.3, 1.7), DIGITS)

    points = [{s: draw() for s in free} for _ in range(PROBES)]
    if not any(_changes(expr, p, {**p, **{s: draw() for s in candidates}}) for p in points):
        return set()  # none of them moves it (checked together first: a large expression is evaluated once each)
    return {s for s in candidates if any(_changes(expr, p, {**p, s: draw()}) for p in points)}


def _short(expr: Any) -> str:
    """``expr`` as text when short enough to read in a sentence, else its size."""
    text = sympy.sstr(expr)
    return text if len(text) <= SHORT_TEXT else f"(an expression of {sympy.count_ops(expr)} operations)"


def linearity(form: SymbolicForm) -> tuple[bool, str]:
    """Whether f is affine in (x, u), with the sentence that says why (or names the term that breaks it).

    A mass-matrix entry must be free of x and u; a rate must have derivatives in x and u free of them, both decided
    numerically (:func:`depends_on`: an entry written with sin(q)^2 + cos(q)^2 is constant). Give the form
    :meth:`SymbolicForm.expanded` so that cancelling terms do not count.
    """
    if form.linear_reason is not None:
        return True, form.linear_reason
    variables = form.variables
    for equation in form.equations:
        label, expr = equation.label, equation.expr
        if equation.role == "mass":
            depends = depends_on(expr, variables)
            if depends:
                return False, f"{label} = {_short(expr)} depends on {names_of(depends)}"
            continue
        for v in sorted(variables & expr.free_symbols, key=str):
            derivative = sympy.diff(expr, v)
            inner = depends_on(derivative, variables)
            if inner:
                term = nonlinear_term(expr, variables) or derivative
                named = depends_on(term, variables) or inner
                return False, f"{_short(term)} in {label} makes it nonlinear in {names_of(named)}"
    return True, "every term is a constant times a state or input, or a forcing term"


def time_dependence(form: SymbolicForm, *, outputs: bool = True) -> list[tuple[str, Any]]:
    """(label, expression) of every equation — and, with ``outputs``, every output — in which t appears."""
    timed = [(e.label, e.expr) for e in form.equations if e.expr.has(form.time)]
    if outputs:
        timed += [(f"the output {name}", expr) for name, expr in form.outputs if expr.has(form.time)]
    return timed
