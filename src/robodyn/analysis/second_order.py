"""Closed-form response of one joint, J q'' + b q' + k q = g u(t), for every regime.

:func:`second_order` takes the coefficients (or a single-coordinate
:class:`~robodyn.model.kinds.mechanical.MechanicalSystem`) and returns a :class:`SecondOrder`: natural
frequency, damping ratio, damped frequency, regime and the characteristic roots, computed without
cancellation. :meth:`SecondOrder.response` gives q(t) and q'(t) for initial values and an input built
from constants, steps (also delayed), ramps (also delayed) and sines with offsets, and sums of these.

The mathematics
---------------
With a = b / (2J), c = k / J and D = a^2 - c (the discriminant over 4) the roots of
J s^2 + b s + k are s = -a +- sqrt(D). The solution is a homogeneous part, whose constants C1, C2 are
reported in the basis of the regime,

====================  ==============================================  ============================
regime                homogeneous part                                 roots (``SecondOrder.roots``)
====================  ==============================================  ============================
underdamped           exp(-a t) (C1 cos(wd t) + C2 sin(wd t))          -a + i wd, -a - i wd
critically damped     exp(-a t) (C1 + C2 t)                            -a, -a (D = 0)
overdamped            C1 exp(s1 t) + C2 exp(s2 t)                      s1 > s2, both real
no restoring force    C1 + C2 exp(-(b/J) t)    (k = 0, b != 0)         0, -b/J
pure inertia          C1 + C2 t                (k = 0, b = 0)          0, 0
====================  ==============================================  ============================

(an unstable joint, k < 0 or b < 0, uses the row matching its roots), plus a particular solution by
undetermined coefficients (Boyce & DiPrima, *Elementary Differential Equations*, sec. 3.5): for
u = p0 + p1 t it is affine in t (quadratic when k = 0, cubic when also b = 0); for
A sin(w t + phi) it is Im(A e^{i phi} e^{i w t} / P(i w)) with P(s) = s^2 + 2 a s + c, and at
resonance (b = 0, w = omega_n) it grows like -A t cos(w t + phi) / (2 w).

Evaluation is not done through these formulas, which cancel catastrophically near zeta = 1
(C1, C2 ~ 1/(s1 - s2)), near resonance (the particular solution ~ 1/P(i w)) and for small k
(~ 1/k). Every piece is instead written through divided differences of z -> exp(z t) over the
roots (Laplace: 1/((s - x0)...(s - xn)) <-> exp_t[x0, ..., xn]):

- free motion: q = q0 E + (qd0 + a q0) F with E = (exp(s1 t) + exp(s2 t)) / 2 and
  F = exp_t[s1, s2] (= exp(-a t) sin(wd t)/wd, t exp(-a t), exp(-a t) sinh(w t)/w: one smooth function);
- from rest, a constant p: p exp_t[0, s1, s2]; a ramp p t: p exp_t[0, 0, s1, s2]; a sine
  Im(A e^{i phi} e^{i w t}): Im(A e^{i phi} exp_t[i w, s1, s2]); a delayed step or ramp: the same
  response started at t0 (superposition).

Those divided differences are entire functions of the nodes. They are evaluated by a Taylor series
around the nodes' centre when the nodes are within ``TAYLOR_RADIUS / t`` of it and by the recurrence
over the two farthest nodes otherwise (McCurdy, Ng & Parlett, "Accurate computation of divided
differences of the exponential function", Math. Comp. 43, 1984), to ~1e-14 of max|exp(x_i t)| t^n / n!
for any nodes, coincident or not. Regime boundaries (zeta = 1, k = 0, resonance) are therefore
removable points, not special cases; the regime only selects the basis in which C1, C2 are reported
(within :data:`~robodyn.model.kinds.mechanical.CRITICAL_DAMPING_TOLERANCE` of zeta = 1 the critical basis,
while ``roots`` stays the computed, nearly equal, pair).
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeAlias, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError, ShapeError
from robodyn.base.numbers import frozen
from robodyn.model.kinds.mechanical import ScalarDamping
from robodyn.model.system import Model, Values
from robodyn.signals.core import (
    Constant,
    FunctionSignal,
    Ramp,
    Scaled,
    Signal,
    Sine,
    Step,
    Sum,
    finite_number,
    is_real_number,
    time_array,
)

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = [
    "RESONANCE_TOLERANCE",
    "Response",
    "SecondOrder",
    "exp_divided_difference",
    "second_order",
]

Array: TypeAlias = NDArray[np.float64]
ComplexArray: TypeAlias = NDArray[np.complex128]

TAYLOR_RADIUS: Final = 1.0  # Max |x_i - centre| * t for the Taylor series of exp_t[x0..xn]; beyond, recurrence.
TAYLOR_TERMS: Final = 20  # Series terms; the remainder at the radius is below 1/21! ~ 2e-20 of the sum.
#: |P(i w)| / max(|k/J|, w^2) at or below this reports the sine's particular solution as resonant
#: (t cos): 2*pi*(omega_n/(2*pi)) differs from omega_n by an ulp. Only the description and C1, C2 use it.
RESONANCE_TOLERANCE: Final = 1e-12
NO_CLOSED_FORM: Final = "{what} has no closed form: use robodyn.simulate(model, t_span, x0, u, method='exact')"


# --- divided differences of exp ------------------------------------------------------------------------
def exp_divided_difference(nodes: Sequence[complex] | NDArray[np.complex128], t: Array) -> ComplexArray:
    """exp_t[x0, ..., xn], the divided difference of z -> exp(z t) over ``nodes``, at each time.

    Nodes may coincide (confluent divided differences: exp_t[x, x] = t exp(x t)).

    Parameters
    ----------
    nodes : (n+1,)
        Complex nodes x_i.
    t : (N,)
        Times (any sign).

    Returns
    -------
    (N,) complex
    """
    x = np.asarray(nodes, dtype=complex)
    n = x.size - 1
    if n == 0:
        return np.exp(x[0] * t)
    centre = complex(x.mean())
    offsets = x - centre
    near = float(np.max(np.abs(offsets))) * np.abs(t) <= TAYLOR_RADIUS
    out = np.empty(t.shape, dtype=complex)
    if near.any():
        out[near] = _exp_taylor(offsets, centre, t[near])
    if not near.all():
        far = t[~near]
        gaps = np.abs(x[:, None] - x[None, :])
        i, j = np.unravel_index(int(np.argmax(gaps)), gaps.shape)
        # f[S] = (f[S without x_i] - f[S without x_j]) / (x_j - x_i); |x_j - x_i| t > TAYLOR_RADIUS here,
        # so the subtraction loses at most a small factor.
        without_i: ComplexArray = exp_divided_difference(np.delete(x, i), far)
        without_j: ComplexArray = exp_divided_difference(np.delete(x, j), far)
        out[~near] = (without_i - without_j) / (x[j] - x[i])
    return out


def _exp_taylor(offsets: NDArray[np.complex128], centre: complex, t: Array) -> ComplexArray:
    """exp(centre t) t^n sum_m h_m(w) / (m + n)!, w_i = offsets_i t (|w_i| <= TAYLOR_RADIUS).

    h_m is the complete homogeneous symmetric polynomial of degree m, built by
    h_m(w_0..w_j) = h_m(w_0..w_{j-1}) + w_j h_{m-1}(w_0..w_j).
    """
    n = offsets.size - 1
    w = [d * t for d in offsets]
    h = [np.ones(t.shape, dtype=complex) for _ in range(n + 1)]
    total = h[n] / math.factorial(n)
    for m in range(1, TAYLOR_TERMS + 1):
        acc = w[0] * h[0]
        new = [acc]
        for j in range(1, n + 1):
            acc = acc + w[j] * h[j]
            new.append(acc)
        h = new
        total = total + h[n] / math.factorial(m + n)
    return np.exp(centre * t) * t**n * total


# --- inputs ------------------------------------------------------------------------------------------
class _Term(NamedTuple):
    """One input term: ``step`` amount*H(t - t0), ``ramp`` amount*(t - t0)*H(t - t0), ``sine``."""

    kind: str
    amount: float
    t0: float = 0.0
    omega: float = 0.0
    phase: float = 0.0


def _signal_terms(signal: Signal, gain: float) -> list[_Term]:
    """``gain * signal`` on t >= 0 as steps and ramps (t0 = 0 or delayed) and sines."""
    if isinstance(signal, Constant):
        return [_Term("step", gain * signal.value)]
    if isinstance(signal, Step):
        if signal.t0 <= 0.0:
            return [_Term("step", gain * signal.after)]
        return [_Term("step", gain * signal.before), _Term("step", gain * (signal.after - signal.before), signal.t0)]
    if isinstance(signal, Ramp):
        if signal.t0 <= 0.0:  # initial + slope (t - t0) on all of t >= 0
            start = signal.initial - signal.slope * signal.t0
            return [_Term("step", gain * start), _Term("ramp", gain * signal.slope)]
        return [_Term("step", gain * signal.initial), _Term("ramp", gain * signal.slope, signal.t0)]
    if isinstance(signal, Sine):
        return [_Term("sine", gain * signal.amplitude, 0.0, signal.omega, signal.phase),
                _Term("step", gain * signal.offset)]
    if isinstance(signal, Sum):
        return [term for part in signal.terms for term in _signal_terms(part, gain)]
    if isinstance(signal, Scaled):
        return _signal_terms(signal.signal, gain * signal.gain)
    if isinstance(signal, FunctionSignal):
        raise InputError(NO_CLOSED_FORM.format(what="a Python-function input"))
    raise InputError(NO_CLOSED_FORM.format(what=f"a {type(signal).__name__} input")
                     + " (closed forms cover Constant, Step, Ramp, Sine and their sums)")


@dataclass(frozen=True, slots=True)
class _Forcing:
    """The input, times gain / J, split into what acts from t = 0 and delayed steps and ramps."""

    constant: float  # p0 on t >= 0
    slope: float  # p1: p0 + p1 t on t >= 0
    sines: tuple[tuple[float, float, float], ...]  # (amplitude, omega, phase), omega != 0
    delayed: tuple[_Term, ...]  # steps and ramps starting at t0 > 0

    @staticmethod
    def of(u: Any, scale: float) -> _Forcing:
        if u is None:
            terms: list[_Term] = []
        elif is_real_number(u):
            terms = [_Term("step", scale * finite_number(u, "input u"))]
        elif isinstance(u, Signal):
            terms = _signal_terms(u, scale)
        elif callable(u):
            raise InputError(NO_CLOSED_FORM.format(what="a Python-function input"))
        else:
            raise InputError(f"input u must be None, a number or a signal from robodyn.signals, got {u!r}")
        constant = sum(t.amount for t in terms if t.kind == "step" and t.t0 <= 0.0)
        constant += sum(t.amount * math.sin(t.phase) for t in terms if t.kind == "sine" and t.omega == 0.0)
        slope = sum(t.amount for t in terms if t.kind == "ramp" and t.t0 <= 0.0)
        sines = tuple((t.amount, t.omega, t.phase) for t in terms if t.kind == "sine" and t.omega != 0.0)
        delayed = tuple(t for t in terms if t.kind != "sine" and t.t0 > 0.0 and t.amount != 0.0)
        return _Forcing(constant, slope, sines, delayed)


# --- results -----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, eq=False)
class Response:
    """q(t) and q'(t) of one joint, with the constants of its homogeneous part.

    Attributes
    ----------
    t, q, qd : (N,)
        Times, position and velocity (read-only arrays).
    C1, C2
        Constants of the homogeneous part of the response to the inputs acting from t = 0, in
        ``basis`` (see the module docstring). Near zeta = 1 or near resonance they are large and
        cancel: q and qd are not computed from them.
    basis
        The homogeneous basis with its numbers, e.g. ``exp(-5 t) (C1 cos(8.66025 t) + C2 sin(8.66025 t))``.
    particular
        The particular solution q_p(t) of the inputs acting from t = 0, and the delayed steps and
        ramps, whose responses from rest are added from their start times.
    """

    t: Array
    q: Array
    qd: Array
    C1: float
    C2: float
    basis: str
    particular: str

    def __post_init__(self) -> None:
        for name in ("t", "q", "qd"):
            object.__setattr__(self, name, frozen(getattr(self, name)))
        if self.t.ndim != 1 or self.q.shape != self.t.shape or self.qd.shape != self.t.shape:
            raise ShapeError(
                f"Response needs t, q, qd of one shape (N,), got {self.t.shape}, {self.q.shape}, {self.qd.shape}"
            )

    def _repr_html_(self) -> str:
        from robodyn.display import block, heading, html_table, svg_plot

        return block([heading(f"Response ({self.basis})"),
                      html_table([("particular", self.particular)], row_header=True),
                      svg_plot(self.t, np.column_stack([self.q, self.qd]), ["q", "q'"], xlabel="t [s]")])


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def _terms_text(terms: Sequence[tuple[float, str]]) -> str:
    """``[(2, ""), (-0.5, "t")]`` -> ``"2 - 0.5 t"``; zero coefficients are left out."""
    text = ""
    for coefficient, factor in terms:
        if coefficient == 0.0:
            continue
        body = _fmt(abs(coefficient)) if not factor else f"{_fmt(abs(coefficient))} {factor}"
        if not text:
            text = f"-{body}" if coefficient < 0 else body
        else:
            text += f" - {body}" if coefficient < 0 else f" + {body}"
    return text or "0"


def _angle(omega: float, phase: float) -> str:
    """``"8.66 t + 0.3"``: the argument of a sine or cosine."""
    return _terms_text([(omega, "t"), (phase, "")])


def _decay(a: float) -> str:
    """``"exp(-5 t) "`` for the factor exp(-a t), empty when a = 0."""
    return f"exp({_fmt(-a)} t) " if a != 0.0 else ""


@dataclass(frozen=True, slots=True)
class SecondOrder:
    """A joint J q'' + b q' + k q = gain * u(t): its characteristic values and closed-form response.

    Parameters
    ----------
    J, b, k
        Inertia (> 0), damping and stiffness (any finite sign).
    gain
        Multiplies the input u (the input matrix F of a model).

    Attributes
    ----------
    omega_n, zeta
        sqrt(k/J) and b / (2 sqrt(k J)); ``None`` when k <= 0.
    omega_d
        Damped frequency omega_n sqrt(1 - zeta^2), ``None`` unless underdamped.
    regime
        As :meth:`ScalarDamping.from_coefficients`: ``underdamped``, ``critically damped`` (within
        :data:`~robodyn.model.kinds.mechanical.CRITICAL_DAMPING_TOLERANCE`), ``overdamped``,
        ``no restoring force`` (k = 0) or ``unstable``.
    roots
        The roots (s1, s2) of J s^2 + b s + k without cancellation (the larger root in magnitude from
        -a - sign(a) sqrt(D), the other as c / it): complex pair (-a + i w, -a - i w); real s1 >= s2;
        for k = 0 (0, -b/J).
    """

    J: float
    b: float
    k: float
    gain: float = 1.0
    omega_n: float | None = field(init=False)
    zeta: float | None = field(init=False)
    omega_d: float | None = field(init=False)
    regime: str = field(init=False)
    roots: tuple[complex, complex] = field(init=False)

    def __post_init__(self) -> None:
        for name in ("J", "b", "k", "gain"):
            object.__setattr__(self, name, finite_number(getattr(self, name), f"second_order: {name}"))
        if not self.J > 0.0:
            raise InputError(f"second_order: inertia J must be positive, got {self.J}: check the mass")
        info = ScalarDamping.from_coefficients(self.J, self.b, self.k)
        a, c, D = self._coefficients()
        object.__setattr__(self, "omega_n", info.omega_n)
        object.__setattr__(self, "zeta", info.zeta)
        object.__setattr__(self, "regime", info.regime)
        object.__setattr__(self, "omega_d", math.sqrt(-D) if info.regime == "underdamped" else None)
        object.__setattr__(self, "roots", self._stable_roots(a, c, D))

    def _coefficients(self) -> tuple[float, float, float]:
        """a = b/(2J), c = k/J and D = a^2 - c, as (a - sqrt c)(a + sqrt c) when c > 0 (no cancellation)."""
        a, c = self.b / (2.0 * self.J), self.k / self.J
        if c > 0.0:
            root_c = math.sqrt(c)
            return a, c, (a - root_c) * (a + root_c)
        return a, c, a * a - c

    def _stable_roots(self, a: float, c: float, D: float) -> tuple[complex, complex]:
        if D < 0.0:
            w = math.sqrt(-D)
            return complex(-a, w), complex(-a, -w)
        if c == 0.0:
            return complex(0.0), complex(0.0 - self.b / self.J)
        w = math.sqrt(D)
        if a == 0.0:
            return complex(w), complex(-w)
        big = -(a + math.copysign(w, a))  # no cancellation: a and sign(a) w add
        small = c / big  # product of the roots is c
        return (complex(small), complex(big)) if small >= big else (complex(big), complex(small))

    # --- response ------------------------------------------------------------------------------------
    def response(self, t: ArrayLike, q0: float = 0.0, qd0: float = 0.0, u: Any = None) -> Response:
        """q(t) and q'(t) from q(0) = q0, q'(0) = qd0 under the input ``u``.

        Parameters
        ----------
        t : (N,)
            Times >= 0, measured from the start (any order).
        q0, qd0
            Initial position and velocity.
        u
            ``None`` (free motion), a number (constant from t = 0), or a signal from
            :mod:`robodyn.signals`: :class:`Constant`, :class:`Step` (delayed for t0 > 0),
            :class:`Ramp`, :class:`Sine` (with offset), and sums and multiples of these.

        Raises
        ------
        InputError
            Negative or non-finite times, non-finite initial values, or an input without a closed
            form here (a Python function, a table, a pulse): use :func:`robodyn.simulate`.
        """
        times = _times(t)
        y0, y1 = finite_number(q0, "q0"), finite_number(qd0, "qd0")
        forcing = _Forcing.of(u, self.gain / self.J)
        q, qd = self._free(times, y0, y1)
        dq, dqd = self._from_rest(times, forcing.constant, forcing.slope, forcing.sines)
        q, qd = q + dq, qd + dqd
        for term in forcing.delayed:
            on = times > term.t0
            step, ramp = (term.amount, 0.0) if term.kind == "step" else (0.0, term.amount)
            dq, dqd = self._from_rest(times[on] - term.t0, step, ramp, ())
            q[on] += dq
            qd[on] += dqd
        value, rate, particular = self._particular(forcing)
        C1, C2, basis = self._homogeneous(y0 - value, y1 - rate)
        if forcing.delayed:  # amounts are per unit J: times J they are forces
            particular += "; plus, for t > t0, the response from rest to " + ", ".join(
                f"a {term.kind} of force {_fmt(term.amount * self.J)} at t0={_fmt(term.t0)}"
                for term in forcing.delayed)
        return Response(times, q, qd, C1, C2, basis, particular)

    def _free(self, t: Array, q0: float, qd0: float) -> tuple[Array, Array]:
        """q = q0 E + (qd0 + a q0) F, q' = qd0 E - (c q0 + a qd0) F (E, F in the module docstring)."""
        a, c, _ = self._coefficients()
        s1, s2 = self.roots
        E = (0.5 * (np.exp(s1 * t) + np.exp(s2 * t))).real
        F = exp_divided_difference((s1, s2), t).real
        return q0 * E + (qd0 + a * q0) * F, qd0 * E - (c * q0 + a * qd0) * F

    def _from_rest(
        self, t: Array, constant: float, slope: float, sines: Sequence[tuple[float, float, float]]
    ) -> tuple[Array, Array]:
        """Response from rest to constant + slope t + sum A sin(w t + phi) (forcing per unit J).

        q' uses d/dt exp_t[x0, ..., xn] = x0 exp_t[x0, ..., xn] + exp_t[x1, ..., xn].
        """
        s1, s2 = self.roots
        q, qd = np.zeros(t.shape), np.zeros(t.shape)
        if constant == 0.0 and slope == 0.0 and not sines:
            return q, qd
        impulse = exp_divided_difference((s1, s2), t)
        if constant or slope:
            unit_step = exp_divided_difference((0.0, s1, s2), t).real
            q += constant * unit_step + slope * exp_divided_difference((0.0, 0.0, s1, s2), t).real
            qd += constant * impulse.real + slope * unit_step
        for amplitude, omega, phase in sines:
            forced = exp_divided_difference((1j * omega, s1, s2), t)
            phasor = amplitude * cmath.exp(1j * phase)
            q += (phasor * forced).imag
            qd += (phasor * (1j * omega * forced + impulse)).imag
        return q, qd

    # --- textbook decomposition (reported, not evaluated) -----------------------------------------------
    def _particular(self, forcing: _Forcing) -> tuple[float, float, str]:
        """q_p(0), q_p'(0) and a description of the particular solution of the inputs from t = 0."""
        a, c, _ = self._coefficients()
        p0, p1 = forcing.constant, forcing.slope
        value = rate = 0.0
        parts: list[tuple[float, str]] = []
        if p0 or p1:
            if c != 0.0:  # q_p = alpha0 + alpha1 t: c alpha1 = p1, c alpha0 + 2 a alpha1 = p0
                alpha1 = p1 / c
                alpha0 = (p0 - 2.0 * a * alpha1) / c
                value, rate = alpha0, alpha1
                parts += [(alpha0, ""), (alpha1, "t")]
            elif a != 0.0:  # q_p = beta1 t + beta2 t^2: 4 a beta2 = p1, 2 beta2 + 2 a beta1 = p0
                beta2 = p1 / (4.0 * a)
                beta1 = (p0 - 2.0 * beta2) / (2.0 * a)
                rate = beta1
                parts += [(beta1, "t"), (beta2, "t^2")]
            else:  # q'' = p0 + p1 t
                parts += [(p0 / 2.0, "t^2"), (p1 / 6.0, "t^3")]
        for amplitude, omega, phase in forcing.sines:
            P = complex(c - omega * omega, 2.0 * a * omega)  # P(i w) = (i w)^2 + 2 a (i w) + c
            if abs(P) <= RESONANCE_TOLERANCE * max(abs(c), omega * omega):
                # P'(i w) = 2 i w: q_p = Im(A e^{i phi} t e^{i w t} / (2 i w)) = -A t cos(w t + phi) / (2 w)
                growth = -amplitude / (2.0 * omega)
                rate += growth * math.cos(phase)
                parts.append((growth, f"t cos({_angle(omega, phase)}) (resonance)"))
            else:
                Q = amplitude * cmath.exp(1j * phase) / P
                value += Q.imag
                rate += omega * Q.real
                parts.append((abs(Q), f"sin({_angle(omega, phase - cmath.phase(P))})"))
        return value, rate, "q_p(t) = " + _terms_text(parts)

    def _homogeneous(self, y0: float, y1: float) -> tuple[float, float, str]:
        """C1, C2 of the homogeneous part with y(0) = y0, y'(0) = y1, and the basis."""
        a, _, D = self._coefficients()
        if self.k == 0.0:
            if self.b == 0.0:
                return y0, y1, "C1 + C2 t"
            rate = self.b / self.J
            return y0 + y1 / rate, -y1 / rate, f"C1 + C2 exp({_fmt(-rate)} t)"
        if self.regime == "critically damped" or D == 0.0:
            return y0, y1 + a * y0, f"{_decay(a)}(C1 + C2 t)"
        if D < 0.0:
            w = math.sqrt(-D)
            return y0, (y1 + a * y0) / w, f"{_decay(a)}(C1 cos({_fmt(w)} t) + C2 sin({_fmt(w)} t))"
        s1, s2 = self.roots[0].real, self.roots[1].real
        gap = s1 - s2
        return (y1 - s2 * y0) / gap, (s1 * y0 - y1) / gap, f"C1 exp({_fmt(s1)} t) + C2 exp({_fmt(s2)} t)"

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        return result_html(self, f"J q'' + b q' + k q = gain u: {self.regime}",
                           units={"omega_n": "rad/s", "omega_d": "rad/s", "roots": "1/s"})


def _times(t: ArrayLike) -> Array:
    times = time_array(t)
    if times.ndim > 1:
        raise ShapeError(f"response times must be a number or a 1-D array, got shape {times.shape}")
    times = np.atleast_1d(times).astype(float, copy=True)
    if np.any(times < 0.0):
        raise InputError(
            f"response times must be >= 0 (measured from the start), got t={float(times.min())}: shift the times"
        )
    return times


# --- entry point ---------------------------------------------------------------------------------------
@overload
def second_order(J: float, b: float, k: float, *, gain: float | None = None) -> SecondOrder: ...
@overload
def second_order(J: Model, *, params: Values | None = None) -> SecondOrder: ...
def second_order(
    J: float | Model,
    b: float | None = None,
    k: float | None = None,
    *,
    gain: float | None = None,
    params: Values | None = None,
) -> SecondOrder:
    """The joint J q'' + b q' + k q = gain * u, from its coefficients or a one-coordinate model.

    Parameters
    ----------
    J, b, k
        Inertia (> 0), damping and stiffness; or ``J`` is a model, which must be a
        :class:`~robodyn.model.kinds.mechanical.MechanicalSystem` with one coordinate, whose numeric
        M, B, K give J, b, k and whose input matrix F (1 x 1, or 1 x 0: gain 0) gives the gain.
    gain
        Gain of the input (default 1); with a model it comes from F.
    params
        Parameter overrides of the model (by name or a full array).

    Examples
    --------
    >>> joint = second_order(0.01, 0.1, 1.0)
    >>> joint.omega_n, joint.zeta, joint.regime
    (10.0, 0.5, 'underdamped')
    """
    if isinstance(J, Model):
        if J.mechanical_matrices() is None:
            raise InputError(f"model {J.name!r} is a {J.kind} model: second_order needs a MechanicalSystem with "
                             "one coordinate (or the numbers J, b, k): linearize a nonlinear model first")
        if b is not None or k is not None or gain is not None:
            raise InputError("second_order(model) takes J, b, k and the gain from the model: "
                             "give either a model or the numbers J, b, k")
        return _from_model(J, params)
    if b is None or k is None:
        raise InputError("second_order(J, b, k) needs all three coefficients: give b and k (0 for none)")
    if params is not None:
        raise InputError("params override a model's parameters: with numbers J, b, k leave params out")
    return SecondOrder(J, b, k, 1.0 if gain is None else gain)


def _from_model(model: ModelContract, params: Values | None) -> SecondOrder:
    matrices = model.mechanical_matrices(params)
    assert matrices is not None
    mass, damping, stiffness, forcing = matrices
    if mass.shape[0] != 1:
        raise InputError(
            f"model {model.name!r} has {mass.shape[0]} coordinates: second_order needs one "
            "(simulate the model, or analyse its modes)"
        )
    if model.n_inputs > 1:
        raise InputError(
            f"model {model.name!r} has {model.n_inputs} inputs: second_order takes one; "
            "build the model with one input (F as the gain)"
        )
    gain = float(forcing[0, 0]) if model.n_inputs else 0.0
    return SecondOrder(float(mass[0, 0]), float(damping[0, 0]), float(stiffness[0, 0]), gain)
