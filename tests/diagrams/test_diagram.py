"""Diagrams (robodyn.diagrams.diagram): a joint or a pendulum closed by a controller block, against the closed loop
derived by hand, python-control's interconnect, the exact path and the trim solver; and every bad diagram."""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError, UnknownNameError

KP, KI, A_C = 20.0, 5.0, 2.0  # u = KP e + KI xc, xc' = -A_C xc + e, e = r - y


def controller(name: str = "pi") -> robodyn.LinearSystem:
    """A lag-PI controller with direct feedthrough: inputs r, y; output u."""
    return robodyn.LinearSystem(np.array([[-A_C]]), np.array([[1.0, -1.0]]), np.array([[KI]]),
                                np.array([[KP, -KP]]), states=("xc",), inputs=("r", "y"), outputs=("u",), name=name)


def closed_loop(plant: robodyn.Model, x: np.ndarray, ctrl: robodyn.LinearSystem) -> tuple[np.ndarray, np.ndarray]:
    """A, B of plant + controller with u = Cc xc + Dc [r, q], linearized by hand from the plant's own linearization."""
    lin = robodyn.linearize(plant, x[:2], [0.0])
    Ap, Bp = lin.A, lin.B
    Cq = np.array([[1.0, 0.0]])
    (dr, dy), (br, by) = ctrl.D[0], ctrl.B[0]
    A = np.block([[Ap + Bp @ (dy * Cq), Bp @ ctrl.C], [by * Cq, ctrl.A]])
    B = np.vstack([Bp * dr, [[br]]])
    return A, B


def loop(plant: str = "joint") -> robodyn.Diagram:
    return robodyn.Diagram({"plant": robodyn.load(plant), "pi": controller()},
                           ["pi.u -> plant.u", "plant.q -> pi.y"] if plant == "joint" else
                           ["pi.u -> plant.tau", "plant.theta -> pi.y"],
                           inputs={"r": "pi.r"}, outputs={"q": "plant.q" if plant == "joint" else "plant.theta"})


def test_names_and_parameters_are_the_blocks_prefixed():
    diagram = loop()
    assert diagram.states == ("plant.q", "plant.q_dot", "pi.xc")
    assert diagram.inputs == ("r",) and diagram.outputs == ("q",)
    assert dict(diagram.parameters) == {"plant.J": 0.01, "plant.b": 0.1, "plant.k": 1.0}
    assert diagram.kind == "diagram" and diagram.jacobian_method == "diagram"


def test_the_joint_loop_is_the_closed_loop_derived_by_hand():
    """Linear blocks: the diagram's exact linearization equals the hand-derived closed loop to rounding."""
    diagram = loop()
    linear = robodyn.linearize(diagram, np.array([0.2, -0.1, 0.3]), np.array([0.5]))
    A, B = closed_loop(robodyn.load("joint"), np.zeros(3), controller())
    np.testing.assert_allclose(linear.A, A, rtol=1e-14, atol=1e-12)
    np.testing.assert_allclose(linear.B, B, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(linear.C, [[1.0, 0.0, 0.0]], atol=0)
    assert linear.method == "diagram"


def test_the_joint_loop_agrees_with_python_control_interconnect():
    control = pytest.importorskip("control")
    joint = robodyn.linearize(robodyn.load("joint"), [0.0, 0.0])
    plant = control.ss(joint.A, joint.B, [[1.0, 0.0]], [[0.0]], inputs=["u"], outputs=["q"], name="plant")
    ctrl = controller()
    pi = control.ss(ctrl.A, ctrl.B, ctrl.C, ctrl.D, inputs=["r", "y"], outputs=["u"], name="pi")
    theirs = control.interconnect([plant, pi], connections=[["plant.u", "pi.u"], ["pi.y", "plant.q"]],
                                  inplist=["pi.r"], outlist=["plant.q"])
    ours = robodyn.linearize(loop(), np.zeros(3), np.zeros(1))
    poles_ours, poles_theirs = np.sort_complex(np.linalg.eigvals(ours.A)), np.sort_complex(theirs.poles())
    np.testing.assert_allclose(poles_ours, poles_theirs, rtol=1e-10)
    for s in (0.3j, 1.0 + 2.0j, 10j):  # the transfer functions at a few points of the plane
        ours_g = (ours.C @ np.linalg.solve(s * np.eye(3) - ours.A, ours.B) + ours.D)[0, 0]
        np.testing.assert_allclose(ours_g, theirs(s), rtol=1e-10)


def test_the_upright_pendulum_loop_is_the_hand_derived_one_exactly():
    """A nonlinear plant: the chain rule through the wires gives the hand-derived closed loop at theta = pi."""
    diagram = loop("pendulum")
    x = np.array([math.pi, 0.0, 0.0])
    linear = robodyn.linearize(diagram, x, np.zeros(1))
    A, B = closed_loop(robodyn.load("pendulum"), x, controller())
    np.testing.assert_allclose(linear.A, A, rtol=0, atol=1e-13)
    np.testing.assert_allclose(linear.B, B, rtol=0, atol=1e-13)
    central = robodyn.linearize(diagram, x, np.zeros(1), method="central")  # f itself, differenced
    np.testing.assert_allclose(central.A, linear.A, atol=1e-6)


def test_a_step_of_the_loop_equals_the_exact_closed_loop():
    diagram = loop()
    A, B = closed_loop(robodyn.load("joint"), np.zeros(3), controller())
    exact = robodyn.LinearSystem(A, B, np.array([[1.0, 0.0, 0.0]]), np.zeros((1, 1)))
    t_eval = np.linspace(0.0, 2.0, 41)
    ours = robodyn.simulate(diagram, 2.0, np.zeros(3), 1.0, method="dopri5", rtol=1e-11, atol=1e-13, t_eval=t_eval)
    reference = robodyn.simulate(exact, 2.0, np.zeros(3), 1.0, method="exact", t_eval=t_eval)
    np.testing.assert_allclose(ours.x, reference.x, atol=1e-9)
    np.testing.assert_allclose(ours.y[:, 0], reference.x[:, 0], atol=1e-9)


def test_trim_finds_the_reference_that_holds_an_output():
    """q = 0.5 at rest: x = -A^-1 B r and C x = 0.5 give r (the loop's DC gain is not 1: the lag's leak)."""
    diagram = loop()
    A, B = closed_loop(robodyn.load("joint"), np.zeros(3), controller())
    gain = (np.array([[1.0, 0.0, 0.0]]) @ -np.linalg.solve(A, B))[0, 0]
    point = robodyn.find_equilibrium(diagram, targets={"q": 0.5})[0]
    assert point.u[0] == pytest.approx(0.5 / gain, rel=1e-10)
    assert diagram.h(0.0, point.x, point.u)[0] == pytest.approx(0.5, abs=1e-10)


def test_parameters_of_blocks_can_be_overridden():
    diagram = loop()
    stiff = diagram.with_parameters({"plant.k": 4.0})
    A = robodyn.linearize(stiff, np.zeros(3), np.zeros(1)).A
    joint = robodyn.load("joint").with_parameters(k=4.0)
    expected, _ = closed_loop(joint, np.zeros(3), controller())
    np.testing.assert_allclose(A, expected, rtol=1e-14, atol=1e-12)


@pytest.mark.parametrize(("make", "error", "match"), [
    (lambda: robodyn.Diagram({"plant": robodyn.load("joint")}, ["pid.u -> plant.u"]), UnknownNameError,
     "unknown block 'pid'"),
    (lambda: robodyn.Diagram({"plant": robodyn.load("joint"), "pi": controller()}, ["pi.uu -> plant.u"]),
     UnknownNameError, r"block 'pi' has no output port 'uu' .*did you mean 'u'"),
    (lambda: robodyn.Diagram({"plant": robodyn.load("joint"), "pi": controller()},
                             ["pi.u -> plant.u", "plant.q -> pi.y", "plant.q_dot -> pi.y"], inputs={"r": "pi.r"}),
     InputError, "input pi.y is driven twice"),
    (lambda: robodyn.Diagram({"plant": robodyn.load("joint"), "pi": controller()}, ["pi.u -> plant.u"]),
     InputError, r"left unconnected: pi\.r, pi\.y"),
    (lambda: robodyn.Diagram({"a": controller("a"), "b": controller("b")}, ["a.u -> b.y", "b.u -> a.y"],
                             inputs={"r": ["a.r", "b.r"]}), InputError, "algebraic loop (a -> b -> a|b -> a -> b)"),
    (lambda: robodyn.Diagram({"plant.1": robodyn.load("joint")}), InputError, "is not a name"),
    (lambda: robodyn.Diagram({"plant": robodyn.load("joint")}, ["plant.q to plant.u"]), InputError,
     "is not \"block.output -> block.input\""),
    (lambda: robodyn.Diagram({"plant": "joint"}), InputError, "expected a robodyn model"),
    (lambda: robodyn.Diagram({}), InputError, "blocks must map"),
])
def test_bad_diagrams_say_what_is_wrong(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_a_loop_through_a_block_with_state_is_no_algebraic_loop():
    """The joint's outputs do not depend on its input: pi (feedthrough) -> plant -> pi is fine."""
    assert loop().n_states == 3


def test_feedthrough_is_judged_per_input():
    """A block whose output reads its first input at once and its second only through its state: a loop through
    the second input is no algebraic loop (an estimator fed the input it helped compute); through the first it
    is, named."""
    from robodyn.diagrams.build import feedthrough

    block = robodyn.LinearSystem(np.array([[-1.0]]), np.array([[0.0, 1.0]]), np.array([[1.0]]),
                                 np.array([[2.0, 0.0]]), states=("s",), inputs=("a", "b"), outputs=("y",), name="b")
    gain = robodyn.blocks.gain(k=-3.0)
    assert feedthrough(block) == {0} and feedthrough(gain) == {0} and feedthrough(robodyn.load("joint")) == set()
    ok = robodyn.Diagram({"blk": block, "k": gain}, ["blk.y -> k.u", "k.y -> blk.b"], inputs={"r": "blk.a"},
                         outputs={"y": "k.y"}, name="through_b")
    # y = -3 (2 r + s), s' = -s + y: the loop closes through the state, evaluated in one pass
    x, u = np.array([0.7]), np.array([0.2])
    np.testing.assert_allclose(ok.f(0.0, x, u), [-0.7 - 3.0 * (0.4 + 0.7)], rtol=1e-14)
    np.testing.assert_allclose(ok.h(0.0, x, u), [-3.0 * (0.4 + 0.7)], rtol=1e-14)
    with pytest.raises(InputError, match="algebraic loop"):
        robodyn.Diagram({"blk": block, "k": gain}, ["blk.y -> k.u", "k.y -> blk.a"], inputs={"r": "blk.b"},
                        name="through_a")


def test_one_pass_of_the_chain_rule_gives_all_four_matrices():
    """linearization_raw (A, B, C, D from one pass) equals the Jacobians of f and h asked for apart."""
    diagram = loop("pendulum")
    x, u, p = np.array([0.4, -0.3, 0.2]), np.array([0.1]), diagram.parameter_vector()
    both = np.concatenate([np.ravel(m) for m in (*diagram.jacobians_raw(0.0, x, u, p),
                                                 *diagram.output_jacobians_raw(0.0, x, u, p))])
    np.testing.assert_array_equal(diagram.linearization_raw(0.0, x, u, p), both)
