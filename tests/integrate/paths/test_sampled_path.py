"""The sampled path's bookkeeping: the inputs' breakpoints found once per chunk of intervals are those asked of each
interval alone (the path before), and a run with breakpoints inside its intervals, an uneven t_eval and a Python
sampled block gives the same bits whichever way they are found."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
import robodyn.integrate.paths.sampled as path
import robodyn.signals.noise as noise
from robodyn.signals import Pulse, WhiteNoise, resolve_inputs

T = 1e-3


def signals() -> dict[str, object]:
    """Edges inside the sample intervals: a pulse of period 0.7 T, noise held over 1.3 T from an odd start."""
    return {"a": Pulse(0.0002, 0.0003, 1.0, 0.0, period=0.7 * T),
            "b": WhiteNoise(0.1, 1.3 * T, seed=3, start=0.00011)}


def test_the_breakpoints_of_each_interval_are_those_asked_alone() -> None:
    inputs = resolve_inputs(["a", "b"], signals())
    instants = T * np.arange(2 * path.CHUNK + 7)  # three chunks
    t1 = float(instants[-1]) + 0.4 * T  # a last interval shorter than T
    stops = path._Stops(inputs, instants, t1)
    ends = [*instants[1:], t1]
    for k, (a, b) in enumerate(zip(instants, ends, strict=True)):
        found = stops.inside(k, float(a), float(b))
        expected = inputs.breakpoints(float(a), float(b))
        np.testing.assert_array_equal(found, expected)  # the same times, exactly
        assert found.size > 0 or found is path._NO_STOPS  # none: the one shared empty array


def test_too_many_edges_for_a_chunk_are_asked_interval_by_interval(monkeypatch) -> None:
    inputs = resolve_inputs(["b"], {"b": WhiteNoise(0.1, 0.05 * T, seed=3)})  # 20 edges per interval
    instants = T * np.arange(path.CHUNK + 3)
    monkeypatch.setattr(noise, "MAX_EDGES", 100)  # a chunk (20,000 edges) is refused, an interval (~22) is not
    stops = path._Stops(inputs, instants, float(instants[-1]))
    for k in (0, 5, path.CHUNK + 1):
        a, b = float(instants[k]), float(instants[k + 1])
        np.testing.assert_array_equal(stops.inside(k, a, b), inputs.breakpoints(a, b))
        assert (stops.times is None) == (k < path.CHUNK)  # the last chunk, two intervals, is not refused


def test_a_run_is_the_same_whichever_way_its_breakpoints_are_found(monkeypatch) -> None:
    gain = robodyn.System(lambda t, x, u, p: [x[0] + u[0]], ["s"], ["err"],
                          h=lambda t, x, u, p: [-3.0 * u[0] - 0.1 * x[0]], outputs=["u"], sample=T, name="pi")
    loop = robodyn.Diagram({"plant": robodyn.load("joint"), "k": gain, "sum": robodyn.blocks.sum("++")},
                           ["plant.q -> sum.u1", "sum.y -> k.err", "k.u -> plant.u"],
                           inputs={"a": "sum.u2"}, outputs={"q": "plant.q"}, name="noisy_loop")
    t_eval = np.sort(np.concatenate([np.linspace(0.0, 0.3, 77), [0.1, 0.1005]]))  # uneven, ending at t1
    u = {"a": signals()["a"]}
    run = robodyn.simulate(loop, 0.3, np.zeros(3), u, t_eval=t_eval)
    monkeypatch.setattr(path, "CHUNK", 1)  # one call per interval: the path's behaviour before chunks
    alone = robodyn.simulate(loop, 0.3, np.zeros(3), u, t_eval=t_eval)
    np.testing.assert_array_equal(run.t, alone.t)
    np.testing.assert_array_equal(run.x, alone.x)  # the same stops, the same steps: the same bits
    np.testing.assert_array_equal(run.t, t_eval)
    assert run.stats.steps > 300  # stopped at the pulse's edges inside the 300 intervals


@pytest.mark.parametrize("start", [0.0, 0.00031])
def test_the_loops_noise_is_the_signal_at_each_instant(start: float) -> None:
    """A sampled block reading held noise sees at t_k the value the signal has there (the one-time integer path)."""
    record = robodyn.System(lambda t, x, u, p: [u[0]], ["last"], ["v"], h=lambda t, x, u, p: [u[0]],
                            outputs=["seen"], sample=T, name="reader")
    diagram = robodyn.Diagram({"r": record}, [], inputs={"n": "r.v"}, outputs={"seen": "r.seen"}, name="reader_loop")
    source = WhiteNoise(0.2, T, seed=8, start=start)
    run = robodyn.simulate(diagram, 0.05, np.zeros(1), {"n": source})
    instants = T * np.arange(51)
    np.testing.assert_array_equal(run.y[:, 0], source(instants))  # held from each instant, read at it
