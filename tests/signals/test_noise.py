"""Seeded white noise held per sample (robodyn.signals.noise): Philox4x32-10 against the Random123 library's
known-answer vectors, the same bits from the signal, the interpreted and the compiled evaluator, statistics within
bounds, reproducibility whatever the integrator's steps, and one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import ExpressionError, InputError
from robodyn.files.signal_text import parse_signal
from robodyn.signals import WhiteNoise, load_evaluator, resolve_inputs
from robodyn.signals.noise import philox4x32, standard_normal, standard_normals


def _words(*hex_words: str) -> tuple[np.ndarray, ...]:
    return tuple(np.array([int(w, 16)], dtype=np.uint64) for w in hex_words)


@pytest.mark.parametrize(("counter", "key", "expected"), [
    # Random123 1.14, tests/kat_vectors: "philox4x32 10 <counter x4> <key x2> <output x4>"
    (("0",) * 4, ("0",) * 2, ("6627e8d5", "e169c58d", "bc57ac4c", "9b00dbd8")),
    (("ffffffff",) * 4, ("ffffffff",) * 2, ("408f276d", "41c83b0e", "a20bc7c6", "6d5451fd")),
    (("243f6a88", "85a308d3", "13198a2e", "03707344"), ("a4093822", "299f31d0"),
     ("d16cfe09", "94fdcceb", "5001e420", "24126ea1")),
])
def test_philox_gives_the_known_answers(counter, key, expected) -> None:
    found = philox4x32(_words(*counter), _words(*key))
    assert [f"{int(word[0]):08x}" for word in found] == list(expected)


def test_the_value_is_held_on_each_sample_and_is_mean_plus_std_times_the_stream() -> None:
    noise = WhiteNoise(0.2, 0.01, seed=5, mean=1.0, start=0.003)
    k = np.arange(-3, 50)
    edges = 0.003 + k * 0.01
    inside = np.stack([edges, edges + 0.002, edges + 0.0099, np.nextafter(0.003 + (k + 1) * 0.01, -np.inf)])
    values = noise(inside)
    np.testing.assert_array_equal(values, np.broadcast_to(values[0], values.shape))  # held on [t_k, t_k+1)
    np.testing.assert_array_equal(values[0], 1.0 + 0.2 * standard_normals(5, k))
    assert noise(0.003 + 0.01) != noise(np.nextafter(0.003 + 0.01, 0.0))  # a new sample at the edge
    assert len(set(values[0])) == k.size  # a new number every sample
    np.testing.assert_allclose(noise.breakpoints(0.0, 0.05), 0.003 + 0.01 * np.arange(5), rtol=0, atol=1e-15)


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "interpreted"])
def test_the_evaluator_gives_the_signals_bits(compiled) -> None:
    noise = WhiteNoise(0.7, 1e-3, seed=2**40 + 3, mean=-0.25)
    inputs = resolve_inputs(["a", "b"], {"b": noise - 2.0 * WhiteNoise(1.0, 0.02, seed=9)})
    data = inputs.compiled()
    evaluate = load_evaluator(compiled)
    times = np.concatenate([np.linspace(-0.01, 0.3, 777), 1e-3 * np.arange(40), [1e4 + 0.5e-3]])
    out = np.empty(2)
    found = []
    for t in times:
        evaluate(float(t), float(t), np.zeros(0), data, out)
        found.append(out[1])
    expected = noise(times) - 2.0 * WhiteNoise(1.0, 0.02, seed=9)(times)
    np.testing.assert_array_equal(found, expected)  # the same operations on the same libm: the same bits


def test_one_time_gives_the_bits_of_the_arrays() -> None:
    """The integer path of one time (a sampled loop's instants) against the vectorized one, on negative counters,
    counters past 2^32 and a seed past 2^32; then through the signal, at and next to its edges."""
    k = np.concatenate([np.arange(-40, 40), 2**32 + np.arange(-3, 3), [2**62 + 5, -(2**62) - 7]]).astype(np.int64)
    for seed in (0, 7, 2**40 + 3, 2**53 - 1):
        found = [standard_normal(seed, int(i)) for i in k]
        np.testing.assert_array_equal(found, standard_normals(seed, k))  # the same operations: the same bits
    noise = WhiteNoise(0.3, 1e-3, seed=11, mean=0.5, start=-0.0004)
    edges = -0.0004 + 1e-3 * np.arange(-5, 2000)
    times = np.concatenate([edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf), 1e-3 * np.arange(2000)])
    np.testing.assert_array_equal([noise(float(t)) for t in times], noise(times))


def test_samples_have_the_moments_of_a_standard_normal() -> None:
    count = 100_000
    N = standard_normals(123, np.arange(count))
    # 5 standard errors of each estimator over 10^5 samples (false alarm ~6e-7): the mean's is 1/sqrt(n), the
    # variance's sqrt(2/n), the 4th moment's sqrt(96/n) (Var[N^4] = 105 - 9), the lag-1 correlation's 1/sqrt(n)
    assert abs(N.mean()) < 5 / np.sqrt(count)
    assert abs(N.var() - 1.0) < 5 * np.sqrt(2 / count)
    assert abs(np.mean(N**4) - 3.0) < 5 * np.sqrt(96 / count)
    assert abs(np.mean(N[1:] * N[:-1])) < 5 / np.sqrt(count)
    # the probability below -1.96: 0.025, its standard error sqrt(p (1 - p) / n)
    assert abs(np.mean(N < -1.959964) - 0.025) < 5 * np.sqrt(0.025 * 0.975 / count)
    other = standard_normals(124, np.arange(count))  # the next seed: uncorrelated
    assert abs(np.mean(N * other)) < 5 / np.sqrt(count)
    assert not np.array_equal(N[:10], other[:10])


def test_a_simulation_integrates_the_same_noise_whatever_its_steps() -> None:
    """x' = u with u held: x at the sample instants is the sum of the held values times T, on every method."""
    model = robodyn.System(lambda t, x, u, p: [u[0]], ["x"], ["u"], name="integrator")
    noise = WhiteNoise(2.0, 0.01, seed=42)
    times = np.linspace(0.0, 0.5, 51)
    exact = np.concatenate([[0.0], np.cumsum(0.01 * noise(times[:-1]))])
    runs = [robodyn.simulate(model, 0.5, [0.0], {"u": noise}, t_eval=times, method="dopri5"),
            robodyn.simulate(model, 0.5, [0.0], {"u": noise}, method="rk4", dt=0.0025),
            robodyn.simulate(model, 0.5, [0.0], {"u": noise}, method="rk4", dt=0.01)]
    for run in runs:
        at = np.searchsorted(run.t, times - 1e-12)
        np.testing.assert_allclose(run.t[at], times, rtol=0, atol=1e-12)
        # the integrators stop at every breakpoint: each interval's u is a constant, integrated to rounding
        np.testing.assert_allclose(run.x[at, 0], exact, rtol=0, atol=1e-12)


def test_the_text_form_reads_white_noise() -> None:
    signal = parse_signal("0.5 + white_noise(0.1, 0.01, 7)", where="--input u")
    t = np.linspace(0, 0.2, 41)
    np.testing.assert_array_equal(signal(t), 0.5 + WhiteNoise(0.1, 0.01, 7)(t))
    np.testing.assert_array_equal(parse_signal("white_noise(0.1, 0.01, 7, 2)", where="u")(t),
                                  WhiteNoise(0.1, 0.01, 7, mean=2.0)(t))
    with pytest.raises(ExpressionError, match=r"seed must be an integer.*white_noise\(0.1, 0.01, 1.5\)"):
        parse_signal("white_noise(0.1, 0.01, 1.5)", where="--input u")


@pytest.mark.parametrize(("arguments", "message"), [
    ((-0.1, 0.01, 1), "std must be >= 0"),
    ((float("nan"), 0.01, 1), "std must be finite"),
    ((0.1, 0.0, 1), "sample .* must be > 0"),
    ((0.1, -1.0, 1), "sample .* must be > 0"),
    ((0.1, float("inf"), 1), "sample .* must be finite"),
    ((0.1, 0.01, 1.5), "seed must be an integer"),
    ((0.1, 0.01, -1), "seed must be an integer"),
    ((0.1, 0.01, 2**53), "seed must be an integer"),
    ((0.1, 0.01, float("nan")), "seed must be an integer"),
    ((0.1, 0.01, True), "seed must be an integer"),
    ((0.1, 0.01, "7"), "seed must be an integer"),
])
def test_bad_input_is_one_line(arguments, message) -> None:
    with pytest.raises(InputError, match=message) as caught:
        WhiteNoise(*arguments)
    assert "\n" not in str(caught.value)


def test_seeds_given_as_whole_floats_are_the_same_stream() -> None:
    t = np.linspace(0, 1, 11)
    np.testing.assert_array_equal(WhiteNoise(1.0, 0.1, 3.0)(t), WhiteNoise(1.0, 0.1, np.int64(3))(t))
