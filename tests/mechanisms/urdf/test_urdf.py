"""Tests for URDF robots on both backends — robodyn's compiled tape (robodyn.mechanisms.urdf.chain, the default)
and Pinocchio (robodyn.mechanisms.urdf.pinocchio) — against a hand-written Lagrangian model and against each other.

Reference for the two-link arm: M. W. Spong, S. Hutchinson, M. Vidyasagar, *Robot Modeling and
Control*, section 7.4.2 (two-link planar manipulator). The URDF's axes point along -y, so positive angles
raise the arm and the textbook potential V = g (m1 lc1 sin q1 + m2 (l1 sin q1 + lc2 sin(q1 + q2))) holds.
"""

from __future__ import annotations

import builtins
import math
from pathlib import Path

import numpy as np
import pytest

pinocchio = pytest.importorskip("pinocchio")

import robodyn  # noqa: E402
from robodyn import InputError, LagrangianSystem  # noqa: E402
from robodyn.cli import main  # noqa: E402
from robodyn.mechanisms.urdf.chain import UrdfRobot  # noqa: E402
from robodyn.mechanisms.urdf.pinocchio import INSTALL_HINT, JointLimits, UrdfSystem, load_urdf  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
TWO_LINK = EXAMPLES / "two_link_arm.urdf"
THREE_DOF = EXAMPLES / "three_dof_arm.urdf"

# The numbers written in examples/two_link_arm.urdf (I = iyy about the centre of mass, the axis of motion).
M1, L1, LC1, I1 = 2.0, 1.0, 0.5, 0.17
M2, LC2, I2 = 1.0, 0.4, 0.054
G = 9.81

# Pinocchio and the lambdified sympy model agree to rounding: entries are O(1..100), so their difference
# is a few 1e-14; 1e-10 leaves four orders of margin and still catches any modelling error (>= 1e-3).
EXACT = {"rtol": 1e-10, "atol": 1e-10}


def _reference() -> LagrangianSystem:
    off_diagonal = "m2*(lc2**2 + l1*lc2*cos(elbow)) + I2"
    mass = [["m1*lc1**2 + I1 + m2*(l1**2 + lc2**2 + 2*l1*lc2*cos(elbow)) + I2", off_diagonal],
            [off_diagonal, "m2*lc2**2 + I2"]]
    qd = ["shoulder_dot", "elbow_dot"]
    kinetic = " + ".join(f"({mass[i][j]})*{qd[i]}*{qd[j]}/2" for i in range(2) for j in range(2))
    return LagrangianSystem(
        ["shoulder", "elbow"], ["shoulder_tau", "elbow_tau"], kinetic=kinetic,
        potential="g*(m1*lc1*sin(shoulder) + m2*(l1*sin(shoulder) + lc2*sin(shoulder + elbow)))",
        forces={"shoulder": "shoulder_tau", "elbow": "elbow_tau"},
        parameters={"m1": M1, "l1": L1, "lc1": LC1, "I1": I1, "m2": M2, "lc2": LC2, "I2": I2, "g": G},
        name="two_link_reference",
    )


ARM = load_urdf(TWO_LINK)
ARM3 = load_urdf(THREE_DOF)
TAPE_ARM = robodyn.load(str(TWO_LINK))
TAPE_ARM3 = robodyn.load(str(THREE_DOF))
ARMS = pytest.mark.parametrize("arm", [TAPE_ARM, ARM], ids=["tape", "pinocchio"])
MODELS = pytest.mark.parametrize("model", [TAPE_ARM, TAPE_ARM3, ARM, ARM3],
                                 ids=["two_link-tape", "three_dof-tape", "two_link-pinocchio", "three_dof-pinocchio"])
REFERENCE = _reference()
RNG = np.random.default_rng(20261130)


def _random_points(model: robodyn.Model, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    n = model.n_coordinates
    return [(np.concatenate([RNG.uniform(-math.pi, math.pi, n), RNG.uniform(-3, 3, n)]), RNG.uniform(-5, 5, n))
            for _ in range(count)]


# --- structure ---------------------------------------------------------------------------------------------
def test_the_default_backend_is_the_tape_and_pinocchio_is_an_option():
    assert isinstance(TAPE_ARM, UrdfRobot) and TAPE_ARM.kind == "urdf" and TAPE_ARM.compilable
    assert isinstance(robodyn.load(str(TWO_LINK), backend="pinocchio"), UrdfSystem)
    assert TAPE_ARM.path == TWO_LINK
    with pytest.raises(InputError, match="unknown URDF backend 'pin': use one of tape, pinocchio"):
        robodyn.load(str(TWO_LINK), backend="pin")
    with pytest.raises(InputError, match=r"unknown options \['n'\]: a URDF robot takes backend, dynamics, check_inert"):
        robodyn.load(str(TWO_LINK), n=3)


@ARMS
def test_names_order_and_limits(arm):
    assert arm.order == 2
    assert arm.states == ("shoulder", "elbow", "shoulder_dot", "elbow_dot")
    assert arm.inputs == ("shoulder_tau", "elbow_tau")
    assert arm.outputs == arm.states and dict(arm.parameters) == {}
    assert arm.limits["shoulder"] == JointLimits(-3.14, 3.14, 5.0, 50.0)
    assert arm.limits["elbow"] == JointLimits(-2.5, 2.5, 8.0, 20.0)
    assert [j.type for j in arm.joint_records] == ["revolute", "revolute", "fixed"]
    np.testing.assert_array_equal(arm.h(0.0, [0.1, 0.2, 0.3, 0.4]), [0.1, 0.2, 0.3, 0.4])
    assert TAPE_ARM3.coordinates == ARM3.coordinates == ("base_yaw", "shoulder_pitch", "elbow_pitch")


@ARMS
def test_calls_are_validated_like_other_models(arm):
    with pytest.raises(InputError, match="shape"):
        arm.f(0.0, [0.1, 0.2])
    with pytest.raises(InputError, match="unknown input"):
        arm.f(0.0, [0.0] * 4, {"shoulder": 1.0})
    with pytest.raises(InputError, match="not finite"):
        arm.jacobians(0.0, [math.nan, 0, 0, 0])
    by_name = arm.f(0.0, {"shoulder": 0.1, "elbow": 0.2, "shoulder_dot": 0.3, "elbow_dot": 0.4}, {"elbow_tau": 1.0})
    np.testing.assert_array_equal(by_name, arm.f(0.0, [0.1, 0.2, 0.3, 0.4], [0.0, 1.0]))


# --- against the textbook two-link arm ------------------------------------------------------------------
@ARMS
def test_mass_matrix_bias_and_dynamics_match_the_lagrangian_model(arm):
    for x, u in _random_points(arm, 20):
        q, qd = x[:2], x[2:]
        np.testing.assert_allclose(arm.mass_matrix(q), REFERENCE.mass_matrix(q), **EXACT)
        mass = REFERENCE.mass_matrix(q)
        # M q'' = tau - (C q' + g): the bias is tau - M q'' at any tau.
        bias = u - mass @ REFERENCE.f(0.0, x, u)[2:]
        np.testing.assert_allclose(arm.bias(q, qd), bias, **EXACT)
        gravity = -mass @ REFERENCE.f(0.0, np.r_[q, 0.0, 0.0])[2:]  # at rest and unactuated: M q'' = -g
        np.testing.assert_allclose(arm.gravity(q), gravity, **EXACT)
        np.testing.assert_allclose(arm.f(0.0, x, u), REFERENCE.f(0.0, x, u), **EXACT)
        qdd = RNG.uniform(-4, 4, 2)
        np.testing.assert_allclose(arm.inverse_dynamics(q, qd, qdd), mass @ qdd + bias, **EXACT)


@ARMS
def test_linearization_matches_the_lagrangian_model(arm):
    for x, u in _random_points(arm, 10):
        ours, theirs = robodyn.linearize(arm, x, u), robodyn.linearize(REFERENCE, x, u)
        assert ours.method == arm.jacobian_method and ours.error_estimate == 0.0
        np.testing.assert_allclose(ours.A, theirs.A, **EXACT)
        np.testing.assert_allclose(ours.B, theirs.B, **EXACT)
        np.testing.assert_array_equal(ours.C, np.eye(4))
        dfdx, dfdu = arm.jacobians(0.0, x, u)
        np.testing.assert_allclose(dfdx, REFERENCE.jacobians(0.0, x, u)[0], **EXACT)
        np.testing.assert_allclose(dfdu, REFERENCE.jacobians(0.0, x, u)[1], **EXACT)


# --- properties of both robots ------------------------------------------------------------------------------
@MODELS
def test_mass_matrix_is_symmetric_positive_definite_and_inverse_of_minv(model):
    for x, u in _random_points(model, 20):
        mass = model.mass_matrix(x[: model.n_coordinates])
        np.testing.assert_array_equal(mass, mass.T)
        assert np.linalg.eigvalsh(mass)[0] > 0
        # df/du = M^-1 (Pinocchio: from the ABA derivatives; tape: the solve in the compiled Jacobian)
        # against the inverse of M (CRBA; tape: the mass function): two algorithms each.
        np.testing.assert_allclose(model.jacobians(0.0, x, u)[1][model.n_coordinates:] @ mass,
                                   np.eye(model.n_coordinates), atol=1e-10)


@pytest.mark.parametrize(("tape", "reference"), [(TAPE_ARM, ARM), (TAPE_ARM3, ARM3)], ids=["two_link", "three_dof"])
def test_the_backends_agree(tape, reference):
    # Two implementations of the same rigid-body dynamics; values O(1..100) agree to a few 1e-14.
    for x, u in _random_points(tape, 10):
        n = tape.n_coordinates
        q, qd = x[:n], x[n:]
        np.testing.assert_allclose(tape.f(0.0, x, u), reference.f(0.0, x, u), **EXACT)
        for got, want in zip(tape.jacobians(0.0, x, u), reference.jacobians(0.0, x, u)):
            np.testing.assert_allclose(got, want, **EXACT)
        np.testing.assert_allclose(tape.gravity(q), reference.gravity(q), **EXACT)
        np.testing.assert_allclose(tape.bias(q, qd), reference.bias(q, qd), **EXACT)
        assert tape.potential_energy(q) == pytest.approx(reference.potential_energy(q), rel=1e-12, abs=1e-12)
        assert tape.kinetic_energy(q, qd) == pytest.approx(reference.kinetic_energy(q, qd), rel=1e-12)


@MODELS
def test_jacobians_match_central_differences(model):
    # Step h = eps^(1/3) max(1, |z|) ~ 6e-6: truncation h^2 |f'''| / 6 ~ 1e-10 and rounding
    # eps |f| / h ~ 1e-9 for |f| ~ 50, so 1e-6 relative to max |J| is a safe margin over both.
    n = model.n_states
    for x, u in _random_points(model, 5):
        z = np.concatenate([x, u])
        numeric = np.empty((n, z.size))
        for k in range(z.size):
            h = np.finfo(float).eps ** (1 / 3) * max(1.0, abs(z[k]))
            up, down = z.copy(), z.copy()
            up[k] += h
            down[k] -= h
            numeric[:, k] = (model.f(0.0, up[:n], up[n:]) - model.f(0.0, down[:n], down[n:])) / (2 * h)
        dfdx, dfdu = model.jacobians(0.0, x, u)
        exact = np.hstack([dfdx, dfdu])
        assert np.max(np.abs(exact - numeric)) <= 1e-6 * max(1.0, np.max(np.abs(exact)))


@MODELS
def test_unactuated_arm_conserves_energy(model):
    n = model.n_coordinates
    x0 = np.concatenate([np.linspace(0.4, 0.9, n), np.linspace(-1.0, 1.5, n)])
    trajectory = robodyn.simulate(model, (0.0, 2.0), x0, method="dop853", rtol=1e-12, atol=1e-12)
    pin_model = ARM3.pinocchio_model if n == 3 else ARM.pinocchio_model  # the potential from Pinocchio
    pin_data = pinocchio.Data(pin_model)
    kinetic = np.array([0.5 * x[n:] @ model.mass_matrix(x[:n]) @ x[n:] for x in trajectory.x])
    potential = np.array([pinocchio.computePotentialEnergy(pin_model, pin_data, x[:n]) for x in trajectory.x])
    energy = kinetic + potential
    # Relative to the energy exchanged (max T), so the arbitrary zero of V does not flatter the result.
    # dop853 at rtol 1e-12 keeps the local error ~1e-12 per step; over a few hundred steps 1e-9 is ample.
    assert np.max(np.abs(energy - energy[0])) <= 1e-9 * np.max(kinetic)
    assert np.ptp(kinetic) > 0.1 * np.max(kinetic)  # energy really moved between T and V


@ARMS
def test_simulate_with_every_path_agrees(arm):
    x0 = {"shoulder": 0.5, "elbow": -0.3}
    u = {"shoulder_tau": 2.0}
    reference = robodyn.simulate(arm, (0.0, 1.0), x0, u, method="dop853", rtol=1e-12, atol=1e-12).final
    for method in ("dopri5", "radau"):  # radau uses the analytic Jacobian (stiff._jacobian)
        final = robodyn.simulate(arm, (0.0, 1.0), x0, u, method=method, rtol=1e-10, atol=1e-10).final
        np.testing.assert_allclose(final, reference, rtol=1e-6, atol=1e-6)


@ARMS
def test_radau_is_given_the_analytic_jacobian(arm):
    from robodyn.integrate.paths.stiff import _jacobian
    from robodyn.signals import resolve_inputs

    jac = _jacobian(arm, resolve_inputs(arm.inputs, None), np.zeros(0), lambda t, x: np.zeros(2))
    assert jac is not None
    x = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_array_equal(jac(0.0, x), arm.jacobians(0.0, x)[0])


# --- command line -----------------------------------------------------------------------------------------
def test_cli_simulate_and_show(capsys):
    assert main(["simulate", str(TWO_LINK), "--t-final", "1", "--x0", "shoulder=0.5"]) == 0
    assert "final state: shoulder =" in capsys.readouterr().out
    assert main(["show", str(TWO_LINK)]) == 0
    out = capsys.readouterr().out
    assert "states   shoulder, elbow, shoulder_dot, elbow_dot" in out
    table = [line.split() for line in out.splitlines() if line.startswith(("joint", "shoulder ", "tool_mount"))]
    assert table[0] == ["joint", "type", "axis", "parent", "->", "child", "position", "velocity", "effort"]
    assert table[1] == ["shoulder", "revolute", "0", "-1", "0", "base_link", "->", "upper_arm", "[-3.14,", "3.14]",
                        "5", "50"]
    assert table[2] == ["tool_mount", "fixed", "-", "forearm", "->", "tool", "-", "-", "-"]


# --- bad input -------------------------------------------------------------------------------------------------
LINK = '<link name="{0}"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>' \
       '</inertial></link>'
JOINT = '<joint name="{0}" type="{1}"><parent link="{2}"/><child link="{3}"/><axis xyz="0 0 1"/>' \
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "robot.urdf"
    path.write_text(f'<?xml version="1.0"?>\n<robot name="bad">\n{body}\n</robot>\n')
    return path


BOTH = "both"
ROD = ('<link name="{0}"><inertial><mass value="1"/><inertia ixx="0" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>'
       '</inertial></link>')
BAD_TRIANGLE = ('<link name="b"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" '
                'izz="0.3"/></inertial></link>')


@pytest.mark.parametrize(("backend", "body", "message"), [
    ("pinocchio", LINK.format("a") + LINK.format("b") + JOINT.format("wheel", "continuous", "a", "b"),
     r"joint 'wheel' is continuous.*load it with the default backend"),
    ("pinocchio", LINK.format("world") + LINK.format("base") + JOINT.format("root", "floating", "world", "base"),
     r"joint 'root' is floating: a floating base is not supported by the pinocchio backend"),
    ("tape", LINK.format("a") + LINK.format("b") + LINK.format("c") + JOINT.format("j", "revolute", "a", "b")
     + JOINT.format("free", "floating", "b", "c"),
     r"joint 'free' is floating: a floating joint is supported only between the root link and the robot"),
    (BOTH, '<link name="a"/><link name="b"/>' + JOINT.format("j", "revolute", "a", "b"),
     r"link 'b' \(moved by joint 'j'\) has no mass"),
    (BOTH, LINK.format("a") + LINK.format("b") + JOINT.format("j", "revolute", "a", "missing"),
     r"joint 'j': child link 'missing' is not defined"),
    (BOTH, LINK.format("a") + '<link name="b"><inertial><mass value="-1"/></inertial></link>'
     + JOINT.format("j", "revolute", "a", "b"), r"link 'b': mass -1.0 is negative"),
    (BOTH, LINK.format("a") + BAD_TRIANGLE + JOINT.format("j", "revolute", "a", "b"),
     r"link 'b'.*violates the triangle inequality.*0.1 \+ 0.1 < 0.3"),
    (BOTH, LINK.format("a") + LINK.format("b") + LINK.format("c") + JOINT.format("j", "revolute", "a", "b")
     + JOINT.format("k", "revolute", "b", "c") + JOINT.format("l", "revolute", "c", "b"),
     r"link 'b' is the child of (both 'j' and 'l'|two joints)"),
    (BOTH, LINK.format("a") + LINK.format("b") + LINK.format("c") + LINK.format("d")
     + JOINT.format("j", "revolute", "a", "b") + JOINT.format("k", "revolute", "c", "d")
     + JOINT.format("l", "revolute", "d", "c"),
     r"links \['c', 'd'\] are not connected to the root link 'a' \(a loop\)"),
    ("pinocchio", LINK.format("a") + LINK.format("b")
     + JOINT.format("j", "revolute", "a", "b").replace("<limit", "<limitx"),
     r"joint 'j' is revolute but has no <limit>"),
    ("pinocchio", LINK.format("a") + LINK.format("b")
     + JOINT.format("j", "revolute", "a", "b").replace("</joint>", '<dynamics damping="0.5"/></joint>'),
     r"joint 'j' has <dynamics damping=\"0.5\">.*pass dynamics=False to ignore it"),
    ("pinocchio", LINK.format("a") + LINK.format("b") + LINK.format("c") + JOINT.format("j", "prismatic", "a", "b")
     + JOINT.format("k", "prismatic", "a", "c").replace("</joint>", '<mimic joint="j"/></joint>'),
     r"joint 'k' mimics another joint.*default backend"),
])
def test_bad_urdf_is_refused_with_the_name_of_the_culprit(tmp_path, backend, body, message):
    path = _write(tmp_path, body)
    for name in ("tape", "pinocchio") if backend == BOTH else (backend,):
        with pytest.raises(InputError, match=message):
            robodyn.load(str(path), backend=name)


def test_what_only_the_pinocchio_backend_refuses_loads_on_the_tape(tmp_path):
    continuous = robodyn.load(str(_write(tmp_path, LINK.format("a") + LINK.format("b")
                                         + JOINT.format("wheel", "continuous", "a", "b"))))
    assert continuous.coordinates == ("wheel",) and continuous.limits["wheel"].upper is None
    assert [e.name for e in continuous.limit_events()] == []
    no_limit = robodyn.load(str(_write(tmp_path, LINK.format("a") + LINK.format("b")
                                       + JOINT.format("j", "revolute", "a", "b").replace("<limit", "<limitx"))))
    assert no_limit.limits["j"] == JointLimits(None, None, None, None)
    damped = _write(tmp_path, LINK.format("a") + LINK.format("b")
                    + JOINT.format("j", "revolute", "a", "b").replace("</joint>", '<dynamics damping="0.5"/></joint>'))
    x = [0.2, 1.5]
    tape, rigid = robodyn.load(str(damped)), robodyn.load(str(damped), backend="pinocchio", dynamics=False)
    # the damping torque b q' = 0.5 * 1.5 slows the joint by 0.75 / izz = 7.5 rad/s^2 (izz = 0.1, about its COM)
    assert tape.f(0.0, x)[1] == pytest.approx(rigid.f(0.0, x)[1] - 7.5, rel=1e-12)
    assert robodyn.load(str(damped), dynamics=False).f(0.0, x)[1] == pytest.approx(rigid.f(0.0, x)[1], rel=1e-12)


@pytest.mark.parametrize("backend", ["tape", "pinocchio"])
def test_an_unphysical_inertia_can_be_kept_on_request(tmp_path, backend):
    path = _write(tmp_path, LINK.format("a") + BAD_TRIANGLE + JOINT.format("j", "revolute", "a", "b"))
    with pytest.raises(InputError, match="or load the robot with check_inertia=False"):
        robodyn.load(str(path), backend=backend)
    model = robodyn.load(str(path), backend=backend, check_inertia=False)
    assert model.mass_matrix([0.0])[0, 0] == pytest.approx(0.3, rel=1e-12)  # izz about the joint axis


def test_semi_definite_inertias_are_physical(tmp_path):
    """A thin rod (one principal moment zero) and a point mass are real bodies: both backends load them."""
    body = (LINK.format("a") + ROD.format("b") + '<link name="c"><inertial><mass value="2"/><origin xyz="0.3 0 0"/>'
            '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>'
            + JOINT.format("j", "revolute", "a", "b").replace('<axis xyz="0 0 1"/>', '<axis xyz="0 1 0"/>')
            + JOINT.format("k", "revolute", "b", "c").replace('<axis xyz="0 0 1"/>', '<axis xyz="0 1 0"/>'))
    path = _write(tmp_path, body)
    tape, reference = robodyn.load(str(path)), robodyn.load(str(path), backend="pinocchio")
    q = [0.3, -0.4]
    np.testing.assert_allclose(tape.mass_matrix(q), reference.mass_matrix(q), **EXACT)


def test_massless_link_is_fine_when_not_needed(tmp_path):
    # The fixed tool link of the example has no inertial, and a massless middle link of a chain whose
    # outer link carries inertia about every axis keeps M positive definite.
    body = (LINK.format("a") + '<link name="b"/>' + LINK.format("c")
            + JOINT.format("j1", "revolute", "a", "b") + JOINT.format("j2", "revolute", "b", "c").replace(
                '<axis xyz="0 0 1"/>', '<origin xyz="0.5 0 0"/><axis xyz="0 1 0"/>'))
    for backend in ("tape", "pinocchio"):
        model = robodyn.load(str(_write(tmp_path, body)), backend=backend)
        assert model.coordinates == ("j1", "j2")


@pytest.mark.parametrize("backend", ["tape", "pinocchio"])
def test_malformed_xml_names_the_line(tmp_path, backend):
    path = _write(tmp_path, LINK.format("a") + "\n<joint name='j'")
    with pytest.raises(InputError, match=r"robot.urdf:\d+:\d+: malformed XML"):
        robodyn.load(str(path), backend=backend)
    (tmp_path / "other.urdf").write_text("<sdf/>")
    with pytest.raises(InputError, match="expected <robot>: not a URDF file"):
        robodyn.load(str(tmp_path / "other.urdf"), backend=backend)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match=r"nope\.urdf: no such file"):
        robodyn.load(str(tmp_path / "nope.urdf"))


def test_missing_pinocchio_says_how_to_install(monkeypatch):
    real_import = builtins.__import__

    def no_pinocchio(name, *args, **kwargs):
        if name == "pinocchio" or name.startswith("pinocchio."):
            raise ImportError("No module named 'pinocchio'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pinocchio)
    assert robodyn.load(str(TWO_LINK)).coordinates == ("shoulder", "elbow")  # the tape needs no Pinocchio
    with pytest.raises(InputError) as info:
        robodyn.load(str(TWO_LINK), backend="pinocchio")
    assert "install robodyn[urdf] (pip install 'robodyn[urdf]')" in str(info.value)
    assert INSTALL_HINT in str(info.value)


@ARMS
def test_simulation_stops_at_a_joint_limit(arm):
    """The elbow (limits +-2.5 rad) thrown upward at 10 rad/s crosses its upper limit: the terminal limit
    event ends the run exactly there (located to 1e-12 in t, so the angle matches to ~1e-11)."""
    events = arm.limit_events()
    assert {e.name for e in events} == {"shoulder_upper", "shoulder_lower", "elbow_upper", "elbow_lower"}
    run = robodyn.simulate(arm, 2.0, {"elbow": 2.0, "elbow_dot": 10.0}, method="dop853", rtol=1e-10, atol=1e-12,
                           events=events)
    assert [e.name for e in run.events] == ["elbow_upper"]
    assert run.t[-1] == pytest.approx(run.events[0].t, abs=1e-12) and run.t[-1] < 2.0
    assert run.state("elbow")[-1] == pytest.approx(2.5, abs=1e-9)


def test_nine_dof_arm_linearization_matches_central_differences():
    """The benchmark's 9-dof arm: Pinocchio's analytic derivatives vs robodyn's own central differences of
    the same forward dynamics, within the latter's Richardson estimate (plus rounding)."""
    arm = robodyn.load(str(EXAMPLES / "nine_dof_arm.urdf"))
    assert arm.n_states == 18 and arm.n_inputs == 9
    rng = np.random.default_rng(5)
    x, u = rng.uniform(-1, 1, 18), rng.uniform(-1, 1, 9)
    exact = robodyn.linearize(arm, x, u)
    callable_arm = robodyn.System(lambda t, x, u, p: arm.f(t, x, u), arm.states, arm.inputs, name="arm_fd")
    approx = robodyn.linearize(callable_arm, x, u, method="central")
    bound = 10 * approx.error_estimate + 1e-8 * (1 + np.max(np.abs(exact.A)))
    assert exact.method == "manipulator"
    assert np.max(np.abs(exact.A - approx.A)) <= bound
    assert np.max(np.abs(exact.B - approx.B)) <= bound
