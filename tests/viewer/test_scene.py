"""robodyn.viewer.scene: the instants shown (real time at the display rate), packed arrays read back, every link's
pose equal to fk's at the interpolated configuration, meshes quantized within their stated precision."""

from __future__ import annotations

import base64
import zlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError, UnknownNameError
from robodyn.kinematics.frames import kinematics
from robodyn.viewer.geometry import RobotGeometry, Visual, frame_geometry
from robodyn.viewer.meshes import Mesh, MeshPart
from robodyn.viewer.scene import DISPLAY_RATE, display_times, pack, scene_data


def _unpack(packed: dict) -> np.ndarray:
    raw = zlib.decompress(base64.b64decode(packed["data"]))
    return np.frombuffer(raw, dtype="<" + packed["dtype"]).reshape(packed["shape"])


def test_a_run_is_shown_at_the_display_rate_whatever_its_sampling() -> None:
    times = display_times(np.linspace(0.0, 10.0, 10_001))  # 10 s at 1 kHz
    assert len(times) == 601 and times[0] == 0.0 and times[-1] == 10.0
    np.testing.assert_allclose(np.diff(times), 1 / DISPLAY_RATE, rtol=1e-9)
    uneven = display_times(np.array([0.5, 0.51, 0.7, 1.0]))  # the last instant is always shown
    assert uneven[0] == 0.5 and uneven[-1] == 1.0 and len(uneven) == 31
    assert list(display_times(np.array([2.0]))) == [2.0]


@pytest.mark.parametrize("array", [np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
                                   np.array([[0, 65535, 7]], dtype=np.uint16), np.array([2**32 - 1], dtype=np.uint32)])
def test_packed_arrays_read_back_exactly(array: np.ndarray) -> None:
    packed = pack(array)
    assert np.array_equal(_unpack(packed), array) and packed["dtype"] in ("f4", "u2", "u4")


def test_every_links_pose_is_fks_at_the_interpolated_configuration() -> None:
    model = robodyn.load("two_link_arm")
    kin = kinematics(model)
    t = np.array([0.0, 0.25, 1.0])
    q = np.array([[0.0, 0.0], [0.5, -1.0], [1.5, 0.3]])
    run = SimpleNamespace(t=t, x=np.hstack([q, np.zeros_like(q)]), states=model.states)
    scene = scene_data(kin, frame_geometry(kin), title="arm", trajectory=run)
    assert len(scene.times) == 61
    for k in (0, 7, 30, 60):
        qk = [np.interp(scene.times[k], t, q[:, 0]), np.interp(scene.times[k], t, q[:, 1])]
        for j, link in enumerate(scene.links):
            pose = kin.pose(qk, link)
            np.testing.assert_allclose(scene.poses[k, j, :9], pose.rotation.ravel(), atol=1e-14)
            np.testing.assert_allclose(scene.poses[k, j, 9:], pose.position, atol=1e-14)
    group, names, values = scene.series[0]  # the coordinates plotted under the run, at the shown instants
    assert (group, names) == ("coordinates", kin.coordinates)
    np.testing.assert_allclose(values[7], [np.interp(scene.times[7], t, q[:, j]) for j in range(2)], atol=1e-15)
    data = scene.as_json()
    np.testing.assert_allclose(_unpack(data["poses"]), scene.poses, atol=1e-6)  # float32 in the page
    assert data["links"][data["tool"]] == kin.default_frame


def test_meshes_are_quantized_within_a_65535th_of_their_extent_and_shared() -> None:
    kin = kinematics(robodyn.load("two_link_arm"))
    rng = np.random.default_rng(1)
    vertices = rng.uniform(-0.2, 0.3, (100, 3)).astype(np.float32)
    mesh = Mesh(Path("m.stl"), (MeshPart(vertices, rng.integers(0, 100, (50, 3)).astype(np.uint32), None),))
    visuals = tuple(Visual(link, np.eye(4), "mesh", (1.0, 1.0, 1.0), None, mesh) for link in kin.frames[:2])
    data = scene_data(kin, RobotGeometry(visuals), title="m").as_json()
    assert len(data["meshes"]) == 1 and [s["mesh"] for s in data["shapes"]] == [0, 0]  # read once, drawn twice
    part = data["meshes"][0][0]
    decoded = np.array(part["low"]) + np.array(part["span"]) * _unpack(part["positions"]) / 65535
    np.testing.assert_allclose(decoded, vertices, atol=0.5 / 65535 * 0.5 + 1e-7)  # half a step of a 0.5 m extent
    assert np.array_equal(_unpack(part["indices"]), mesh.parts[0].faces)


def test_a_target_must_be_a_point() -> None:
    kin = kinematics(robodyn.load("two_link_arm"))
    for bad in ([1.0, 2.0], [1.0, float("nan"), 0.0]):
        with pytest.raises(InputError, match="target"):
            scene_data(kin, frame_geometry(kin), title="x", target=bad)


def test_the_signals_plotted_are_the_runs_chosen_outputs_states_and_inputs_at_the_shown_instants() -> None:
    model = robodyn.load("two_link_arm")
    kin = kinematics(model)
    t = np.array([0.0, 0.3, 1.0])
    x = np.array([[0.0, 0.1, 1.0, -1.0], [0.4, -0.2, 0.5, 0.0], [1.0, 0.6, -0.3, 2.0]])
    run = SimpleNamespace(t=t, x=x, u=np.array([[1.0, 0.0], [2.0, -1.0], [0.0, 3.0]]), y=x[:, :2] * 10,
                          states=model.states, inputs=model.inputs, outputs=("tip_x", "tip_z"))
    scene = scene_data(kin, frame_geometry(kin), title="arm", trajectory=run,
                       plot=["elbow_dot", "tip_z", "shoulder_tau", "tip_z"])
    assert [(group, names) for group, names, _ in scene.series] == [
        ("states", ("elbow_dot",)), ("outputs", ("tip_z",)), ("inputs", ("shoulder_tau",))]
    for (_, _, values), column in zip(scene.series, (x[:, 3], run.y[:, 1], run.u[:, 0])):
        np.testing.assert_allclose(values[:, 0], np.interp(scene.times, t, column), rtol=0, atol=1e-15)
    default = scene_data(kin, frame_geometry(kin), title="arm", trajectory=run)
    assert [(group, names) for group, names, _ in default.series] == [
        ("coordinates", ("shoulder", "elbow")), ("inputs", ("shoulder_tau", "elbow_tau"))]
    with pytest.raises(UnknownNameError, match=r"no signal 'knee'.*shoulder, elbow, shoulder_dot, elbow_dot, tip_x"):
        scene_data(kin, frame_geometry(kin), title="arm", trajectory=run, plot=["knee"])
    with pytest.raises(InputError, match="give a trajectory"):
        scene_data(kin, frame_geometry(kin), title="arm", plot=["shoulder"])
    with pytest.raises(InputError, match="list of the run's signal names"):
        scene_data(kin, frame_geometry(kin), title="arm", trajectory=run, plot="shoulder")
