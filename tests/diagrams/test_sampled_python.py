"""A sampled block written in Python (``robodyn.System(..., sample=T)``) in a diagram whose other blocks are
compiled: the same run as the same controller written as a ``kind: discrete`` file, the plant still compiled.

The controller is a discrete PD (e_prev the last error): as Python callables and as symbolic update and output
expressions. Both diagrams step the same instants with the same held values, so the runs agree to rounding
(the flow is the same compiled plant; the instants' arithmetic is the same operations in another order).
"""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError

T = 1e-3
KP, KD = 20.0, 0.5


def python_pd(sample: float = T) -> robodyn.System:
    def update(t, x, u, p):
        return [u[0] - u[1]]

    def output(t, x, u, p):
        error = u[0] - u[1]
        return [p[0] * error + p[1] * (error - x[0]) / sample]

    return robodyn.System(update, ["e_prev"], ["r", "y"], h=output, outputs=["u"], parameters={"kp": KP, "kd": KD},
                          name="pd", sample=sample)


def loop(controller) -> robodyn.Diagram:
    return robodyn.Diagram({"plant": robodyn.load("joint"), "pd": controller}, ["pd.u -> plant.u", "plant.q -> pd.y"],
                           inputs={"r": "pd.r"}, outputs={"q": "plant.q"}, name="loop")


def test_a_python_sampled_block_runs_as_its_symbolic_twin() -> None:
    symbolic = robodyn.read_model_text(
        f"name: pd\nkind: discrete\nsample: {T}\nstates: [e_prev]\ninputs: [r, y]\n"
        f"parameters: {{kp: {KP}, kd: {KD}}}\nupdate: {{e_prev: r - y}}\n"
        f"outputs: {{u: 'kp*(r - y) + kd*(r - y - e_prev)/{T}'}}\n", "pd.yaml")
    ours, theirs = loop(python_pd()), loop(symbolic)
    assert ours.sampling().every == {"pd": 1} and ours.blocks["pd"].sample_period == T
    a = robodyn.simulate(ours, 0.5, np.zeros(3), {"r": 1.0})
    b = robodyn.simulate(theirs, 0.5, np.zeros(3), {"r": 1.0})
    np.testing.assert_array_equal(a.t, b.t)
    # 500 instants of a stable loop: rounding differences of ~1e-16 per instant, not amplified
    np.testing.assert_allclose(a.x, b.x, rtol=0, atol=1e-12)
    assert abs(a.x[-1, 0] - b.x[-1, 0]) < 1e-12 and a.x[-1, 0] > 0.5  # it moved toward r


def test_a_sampled_static_map_needs_no_state() -> None:
    gain = robodyn.System(lambda t, x, u, p: np.zeros(0), [], ["error"], h=lambda t, x, u, p: [5.0 * u[0]],
                          outputs=["u"], sample=T, name="gain")
    assert gain.n_states == 0 and gain.sample_period == T
    loop_ = robodyn.Diagram({"plant": robodyn.load("joint"), "k": gain, "sum": robodyn.blocks.sum("+-")},
                            ["sum.y -> k.error", "k.u -> plant.u", "plant.q -> sum.u2"], inputs={"r": "sum.u1"},
                            name="p_loop")
    run = robodyn.simulate(loop_, 0.2, np.zeros(2), {"r": 1.0})
    assert np.all(np.isfinite(run.x)) and run.x[-1, 0] > 0.0


def test_a_continuous_system_still_needs_a_state() -> None:
    with pytest.raises(InputError, match="needs at least one state"):
        robodyn.System(lambda t, x, u, p: [], [], ["u"])
    with pytest.raises(InputError, match="sample period must be"):
        python_pd(sample=-1.0)


def test_a_python_sampled_block_is_linearized_by_differences_as_its_symbolic_twin_exactly() -> None:
    """A block without exact Jacobians (Python callables) is differenced (Richardson-extrapolated central
    differences) where the symbolic twin has exact ones: the PD's maps are linear, so the differences are exact but
    for rounding (~1e-16 of the values over the step 6e-6, times kd/T = 500)."""
    symbolic = robodyn.read_model_text(
        f"name: pd\nkind: discrete\nsample: {T}\nstates: [e_prev]\ninputs: [r, y]\n"
        f"parameters: {{kp: {KP}, kd: {KD}}}\nupdate: {{e_prev: r - y}}\n"
        f"outputs: {{u: 'kp*(r - y) + kd*(r - y - e_prev)/{T}'}}\n", "pd.yaml")
    ours = robodyn.linearize(loop(python_pd()), np.zeros(3), [0.0])
    theirs = robodyn.linearize(loop(symbolic), np.zeros(3), [0.0])
    assert ours.dt == theirs.dt == T
    for name in "ABCD":
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=0, atol=1e-7)
    assert np.max(np.abs(ours.A)) > 1.0  # the loop moves: a matrix that could differ
