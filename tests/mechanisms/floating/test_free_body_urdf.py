"""A one-body URDF on a floating base (a satellite, a drone's body, a thrown box): a single <link> with an
<inertial> and no joint, alone or with links welded to it (a box with a camera).

References: the free rigid body's Newton-Euler equations about its centre of mass, m a_c = m g and
I_c w' + w x I_c w = 0 (gravity exerts no moment about the centre of mass), moved to the base frame's origin where
robodyn and Pinocchio place the base's velocity (Featherstone, *Rigid Body Dynamics Algorithms*, 2008, section 2.14);
Pinocchio's ``aba`` and ``computeABADerivatives`` on ``buildModelFromUrdf(path, JointModelFreeFlyer())``; for the
tumbling box, Euler's equations in the principal frame integrated apart by scipy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import robodyn
from robodyn.base.errors import InputError, ModelFileError
from robodyn.cli import main

pin = pytest.importorskip("pinocchio")

GRAVITY = np.array([0.0, 0.0, -9.81])
BOX = """<robot name="box">
  <link name="box">
    <inertial><mass value="2.0"/><origin xyz="0.1 -0.05 0.02" rpy="0.3 -0.2 0.5"/>
      <inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0.02" izz="0.25"/></inertial>
  </link>CAMERA
</robot>
"""
CAMERA = """
  <link name="camera">
    <inertial><mass value="0.3"/><origin xyz="0.01 0 0"/>
      <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.003"/></inertial>
  </link>
  <link name="lens"/>
  <joint name="camera_mount" type="fixed"><parent link="box"/><child link="camera"/>
    <origin xyz="0.2 0 0.1" rpy="0 0.4 0"/></joint>
  <joint name="lens_mount" type="fixed"><parent link="camera"/><child link="lens"/><origin xyz="0.05 0 0"/></joint>"""


def _file(tmp_path: Path, camera: bool) -> Path:
    path = tmp_path / ("box_camera.urdf" if camera else "box.urdf")
    path.write_text(BOX.replace("CAMERA", CAMERA if camera else ""), encoding="utf-8")
    return path


def _body(camera: bool) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, centre of mass (3,) and inertia about it (3, 3) in the box's frame, from the numbers above: each part
    turned into the box's frame, then moved to the common centre of mass (parallel-axis theorem)."""
    def turned(rpy: tuple[float, ...]) -> np.ndarray:
        return Rotation.from_euler("xyz", rpy).as_matrix()  # extrinsic x, y, z: Rz(yaw) Ry(pitch) Rx(roll)

    box = np.array([[0.1, 0.01, 0.0], [0.01, 0.2, 0.02], [0.0, 0.02, 0.25]])
    parts = [(2.0, np.array([0.1, -0.05, 0.02]), turned((0.3, -0.2, 0.5)) @ box @ turned((0.3, -0.2, 0.5)).T)]
    if camera:
        mount = turned((0.0, 0.4, 0.0))
        parts.append((0.3, np.array([0.2, 0.0, 0.1]) + mount @ np.array([0.01, 0, 0]),
                      mount @ np.diag([0.002, 0.002, 0.003]) @ mount.T))
    mass = sum(m for m, _, _ in parts)
    centre = sum(m * c for m, c, _ in parts) / mass
    inertia = sum(i + m * ((c - centre) @ (c - centre) * np.eye(3) - np.outer(c - centre, c - centre))
                  for m, c, i in parts)
    return mass, centre, inertia


def _newton_euler(q: np.ndarray, v: np.ndarray, camera: bool) -> np.ndarray:
    """v' (6,) of the free body: w' = I_c^-1 (-w x I_c w); the centre of mass's velocity in the body,
    v_c = v + w x c, obeys v_c' = R^T g - w x v_c, so v' = R^T g - w x (v + w x c) - w' x c."""
    _, centre, inertia = _body(camera)
    rotation = Rotation.from_quat(q[3:7]).as_matrix()  # (x, y, z, w): robodyn's and Pinocchio's order
    linear, w = v[:3], v[3:]
    w_dot = np.linalg.solve(inertia, -np.cross(w, inertia @ w))
    v_dot = rotation.T @ GRAVITY - np.cross(w, linear + np.cross(w, centre)) - np.cross(w_dot, centre)
    return np.concatenate([v_dot, w_dot])


def _random_state(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    quaternion = rng.normal(size=4)
    return np.concatenate([rng.normal(size=3), quaternion / np.linalg.norm(quaternion)]), 2 * rng.normal(size=6)


@pytest.mark.parametrize("camera", [False, True], ids=["box", "box_with_camera"])
def test_a_one_body_urdf_moves_on_a_floating_base(tmp_path: Path, camera: bool) -> None:
    """Its dynamics equal Newton-Euler's closed form and Pinocchio's aba with a free flyer (1e-12 of the largest
    entry: a 6 x 6 solve of well-conditioned numbers, round-off ~1e-15), M equals crba; a fixed base has nothing to
    move, and says how to move it."""
    path = _file(tmp_path, camera)
    model = robodyn.load(str(path), base="floating")
    assert (model.nq, model.nv, model.n_inputs) == (7, 6, 0) and model.root_link == "box"
    reference = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    data = reference.createData()
    rng = np.random.default_rng(9)
    for _ in range(5):
        q, v = _random_state(rng)
        ours = model.acceleration(q, v, np.zeros(0))
        exact = _newton_euler(q, v, camera)
        assert np.abs(ours - exact).max() <= 1e-12 * np.abs(exact).max()
        assert np.abs(ours - pin.aba(reference, data, q, v, np.zeros(6))).max() <= 1e-12 * np.abs(exact).max()
        mass = pin.crba(reference, data, q)
        assert np.abs(model.mass_matrix(q) - (np.triu(mass) + np.triu(mass, 1).T)).max() <= 1e-12 * mass.max()
        xdot = model.f(0.0, np.concatenate([q, v]))
        assert np.array_equal(xdot[7:], ours)
    with pytest.raises(ModelFileError, match=r"nothing to move \(a single free body moves with base='floating'\)"):
        robodyn.load(str(path))


def test_a_thrown_spinning_box_tumbles(tmp_path: Path) -> None:
    """Thrown up and spun about its intermediate principal axis (with a 0.3% perturbation), the box with its camera
    keeps its energy, its angular momentum about the centre of mass (world) and its centre of mass's parabola to the
    integrator's tolerance (rtol 1e-11), and flips: the spin along the intermediate axis reverses when Euler's
    equations, integrated apart in the principal frame, say so."""
    path = _file(tmp_path, camera=True)
    model = robodyn.load(str(path), base="floating")
    mass, centre, inertia = _body(camera=True)
    moments, axes = np.linalg.eigh(inertia)  # principal frame: columns e1, e2 (intermediate), e3
    w0 = axes @ np.array([0.01, 3.0, 0.01])
    rising = np.array([1.0, 0.0, 5.0])  # the centre of mass's initial velocity (world = body at t = 0)
    x0 = np.concatenate([[0, 0, 0, 0, 0, 0, 1], rising - np.cross(w0, centre), w0])
    times = np.linspace(0.0, 8.0, 1601)
    run = robodyn.simulate(model, 8.0, x0, rtol=1e-11, atol=1e-12, t_eval=times)
    rotations = Rotation.from_quat(run.x[:, 3:7]).as_matrix()
    w = run.x[:, 10:13]
    velocity = np.einsum("nij,nj->ni", rotations, run.x[:, 7:10] + np.cross(w, centre))  # of the centre, world
    height = run.x[:, 2] + np.einsum("nij,j->ni", rotations, centre)[:, 2]
    energy = 0.5 * mass * np.sum(velocity**2, axis=1) + 0.5 * np.einsum("ni,ij,nj->n", w, inertia, w) + (
        mass * 9.81 * height)
    momentum = np.einsum("nij,jk,nk->ni", rotations, inertia, w)
    # DOPRI5 at rtol 1e-11: the local errors add up over 8 s (measured: energy 2e-10, momentum 4e-14, velocity 1e-11)
    assert np.abs(energy - energy[0]).max() < 1e-9 * energy[0]
    assert np.abs(momentum - momentum[0]).max() < 1e-9 * np.linalg.norm(momentum[0])
    assert np.abs(velocity - (rising + np.outer(times, GRAVITY))).max() < 1e-9 * np.linalg.norm(rising)
    assert np.abs(np.linalg.norm(run.x[:, 3:7], axis=1) - 1).max() < 1e-13
    spin = w @ axes  # in the principal frame
    euler = solve_ivp(lambda t, s: np.cross(moments * s, s) / moments, (0.0, 8.0), spin[0], method="DOP853",
                      rtol=1e-13, atol=1e-14, t_eval=times)
    assert spin[:, 1].min() < -2.9 and euler.y[1].min() < -2.9  # it flips
    first = lambda s: times[np.argmax(s < 0)]  # noqa: E731  (the first sign change of the intermediate spin)
    assert abs(first(spin[:, 1]) - first(euler.y[1])) < 1e-6
    assert np.abs(spin - euler.y.T).max() < 1e-8  # the same motion to both integrators' tolerances (3e-12 seen)


def test_linearize_a_free_body_equals_pinocchio(tmp_path: Path) -> None:
    """In the tangent space (q (-) q0, v): the velocity rows are computeABADerivatives' da/dq, da/dv; the body has no
    input, so B has no column; the configuration rows are [-1/2 ad(v_base), I]."""
    path = _file(tmp_path, camera=True)
    model = robodyn.load(str(path), base="floating")
    reference = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    data = reference.createData()
    q, v = _random_state(np.random.default_rng(4))
    linear = robodyn.linearize(model, np.concatenate([q, v]))
    assert linear.A.shape == (12, 12) and linear.B.shape == (12, 0)
    ddq_dq, ddq_dv, _ = pin.computeABADerivatives(reference, data, q, v, np.zeros(6))
    scale = max(np.abs(ddq_dq).max(), np.abs(ddq_dv).max())
    assert np.abs(linear.A[6:, :6] - ddq_dq).max() <= 1e-11 * scale  # a derivative of the 6 x 6 solve: 1e-11
    assert np.abs(linear.A[6:, 6:] - ddq_dv).max() <= 1e-11 * scale
    assert np.array_equal(linear.A[:6, 6:], np.eye(6))


def test_the_chain_file_and_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``chain_yaml(..., base="floating")`` writes the free body as a chain file with the same dynamics; a base the
    file's root joint contradicts is refused; ``robodyn simulate --base floating`` runs it."""
    from robodyn.mechanisms.urdf.chain import chain_yaml

    path = _file(tmp_path, camera=True)
    written = tmp_path / "box.yaml"
    written.write_text(chain_yaml(path, base="floating"), encoding="utf-8")
    model, chain = robodyn.load(str(path), base="floating"), robodyn.load(str(written))
    q, v = _random_state(np.random.default_rng(2))
    assert np.abs(chain.acceleration(q, v) - model.acceleration(q, v)).max() < 1e-13
    with pytest.raises(InputError, match="base 'flying'"):
        chain_yaml(path, base="flying")
    code = main(["simulate", str(path), "--base", "floating", "--t-final", "0.5", "--x0", "base_wy=3"])
    out, err = capsys.readouterr()
    assert code == 0 and "final state: base_x" in out, (out, err)
