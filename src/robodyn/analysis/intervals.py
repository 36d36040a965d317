"""Rigorous interval enclosures of sympy expressions over boxes.

:func:`enclose` evaluates a sympy expression (in the whitelist of :mod:`robodyn.model.expr`, plus the
``DiracDelta`` and ``Heaviside`` that sympy writes for the derivatives of ``sign``, ``abs``, ``min`` and
``max``) on a box ``{name: (lo, hi)}`` and returns an :class:`Interval` that contains the value of the
expression at every point of the box.

Every operation is done by mpmath's interval library (``mpmath.libmp.mpi_*``) or by mpmath's directed
rounding of monotone functions (``mpf_atan(x, 53, 'f')`` rounds toward -inf), at 53 bits, and the
endpoints are converted to floats rounding outward. So the enclosure is rigorous, not a float estimate
(Moore, Kearfott and Cloud, *Introduction to Interval Analysis*, SIAM 2009, ch. 5). It may be wider than
the true range (the dependency problem: ``x - x`` over [0, 1] would give [-1, 1]; sympy folds that one).

Where a bound does not exist — division by an interval containing 0, a pole of ``tan``, ``log`` or
``sqrt`` of an argument that reaches outside its domain — the result has infinite endpoints and an
:class:`Issue` is recorded saying where and why.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final, TypeAlias

import numpy as np
import sympy
from mpmath import libmp

from robodyn.base.errors import InputError, UnknownNameError

__all__ = ["ENTIRE", "UNSUPPORTED", "Interval", "Issue", "enclose", "round_down", "round_up", "sum_up"]

_PREC: Final = 53  # Bits of the mpmath operations: double precision, so endpoints convert exactly.
_MAX: Final = sys.float_info.max
_INF: Final = math.inf

UNSUPPORTED: Final = "is not supported by interval evaluation"  # In the message of "unsupported" issues.
MPF: TypeAlias = tuple[int, int, int, int]  # mpmath's raw float (sign, mantissa, exponent, bitcount)
MPI: TypeAlias = tuple[MPF, MPF]


@dataclass(frozen=True, slots=True)
class Interval:
    """The closed interval [lo, hi] of the extended reals; ``lo`` may be -inf and ``hi`` +inf."""

    lo: float
    hi: float

    def __post_init__(self) -> None:
        try:
            lo, hi = float(self.lo), float(self.hi)
        except (TypeError, ValueError):
            raise InputError(f"interval endpoints must be numbers, got {self.lo!r} and {self.hi!r}") from None
        if math.isnan(lo) or math.isnan(hi) or lo > hi or lo == _INF or hi == -_INF:
            raise InputError(f"[{lo}, {hi}] is not an interval: need lo <= hi, lo < inf, hi > -inf, no nan")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @classmethod
    def point(cls, value: float) -> Interval:
        """The degenerate interval [value, value]."""
        return cls(value, value)

    @property
    def bounded(self) -> bool:
        """Whether both endpoints are finite."""
        return math.isfinite(self.lo) and math.isfinite(self.hi)

    @property
    def magnitude(self) -> float:
        """max |x| over the interval (exact: no rounding)."""
        return max(abs(self.lo), abs(self.hi))

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int | float) and self.lo <= value <= self.hi

    def __neg__(self) -> Interval:
        return Interval(-self.hi, -self.lo)

    def __add__(self, other: Interval) -> Interval:
        return _from_mpi(libmp.mpi_add(_to_mpi(self), _to_mpi(other), _PREC))

    def __sub__(self, other: Interval) -> Interval:
        return self + (-other)

    def __mul__(self, other: Interval) -> Interval:
        if self == _ZERO or other == _ZERO:  # 0 * (anything real) = 0, even when unbounded
            return _ZERO
        return _from_mpi(libmp.mpi_mul(_to_mpi(self), _to_mpi(other), _PREC))

    def __truediv__(self, other: Interval) -> Interval:
        """Quotient; a divisor containing 0 gives the (possibly half-) infinite hull of the quotients."""
        if other.lo > 0 or other.hi < 0:
            return _from_mpi(libmp.mpi_div(_to_mpi(self), _to_mpi(other), _PREC))
        if other == _ZERO:
            return ENTIRE
        if other.lo == 0:  # (0, hi]: 1/other = [1/hi, inf)
            return self * Interval(_floor(libmp.mpf_div(libmp.fone, _mpf(other.hi), _PREC, "f")), _INF)
        if other.hi == 0:
            return self * Interval(-_INF, _ceil(libmp.mpf_div(libmp.fone, _mpf(other.lo), _PREC, "c")))
        return ENTIRE

    def __str__(self) -> str:
        return f"[{self.lo:.6g}, {self.hi:.6g}]"


ENTIRE: Final = Interval(-_INF, _INF)
_ZERO: Final = Interval(0.0, 0.0)
_ONE: Final = Interval(1.0, 1.0)


@dataclass(frozen=True, slots=True)
class Issue:
    """Why an enclosure is unbounded or the expression is not continuous on the box.

    ``kind`` is ``"unbounded"`` (the value grows without bound near a point of the box), ``"undefined"``
    (an argument leaves a function's domain), ``"jump"`` (a discontinuity inside the box) or
    ``"unsupported"`` (a function the evaluator does not know; enclosed by (-inf, inf)).
    """

    kind: str
    message: str

    def __str__(self) -> str:
        return self.message


# --- conversions with outward rounding --------------------------------------------------------------------
def _mpf(value: float) -> MPF:
    return libmp.from_float(value)


def _floor(value: MPF) -> float:
    """The largest float <= value (exact mpf -> float, rounding toward -inf)."""
    if value == libmp.fnan:
        return -_INF
    result = libmp.to_float(value, rnd="f")
    if math.isinf(result):
        if value in (libmp.finf, libmp.fninf):
            return result
        return _MAX if result > 0 else -_INF  # overflow of a finite value
    if libmp.mpf_gt(_mpf(result), value):  # gradual underflow rounds to nearest
        result = math.nextafter(result, -_INF)
    return result


def _ceil(value: MPF) -> float:
    """The smallest float >= value."""
    if value == libmp.fnan:
        return _INF
    return -_floor(libmp.mpf_neg(value))


def _to_mpi(interval: Interval) -> MPI:
    return _mpf(interval.lo), _mpf(interval.hi)


def _from_mpi(value: MPI) -> Interval:
    lo, hi = _floor(value[0]), _ceil(value[1])
    if lo == _INF or hi == -_INF:  # cannot happen for a real result; stay sound regardless
        return ENTIRE
    return Interval(lo, hi)


def _monotone(x: Interval, function: Callable[..., MPF], increasing: bool = True) -> Interval:
    """Enclosure of a monotone function from its values at the endpoints, rounded outward (and one more ulp:
    :func:`_outward`)."""
    first, second = (x.lo, x.hi) if increasing else (x.hi, x.lo)
    return _outward(Interval(_floor(function(_mpf(first), _PREC, "f")), _ceil(function(_mpf(second), _PREC, "c"))))


def _outward(interval: Interval) -> Interval:
    """``interval`` one ulp wider each side. mpmath's directed rounding of the transcendental functions is not
    always outward: mpf_exp(2**-52, 53, "c") gives 1 + 2**-52, below the true 1 + 2**-52 + 2**-105."""
    return Interval(math.nextafter(interval.lo, -_INF), math.nextafter(interval.hi, _INF))


def _fraction(value: Fraction) -> Interval:
    return Interval(round_down(value), round_up(value))


def _constant(value: MPF) -> Interval:
    """An enclosure of a constant computed to 80 bits (to nearest): one extra ulp of room each side."""
    return Interval(math.nextafter(_floor(value), -_INF), math.nextafter(_ceil(value), _INF))


# --- elementary functions ---------------------------------------------------------------------------------
Result: TypeAlias = tuple[Interval, Issue | None]


def _ok(interval: Interval) -> Result:
    return interval, None


def _issue(interval: Interval, kind: str, message: str) -> Result:
    return interval, Issue(kind, message)


def _exp(x: Interval) -> Result:
    result = _outward(_from_mpi(libmp.mpi_exp(_to_mpi(x), _PREC)))
    return _ok(Interval(max(result.lo, 0.0), result.hi))


def _log(x: Interval) -> Result:
    if x.lo <= 0:
        return _issue(ENTIRE, "undefined", "reaches <= 0, outside the domain of log")
    return _ok(_outward(_from_mpi(libmp.mpi_log(_to_mpi(x), _PREC))))


def _periodic(function: Callable[[MPI, int], MPI]) -> Callable[[Interval], Result]:
    def enclosure(x: Interval) -> Result:
        if not x.bounded:
            return _ok(Interval(-1.0, 1.0))
        result = _outward(_from_mpi(function(_to_mpi(x), _PREC)))  # mpmath finds the extrema inside x
        return _ok(Interval(max(result.lo, -1.0), min(result.hi, 1.0)))

    return enclosure


def _tan(x: Interval) -> Result:
    result = _outward(_from_mpi(libmp.mpi_tan(_to_mpi(x), _PREC))) if x.bounded else ENTIRE
    if not result.bounded:
        return _issue(ENTIRE, "unbounded", "contains a pole of tan (pi/2 + k pi)")
    return _ok(result)


def _arcsine(function: Callable[..., MPF], increasing: bool) -> Callable[[Interval], Result]:
    def enclosure(x: Interval) -> Result:
        if x.lo < -1 or x.hi > 1:
            return _issue(ENTIRE, "undefined", "leaves [-1, 1], the domain of asin and acos")
        return _ok(_monotone(x, function, increasing))

    return enclosure


def _cosh(x: Interval) -> Result:
    magnitude = _abs(x)[0]
    return _ok(_monotone(magnitude, libmp.mpf_cosh))


def _abs(x: Interval) -> Result:
    if x.lo >= 0:
        return _ok(x)
    if x.hi <= 0:
        return _ok(-x)
    return _ok(Interval(0.0, max(-x.lo, x.hi)))


def _sign(x: Interval) -> Result:
    result = Interval(math.copysign(1.0, x.lo) if x.lo else 0.0, math.copysign(1.0, x.hi) if x.hi else 0.0)
    if x.lo < 0 <= x.hi or x.lo <= 0 < x.hi:
        return _issue(result, "jump", "crosses 0, where sign jumps")
    return _ok(result)


def _heaviside(x: Interval) -> Interval:
    """Heaviside (sympy's derivative of max and min): 0 left of 0, 1 right of it, [0, 1] at 0."""
    return Interval(1.0 if x.lo > 0 else 0.0, 0.0 if x.hi < 0 else 1.0)


def _dirac(x: Interval) -> Result:
    if x.lo <= 0 <= x.hi:
        return _issue(Interval(0.0, _INF), "unbounded", "crosses 0, where the function jumps (derivative = delta)")
    return _ok(_ZERO)


FUNCTIONS: Final[Mapping[type, Callable[[Interval], Result]]] = {
    sympy.exp: _exp,
    sympy.log: _log,
    sympy.sin: _periodic(libmp.mpi_sin),
    sympy.cos: _periodic(libmp.mpi_cos),
    sympy.tan: _tan,
    sympy.atan: lambda x: _ok(_monotone(x, libmp.mpf_atan)),
    sympy.asin: _arcsine(libmp.mpf_asin, True),
    sympy.acos: _arcsine(libmp.mpf_acos, False),
    sympy.sinh: lambda x: _ok(_monotone(x, libmp.mpf_sinh)),
    sympy.cosh: _cosh,
    sympy.tanh: lambda x: _ok(_monotone(x, libmp.mpf_tanh)),
    sympy.Abs: _abs,
    sympy.sign: _sign,
    sympy.DiracDelta: _dirac,
}


def _atan2(y: Interval, x: Interval) -> Result:
    """atan2(y, x) in (-pi, pi]: extrema at the corners unless the box meets the origin or the cut."""
    if x.lo <= 0 <= x.hi and y.lo <= 0 <= y.hi:
        return _issue(ENTIRE, "undefined", "contains the origin, where atan2 is undefined")
    if x.lo < 0 and y.lo < 0 <= y.hi:
        pi = Interval(_floor(libmp.mpf_pi(_PREC, "f")), _ceil(libmp.mpf_pi(_PREC, "c")))
        return _issue(Interval(-pi.hi, pi.hi), "jump", "crosses the negative x axis, where atan2 jumps by 2 pi")
    corners = [(_mpf(a), _mpf(b)) for a in (y.lo, y.hi) for b in (x.lo, x.hi)]
    # mpmath's atan2 rounds the quotient y/x before the arctangent, so its directed rounding is not
    # guaranteed: widen by one more ulp outward (found by the soundness property test).
    lows = [math.nextafter(_floor(libmp.mpf_atan2(a, b, _PREC, "f")), -math.inf) for a, b in corners]
    highs = [math.nextafter(_ceil(libmp.mpf_atan2(a, b, _PREC, "c")), math.inf) for a, b in corners]
    return _ok(Interval(min(lows), max(highs)))


def _power(base: Interval, exponent: sympy.Expr, power: Callable[[Interval], Interval]) -> Result:
    """base ** exponent for a constant exponent; ``power`` encloses base ** |exponent| for base >= 0 or
    integer exponents."""
    negative = bool(exponent < 0)
    integer = exponent.is_Integer or (exponent.is_Float and float(exponent).is_integer())
    if not integer and base.lo < 0:
        return _issue(ENTIRE, "undefined", f"reaches < 0, and a negative number to the power {exponent} is not real")
    magnitude = power(base)
    if not negative:
        return _ok(magnitude)
    if magnitude.lo <= 0 <= magnitude.hi:
        issue = "undefined" if magnitude == _ZERO else "unbounded"
        return _issue(_ONE / magnitude, issue, f"contains 0, and it is raised to the negative power {exponent}")
    return _ok(_ONE / magnitude)


# --- the evaluator ----------------------------------------------------------------------------------------
BoxLike: TypeAlias = Mapping[str, Interval | tuple[float, float] | float]


def _box(box: BoxLike) -> dict[str, Interval]:
    result = {}
    for name, value in box.items():
        if isinstance(value, Interval):
            result[str(name)] = value
            continue
        pair = (value, value) if np.ndim(value) == 0 else tuple(np.ravel(value))
        if len(pair) != 2:
            raise InputError(f"box entry {name!r} must be (lo, hi) or a number, got {value!r}")
        result[str(name)] = Interval(*pair)
    return result


def _short(expr: sympy.Basic, limit: int = 60) -> str:
    text = sympy.sstr(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Evaluator:
    """Walks a sympy tree once per distinct sub-expression, collecting issues."""

    def __init__(self, box: dict[str, Interval], issues: list[Issue]):
        self.box = box
        self.issues = issues
        self.memo: dict[sympy.Basic, Interval] = {}

    def __call__(self, expr: sympy.Basic) -> Interval:
        if expr not in self.memo:
            before = len(self.issues)
            result = self._evaluate(expr)
            if not result.bounded and len(self.issues) == before and expr.args and all(
                self.memo[a].bounded for a in expr.args if a in self.memo
            ):
                self.issues.append(Issue("unbounded", f"{_short(expr)}: exceeds the float range on the box"))
            self.memo[expr] = result
        return self.memo[expr]

    def _note(self, result: Result, expr: sympy.Basic, argument: str) -> Interval:
        interval, issue = result
        if issue is not None:
            self.issues.append(Issue(issue.kind, f"{_short(expr)}: {argument} {issue.message}"))
        return interval

    def _evaluate(self, expr: sympy.Basic) -> Interval:
        if expr.is_Symbol:
            if expr.name not in self.box:
                raise UnknownNameError(
                    f"the expression uses {expr.name!r}, which the box does not give: "
                    f"give a range for it (box: {', '.join(self.box) or 'empty'})"
                )
            return self.box[expr.name]
        if expr.is_Number or expr.is_NumberSymbol:
            return self._number(expr)
        if expr.is_Add:
            total = _ZERO
            for term in expr.args:
                total = total + self(term)
            return total
        if expr.is_Mul:
            product = _ONE
            for factor in expr.args:
                product = product * self(factor)
            return product
        if expr.is_Pow:
            return self._pow(expr)
        return self._function(expr)

    def _number(self, expr: sympy.Basic) -> Interval:
        if expr.is_Rational:
            return _fraction(Fraction(int(expr.p), int(expr.q)))
        if expr.is_Float:
            value = expr._mpf_
            return Interval(_floor(value), _ceil(value))
        if expr is sympy.pi:
            return Interval(_floor(libmp.mpf_pi(_PREC, "f")), _ceil(libmp.mpf_pi(_PREC, "c")))
        if expr is sympy.E:
            return Interval(_floor(libmp.mpf_e(_PREC, "f")), _ceil(libmp.mpf_e(_PREC, "c")))
        if expr.is_NumberSymbol:
            return _constant(expr._as_mpf_val(80))
        self.issues.append(Issue("undefined", f"the constant {expr} is not a real number"))
        return ENTIRE  # zoo, nan, oo

    def _pow(self, expr: sympy.Basic) -> Interval:
        base_expr, exponent = expr.args
        base = self(base_expr)
        if exponent.is_Integer or (exponent.is_Float and float(exponent).is_integer()):
            n = abs(int(exponent))
            result = _power(base, exponent, lambda b: _from_mpi(libmp.mpi_pow_int(_to_mpi(b), n, _PREC)))
        elif exponent.is_number and exponent.is_real and exponent.is_finite:
            p = self(abs(exponent))
            if exponent.is_Rational and abs(exponent) == sympy.Rational(1, 2):
                result = _power(base, exponent, lambda b: _from_mpi(libmp.mpi_sqrt(_to_mpi(b), _PREC)))
            else:  # b**p = exp(p log b) for b >= 0 (log 0 = -inf gives exp(-inf) = 0)
                result = _power(base, exponent, lambda b: self._exp_log(b, p))
        else:  # symbolic exponent: exp(exponent * log(base)) needs base > 0
            if base.lo <= 0:
                result = _issue(ENTIRE, "undefined", "reaches <= 0, and it is raised to a variable power")
            else:
                result = _exp(self(exponent) * _from_mpi(libmp.mpi_log(_to_mpi(base), _PREC)))
        return self._note(result, expr, f"{_short(base_expr)} in {base}")

    @staticmethod
    def _exp_log(base: Interval, p: Interval) -> Interval:
        """base ** p for base >= 0 and p > 0 (increasing in base): exp(p log b) at each endpoint."""
        def endpoint(value: float) -> Interval:
            log = _from_mpi(libmp.mpi_log(_to_mpi(Interval.point(value)), _PREC))
            return _exp(log * p)[0]

        if base.hi == 0:
            return _ZERO
        upper = _INF if base.hi == _INF else endpoint(base.hi).hi
        return Interval(0.0 if base.lo == 0 else endpoint(base.lo).lo, upper)

    def _function(self, expr: sympy.Basic) -> Interval:
        func = expr.func
        if func in FUNCTIONS and len(expr.args) >= 1:
            argument = self(expr.args[0])
            return self._note(FUNCTIONS[func](argument), expr, f"{_short(expr.args[0])} in {argument}")
        if func is sympy.atan2:
            y, x = (self(a) for a in expr.args)
            return self._note(_atan2(y, x), expr, f"(y, x) in {y} x {x}")
        if func is sympy.Heaviside:  # jumps of a derivative do not matter for bounds
            return _heaviside(self(expr.args[0]))
        if func in (sympy.Min, sympy.Max):
            values = [self(a) for a in expr.args]
            pick = min if func is sympy.Min else max
            return Interval(pick(v.lo for v in values), pick(v.hi for v in values))
        self.issues.append(Issue("unsupported", f"{_short(expr)}: {func.__name__} {UNSUPPORTED}"))
        return ENTIRE


def enclose(expr: Any, box: BoxLike, issues: list[Issue] | None = None) -> Interval:
    """A rigorous enclosure of ``expr`` over ``box``.

    Parameters
    ----------
    expr
        A sympy expression (or a number).
    box
        ``{name: (lo, hi)}``, ``{name: Interval}`` or ``{name: value}`` for every free symbol of ``expr``
        (symbols are matched by name; ``t`` is a name like any other).
    issues
        If given, a list that receives an :class:`Issue` for each place the enclosure is unbounded, an
        argument leaves a function's domain, or the expression jumps.

    Returns
    -------
    Interval
        Contains ``expr`` at every point of the box where it is defined. Infinite endpoints mean no finite
        bound was found; ``issues`` says why.

    Examples
    --------
    >>> x = sympy.Symbol("x")
    >>> enclose(sympy.sin(x), {"x": (0.1, 3.0)}).hi
    1.0
    """
    if isinstance(expr, str):
        raise InputError("enclose() takes a sympy expression, not text: parse text with "
                         "robodyn.model.expr.parse_expression first")
    if isinstance(expr, bool) or not isinstance(expr, sympy.Basic | int | float):
        raise InputError(f"enclose() takes a sympy expression or a number, got {type(expr).__name__}")
    if not isinstance(expr, sympy.Basic):  # never sympify: numbers become sympy numbers directly
        expr = sympy.Integer(expr) if isinstance(expr, int) else sympy.Float(expr)
    sink: list[Issue] = [] if issues is None else issues
    return _Evaluator(_box(box), sink)(expr)


# --- exact rounding of derived quantities -----------------------------------------------------------------
def round_up(value: Fraction) -> float:
    """The smallest float >= ``value`` (an exact rational)."""
    try:
        nearest = float(value)
    except OverflowError:
        return _INF if value > 0 else -_MAX
    return nearest if Fraction(nearest) >= value else math.nextafter(nearest, _INF)


def round_down(value: Fraction) -> float:
    """The largest float <= ``value``."""
    return -round_up(-value)


def sum_up(values: list[float]) -> float:
    """An upper bound of the exact sum of nonnegative floats (``inf`` if one is infinite)."""
    if any(math.isinf(v) for v in values):
        return _INF
    return round_up(sum((Fraction(v) for v in values), Fraction(0)))
