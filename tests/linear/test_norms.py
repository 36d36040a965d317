"""Tests for robodyn.linear.norms: hinfnorm and h2norm against closed forms and python-control (Slycot's ab13dd for
the H-infinity norm, Lyapunov equations for H2).

Tolerances: hinfnorm is the gain at a frequency inside a bracket of relative width 2e-12 around the norm; ab13dd
called with tol=1e-14 is as sharp (measured agreement: 1e-12 relative over 80 random systems), so 1e-10. H2: both
solve the same Lyapunov equation (measured 1e-13), so 1e-10.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from robodyn import InputError, LinearSystem
from robodyn.linear.norms import h2norm, hinf_peak, hinfnorm

control = pytest.importorskip("control")
pytest.importorskip("slycot")


def random_stable(seed: int, dt: float | None) -> LinearSystem:
    rng = np.random.default_rng(seed)
    n, m, p = (int(v) for v in rng.integers(1, 7, size=3))
    A = rng.normal(size=(n, n))
    A -= (max(np.linalg.eigvals(A).real) + rng.uniform(0.01, 1.0)) * np.eye(n)
    if dt is not None:
        A /= 1.05 * max(np.abs(np.linalg.eigvals(A)))  # |z| < 1
    D = rng.normal(size=(p, m)) * int(rng.integers(0, 2))
    return LinearSystem(A, rng.normal(size=(n, m)), rng.normal(size=(p, n)), D, dt=dt)


def as_control(sys: LinearSystem) -> object:
    return control.ss(sys.A, sys.B, sys.C, sys.D, 0 if sys.dt is None else sys.dt)


@pytest.mark.parametrize("dt", [None, 0.1])
@pytest.mark.parametrize("seed", range(12))
def test_hinfnorm_equals_ab13dd(seed: int, dt: float | None) -> None:
    sys = random_stable(seed, dt)
    norm, w = hinf_peak(sys)
    reference, _ = control.linfnorm(as_control(sys), tol=1e-14)
    assert norm == pytest.approx(float(reference), rel=1e-10)
    s = 1j * w if dt is None else np.exp(1j * w * dt)
    if math.isfinite(w):  # the norm is the gain at the returned frequency
        G = sys.C @ np.linalg.solve(s * np.eye(len(sys.states)) - sys.A, sys.B) + sys.D
        assert np.linalg.norm(G, 2) == pytest.approx(norm, rel=1e-12)


@pytest.mark.parametrize("dt", [None, 0.1])
@pytest.mark.parametrize("seed", range(12))
def test_h2norm_equals_python_control(seed: int, dt: float | None) -> None:
    sys = random_stable(seed, dt)
    value = h2norm(sys)
    if dt is None and np.any(sys.D != 0.0):
        assert value == math.inf
    else:
        assert value == pytest.approx(float(control.system_norm(as_control(sys), 2, print_warning=False)), rel=1e-10)


def test_closed_forms() -> None:
    """k / (s + a): H-inf k / a (at w = 0), H2 k / sqrt(2 a); wn^2 / (s^2 + 2 zeta wn s + wn^2): the resonance
    1 / (2 zeta sqrt(1 - zeta^2)) at wn sqrt(1 - 2 zeta^2), H2^2 = wn / (4 zeta); x+ = a x + b u: H-inf |b| / (1 - a)
    (a > 0, at w = 0), H2 |b| / sqrt(1 - a^2)."""
    k, a = 3.0, 0.5
    first = LinearSystem([[-a]], [[1.0]], [[k]])
    assert hinfnorm(first) == pytest.approx(k / a, rel=1e-13)
    assert h2norm(first) == pytest.approx(k / math.sqrt(2 * a), rel=1e-13)
    zeta, wn = 0.1, 2.0
    second = LinearSystem([[0.0, 1.0], [-wn**2, -2 * zeta * wn]], [[0.0], [wn**2]], [[1.0, 0.0]])
    norm, w = hinf_peak(second)
    assert norm == pytest.approx(1 / (2 * zeta * math.sqrt(1 - zeta**2)), rel=1e-12)
    assert w == pytest.approx(wn * math.sqrt(1 - 2 * zeta**2), rel=1e-5)  # a flat maximum: w to sqrt(rtol)
    assert h2norm(second) == pytest.approx(math.sqrt(wn / (4 * zeta)), rel=1e-13)
    discrete = LinearSystem([[0.8]], [[0.5]], [[1.0]], dt=0.01)
    assert hinfnorm(discrete) == pytest.approx(0.5 / 0.2, rel=1e-12)
    assert h2norm(discrete) == pytest.approx(0.5 / math.sqrt(1 - 0.64), rel=1e-13)
    negative = LinearSystem([[-0.8]], [[0.5]], [[1.0]], dt=0.01)  # peak at the Nyquist frequency, z = -1
    norm, w = hinf_peak(negative)
    assert norm == pytest.approx(0.5 / 0.2, rel=1e-12) and w == pytest.approx(math.pi / 0.01, rel=1e-5)


def test_feedthrough_peak_and_unstable_systems() -> None:
    high_pass = LinearSystem([[-1.0]], [[1.0]], [[-1.0]], [[2.0]])  # (2 s + 1) / (s + 1): sup at w = inf
    norm, w = hinf_peak(high_pass)
    assert norm == pytest.approx(2.0, rel=1e-13) and w == math.inf
    assert h2norm(high_pass) == math.inf  # D != 0 in continuous time
    for unstable in (LinearSystem([[1.0]], [[1.0]], [[1.0]]), LinearSystem([[0.0]], [[1.0]], [[1.0]]),
                     LinearSystem([[1.0]], [[1.0]], [[1.0]], dt=0.1)):
        assert hinfnorm(unstable) == math.inf and h2norm(unstable) == math.inf
    with pytest.raises(InputError, match="rtol"):
        hinfnorm(high_pass, rtol=0.5)
