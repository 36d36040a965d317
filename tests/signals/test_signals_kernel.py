"""The compiled input evaluator (robodyn/signals/kernel.py) and the exact-path decomposition.

Random compositions of every signal kind are evaluated three ways: the Python ``__call__``, the
evaluator (jitted by numba and interpreted) on ``Inputs.compiled()``, and the decomposition
``affine_pieces`` + ``sine_terms``; all must agree.
"""

from __future__ import annotations

import ast
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robodyn.signals import (
    EVALUATOR_SOURCE_PATH,
    Constant,
    FunctionSignal,
    Pulse,
    Ramp,
    Scaled,
    Signal,
    Sine,
    StateFeedback,
    Step,
    Sum,
    Table,
    load_evaluator,
    resolve_inputs,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- random compositions ------------------------------------------------------------------------------------

numbers = st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False)
times = st.floats(-5.0, 15.0, allow_nan=False, allow_infinity=False)
positive = st.floats(0.01, 3.0, allow_nan=False, allow_infinity=False)


@st.composite
def tables(draw):
    n = draw(st.integers(1, 6))
    start = draw(times)
    steps = draw(st.lists(positive, min_size=n - 1, max_size=n - 1))
    table_times = start + np.concatenate(([0.0], np.cumsum(steps)))
    values = draw(st.lists(numbers, min_size=n, max_size=n))
    if np.any(np.diff(table_times) <= 0):  # cumulative rounding; practically never
        table_times = start + np.arange(n, dtype=float)
    return Table(table_times, values, draw(st.sampled_from(["zoh", "linear"])))


@st.composite
def pulses(draw):
    width = draw(positive)
    period = draw(st.one_of(st.none(), positive.map(lambda extra: width + extra)))
    return Pulse(draw(times), width, draw(numbers), draw(numbers), period)


leaves = st.one_of(
    st.builds(Constant, numbers),
    st.builds(Step, times, numbers, numbers),
    st.builds(Ramp, times, numbers, numbers),
    st.builds(Sine, numbers, st.floats(0.0, 3.0), numbers, numbers),
    pulses(),
    tables(),
)


@st.composite
def compositions(draw, depth=2):
    count = draw(st.integers(1, 4))
    result: Signal | None = None
    for _ in range(count):
        term = draw(compositions(depth - 1)) if depth > 0 and draw(st.booleans()) else draw(leaves)
        how = draw(st.sampled_from(["plain", "scale", "negate", "divide"]))
        if how == "scale":
            term = draw(numbers) * term
        elif how == "negate":
            term = -term
        elif how == "divide":
            term = term / draw(positive)
        result = term if result is None else (result + term if draw(st.booleans()) else result - term)
    assert result is not None
    return result


def flat_terms(signal: Signal, gain: float = 1.0) -> list[tuple[float, Signal]]:
    if isinstance(signal, Sum):
        return [term for s in signal.terms for term in flat_terms(s, gain)]
    if isinstance(signal, Scaled):
        return flat_terms(signal.signal, gain * signal.gain)
    return [(gain, signal)]


def magnitude(signal: Signal, grid: np.ndarray) -> float:
    """Sum over the terms of |gain| * max |term| on ``grid``: the scale of rounding errors."""
    total = 0.0
    for gain, leaf in flat_terms(signal):
        bound = float(np.max(np.abs(leaf(grid))))
        if isinstance(leaf, Sine):
            bound += abs(leaf.amplitude) + abs(leaf.offset)
        total += abs(gain) * bound
    return total


def sample_times(signal: Signal, extra: list[float], t0: float = -6.0, t1: float = 16.0) -> np.ndarray:
    """Random times plus every breakpoint and its left neighbour (where pieces change)."""
    edges = signal.breakpoints(t0, t1)
    return np.concatenate((extra, edges, np.nextafter(edges, -np.inf)))


@pytest.fixture(scope="module", params=[True, False], ids=["numba", "interpreted"])
def evaluator(request):
    return load_evaluator(request.param)


def evaluate(evaluator, inp, t, t_piece, x, m):
    out = np.full(m, np.nan)
    evaluator(t, t_piece, x, inp, out)
    return out


# --- kernel against Python --------------------------------------------------------------------------------------


@SETTINGS
@given(first=compositions(), second=compositions(), extra=st.lists(times, min_size=1, max_size=10))
def test_kernel_equals_python(evaluator, first, second, extra):
    inputs = resolve_inputs(("u", "v"), {"u": first, "v": second})
    inp = inputs.compiled(n_states=2)
    x = np.zeros(2)
    for signal, channel in ((first, 0), (second, 1)):
        grid = sample_times(signal, extra)
        scale = magnitude(signal, np.concatenate((grid, np.linspace(-6.0, 16.0, 50))))
        for t in grid:
            got = evaluate(evaluator, inp, float(t), float(t), x, 2)[channel]
            # relative to the signal's size, plus the rounding of products that underflow (gains folded in another
            # order: 5e-324 * (1.5 * 0 - 1 * 0) is -0.0 in Python and -5e-324 folded), a few of the smallest subnormal
            assert abs(got - signal(float(t))) <= 1e-13 * scale + 16 * math.ulp(0.0), (t, got, signal(float(t)))


def test_evaluators_are_jitted_and_plain():
    jitted, plain = load_evaluator(True), load_evaluator(False)
    assert hasattr(jitted, "signatures") and not hasattr(plain, "signatures")
    assert load_evaluator(True) is jitted  # loaded once per process


def test_t_piece_picks_the_side_of_an_edge(evaluator):
    inputs = resolve_inputs(("u",), Step(1.0, -1.0, 2.0))
    inp, x = inputs.compiled(), np.zeros(0)
    assert evaluate(evaluator, inp, 1.0, 1.0 - 1e-3, x, 1)[0] == -1.0  # stage at the edge, earlier segment
    assert evaluate(evaluator, inp, 1.0, 1.0, x, 1)[0] == 2.0
    assert evaluate(evaluator, inp, 0.999, 1.0 + 1e-3, x, 1)[0] == 2.0


def test_t_piece_picks_pieces_and_t_enters_formulas(evaluator):
    inputs = resolve_inputs(
        ("ramp", "zoh", "linear", "pulse"),
        [Ramp(1.0, 2.0, 1.0), Table([0, 1, 2], [0, 1, 3]), Table([0, 1, 2], [0, 1, 3], "linear"), Pulse(1, 1, 5)],
    )
    inp, x = inputs.compiled(), np.zeros(0)
    np.testing.assert_array_equal(evaluate(evaluator, inp, 1.5, 1.5, x, 4), [2.0, 1.0, 2.0, 5.0])
    # piece from t_piece = 0.9 (before the ramp, first table interval, before the pulse), formula with t = 1.2
    np.testing.assert_allclose(evaluate(evaluator, inp, 1.2, 0.9, x, 4), [1.0, 0.0, 1.2, 0.0], rtol=1e-15)
    np.testing.assert_allclose(evaluate(evaluator, inp, 1.2, 1.2, x, 4), [1.4, 1.0, 1.4, 5.0], rtol=1e-15)
    # a stage exactly at the pulse's falling edge, integrating the segment before it
    assert evaluate(evaluator, inp, 2.0, 1.9, x, 4)[3] == 5.0


def test_out_is_overwritten(evaluator):
    inp = resolve_inputs(("u", "v"), {"v": 2.0}).compiled()
    out = np.array([7.0, 7.0])
    evaluator(0.0, 0.0, np.zeros(0), inp, out)
    np.testing.assert_array_equal(out, [0.0, 2.0])


@SETTINGS
@given(
    K=st.lists(numbers, min_size=6, max_size=6),
    x=st.lists(numbers, min_size=3, max_size=3),
    x_ref=st.lists(numbers, min_size=3, max_size=3),
    reference=compositions(depth=1),
    t=times,
)
def test_state_feedback_in_the_kernel(evaluator, K, x, x_ref, reference, t):
    gain = np.array(K).reshape(2, 3)
    law = StateFeedback(gain, x_ref, [reference, 1.5])
    inputs = resolve_inputs(("u", "v"), law)
    state = np.array(x)
    got = evaluate(evaluator, inputs.compiled(n_states=3), t, t, state, 2)
    expected = law(t, state)
    scale = np.abs(gain) @ (np.abs(state) + np.abs(x_ref)) + magnitude(reference, np.array([t])) + 1.5
    assert np.all(np.abs(got - expected) <= 1e-13 * scale)
    np.testing.assert_allclose(inputs.evaluate(t, state), expected, rtol=0, atol=1e-13 * float(np.max(scale)))


def test_python_evaluator_with_functions_keeps_t_piece():
    inputs = resolve_inputs(("u", "v"), {"u": Step(1.0, 0.0, 1.0) + 2 * FunctionSignal(lambda t: t * t), "v": 3.0})
    python = inputs.python_evaluator()
    out = np.zeros(2)
    python(1.0, 1.0 - 1e-3, np.zeros(0), None, out)
    np.testing.assert_array_equal(out, [2.0, 3.0])  # step before its edge, function at t
    python(1.0, 1.0, np.zeros(0), None, out)
    np.testing.assert_array_equal(out, [3.0, 3.0])


def test_python_evaluator_of_a_state_function():
    inputs = resolve_inputs(("u", "v"), lambda t, x: (t + x[0], -x[1]))
    out = np.zeros(2)
    inputs.python_evaluator()(2.0, 1.5, np.array([1.0, 4.0]), None, out)
    np.testing.assert_array_equal(out, [3.0, -4.0])


def test_python_evaluator_matches_the_kernel_for_compilable_inputs(evaluator):
    law = StateFeedback([[1.0, 2.0]], [0.5, 0.0], [Sine(1, 1) + Pulse(0, 0.5, 1, period=1)])
    inputs = resolve_inputs(("u",), law)
    inp, x = inputs.compiled(n_states=2), np.array([1.0, -1.0])
    python = inputs.python_evaluator()
    for t in np.linspace(0.0, 3.0, 31):
        expected = evaluate(evaluator, inp, t, t, x, 1)
        np.testing.assert_allclose(evaluate(python, inp, t, t, x, 1), expected, rtol=1e-14, atol=1e-14)


# --- exact path: sine components plus affine pieces --------------------------------------------------------------


@SETTINGS
@given(signal=compositions(), start=times, length=st.floats(0.1, 12.0), extra=st.lists(st.floats(0, 1), max_size=20))
def test_sine_terms_plus_affine_pieces_reconstruct_the_signal(signal, start, length, extra):
    t0, t1 = start, start + length
    breaks, values, slopes = signal.affine_pieces(t0, t1)
    assert breaks[0] == t0 and breaks[-1] == t1 and values.shape == slopes.shape == (breaks.size - 1,)
    np.testing.assert_array_equal(breaks[1:-1], signal.breakpoints(t0, t1))
    sines = signal.sine_terms()
    grid = np.concatenate((breaks[:-1], t0 + length * np.array(extra), 0.5 * (breaks[:-1] + breaks[1:])))
    grid = grid[grid < t1]
    piece = np.searchsorted(breaks, grid, side="right") - 1
    rebuilt = values[piece] + slopes[piece] * (grid - breaks[piece])
    for amplitude, omega, phase in sines:
        rebuilt = rebuilt + amplitude * np.sin(omega * grid + phase)
    scale = magnitude(signal, np.concatenate((breaks, grid)))
    # relative to the signal's scale, with a floor of a few subnormals (hypothesis finds amplitudes ~1e-313,
    # where one rounding step is the smallest subnormal and no relative tolerance can absorb it)
    assert np.all(np.abs(rebuilt - signal(grid)) <= 1e-14 * scale + 4 * np.finfo(float).smallest_subnormal)


def test_sine_terms_count_and_scaling():
    s = 2 * (Sine(1.0, 1.0) - 0.5 * Sine(3.0, 2.0, 0.25, 7.0)) + Step(0, 0, 1)
    assert s.sine_terms() == [(2.0, 2 * math.pi, 0.0), (-3.0, 4 * math.pi, 0.25)]
    _, values, slopes = s.affine_pieces(-1.0, 1.0)
    np.testing.assert_array_equal(values, [-7.0, -6.0])
    np.testing.assert_array_equal(slopes, [0.0, 0.0])


def test_affine_pieces_of_a_linear_table():
    table = Table([0.0, 1.0, 3.0], [1.0, 3.0, 2.0], "linear")
    breaks, values, slopes = table.affine_pieces(-1.0, 4.0)
    np.testing.assert_array_equal(breaks, [-1.0, 0.0, 1.0, 3.0, 4.0])
    np.testing.assert_array_equal(values, [1.0, 1.0, 3.0, 2.0])
    np.testing.assert_array_equal(slopes, [0.0, 2.0, -0.5, 0.0])


# --- the source is fit for concatenation into generated modules ------------------------------------------------


def test_kernel_source_contract():
    source = EVALUATOR_SOURCE_PATH.read_text()
    tree = ast.parse(source)
    imports = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert imports == ["math"]
    # no __future__, no numba: only the kind codes, under private aliases
    from_imports = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert from_imports and all(node.module == "robodyn.signals.kinds" for node in from_imports)
    aliases = [alias.asname for node in from_imports for alias in node.names]
    assert all(name is not None and name.startswith("_SIG_") for name in aliases)
    defined = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert "eval_inputs" in defined and all(name == "eval_inputs" or name.startswith("_sig_") for name in defined)
    assigned = [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets]
    assert all(name.startswith("_SIG_") for name in assigned)
    assert not {"jit", "hjit"} & {*assigned, *defined}  # injected by the loader
