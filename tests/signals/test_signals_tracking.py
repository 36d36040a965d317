"""TrackingFeedback: the compiled evaluator (numba and plain Python) gives the law's own numbers; its pieces are
the closed forms of its docstring (Hermite states, linear or held gains, held inputs, clamped ends)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import CubicHermiteSpline

from robodyn.base.errors import InputError, ShapeError
from robodyn.signals import TrackingFeedback, load_evaluator, resolve_inputs

RNG = np.random.default_rng(3)
T, M, N = 6, 2, 3
TIMES = np.cumsum(RNG.uniform(0.1, 0.5, T))


def law(gain: str = "linear", inputs: str = "hold") -> TrackingFeedback:
    return TrackingFeedback(TIMES, RNG.normal(size=(T, M, N)), RNG.normal(size=(T, N)), RNG.normal(size=(T, M)),
                            RNG.normal(size=(T - 1, N)), RNG.normal(size=(T - 1, N)), inputs, gain)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize(("gain", "inputs"), [("linear", "hold"), ("hold", "linear")])
def test_the_evaluator_gives_the_laws_numbers(compiled: bool, gain: str, inputs: str) -> None:
    feedback = law(gain, inputs)
    data = resolve_inputs(("a", "b"), feedback).compiled(N)
    evaluate = load_evaluator(compiled)
    out = np.empty(M)
    for t in np.concatenate([np.linspace(TIMES[0] - 0.2, TIMES[-1] + 0.2, 97), TIMES]):
        x = RNG.normal(size=N)
        evaluate(t, t, x, data, out)
        # the same formulas in another order: agreement to rounding
        assert np.allclose(out, feedback(t, x), rtol=1e-13, atol=1e-13)


def test_the_pieces_are_the_closed_forms() -> None:
    feedback = law()
    k, s = 2, 0.3
    t = TIMES[k] + s * (TIMES[k + 1] - TIMES[k])
    spline = CubicHermiteSpline(TIMES[k:k + 2], feedback.x[k:k + 2], np.stack([feedback.d0[k], feedback.d1[k]]))
    assert np.allclose(feedback.reference_state(t), spline(t), rtol=1e-13, atol=1e-13)
    assert np.allclose(feedback.gain(t), 0.7 * feedback.K[k] + 0.3 * feedback.K[k + 1], rtol=1e-13)
    x = np.zeros(N)
    expected = feedback.u[k] - feedback.gain(t) @ (x - spline(t))
    assert np.allclose(feedback(t, x), expected, rtol=1e-13)
    after = TIMES[-1] + 1.0  # the last knot's gain about the last knot's state and input
    assert np.allclose(feedback(after, x), feedback.u[-1] + feedback.K[-1] @ feedback.x[-1], rtol=1e-13)
    assert np.array_equal(law("hold").breakpoints(TIMES[0], TIMES[-1]), TIMES[1:-1])


def test_bad_tables_are_refused() -> None:
    with pytest.raises(InputError, match="strictly increasing"):
        TrackingFeedback(TIMES[::-1], np.zeros((T, M, N)), np.zeros((T, N)), np.zeros((T, M)),
                         np.zeros((T - 1, N)), np.zeros((T - 1, N)))
    with pytest.raises(ShapeError, match="d1 has shape"):
        TrackingFeedback(TIMES, np.zeros((T, M, N)), np.zeros((T, N)), np.zeros((T, M)),
                         np.zeros((T - 1, N)), np.zeros((T, N)))
    with pytest.raises(ShapeError, match="3 inputs"):
        resolve_inputs(("a", "b", "c"), law())
