"""``robodyn view``: the page written (and nothing else), --at as fk places it, a run played, bad options and hostile
mesh paths refused in one line with exit code 2 before anything is written."""

from __future__ import annotations

import base64
import json
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.cli import main
from robodyn.kinematics.frames import kinematics

pytest.importorskip("trimesh")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # errors exit through fail
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _scene(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    return json.loads(re.search(r'<script id="robodyn-scene" type="application/json">(.*?)</script>', text).group(1))


def _poses(scene: dict) -> np.ndarray:
    packed = scene["poses"]
    raw = zlib.decompress(base64.b64decode(packed["data"]))
    return np.frombuffer(raw, dtype="<f4").reshape(packed["shape"])


def test_view_writes_one_page_at_the_configuration_given(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "arm.html"
    code, printed, err = run(capsys, "view", "two_link_arm", "--at", "shoulder=90deg,elbow=0.5", "--out", str(out))
    assert code == 0 and err == "" and "wrote" in printed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arm.html"]
    scene = _scene(out)
    kin = kinematics(robodyn.load("two_link_arm"))
    for k, link in enumerate(scene["links"]):  # float32 in the page: 1e-6 m
        np.testing.assert_allclose(_poses(scene)[0, k, 9:], kin.position([np.pi / 2, 0.5], link), atol=1e-6)


def test_view_plays_a_run_of_the_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    model = robodyn.load("two_link_arm")
    robodyn.simulate(model, 2.0, {"shoulder": 1.0}).to_csv(tmp_path / "run.csv")
    code, printed, _ = run(capsys, "view", "two_link_arm", "--trajectory", str(tmp_path / "run.csv"), "--target",
                           "0.5,0,0", "--out", str(tmp_path / "run.html"))
    assert code == 0 and "121 instants" in printed
    scene = _scene(tmp_path / "run.html")
    assert scene["target"] == [0.5, 0.0, 0.0] and len(scene["times"]) == 121


URDF = """<robot name="r">
  <link name="base"><visual><geometry><mesh filename="{mesh}"/></geometry></visual></link>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""


@pytest.mark.parametrize(("mesh", "message"), [
    ("package://../../etc/passwd", r"link 'base': mesh 'package://\.\./\.\./etc/passwd': '\.\.' is not a package name"),
    ("../../outside.stl", r"link 'base': mesh '\.\./\.\./outside.stl': resolves to .*outside the folders"),
])
def test_hostile_mesh_paths_are_one_line_and_nothing_is_written(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                               mesh: str, message: str) -> None:
    (tmp_path / "pkg" / "urdf").mkdir(parents=True)
    (tmp_path / "outside.stl").write_text("solid s\nendsolid s\n")
    urdf = tmp_path / "pkg" / "urdf" / "r.urdf"
    urdf.write_text(URDF.format(mesh=mesh))
    out = tmp_path / "out" / "r.html"
    out.parent.mkdir()
    code, printed, err = run(capsys, "view", str(urdf), "--out", str(out))
    assert code == 2 and printed == "" and len(err.strip().splitlines()) == 1 and re.search(message, err), err
    assert list(out.parent.iterdir()) == []


def test_a_missing_mesh_warns_and_the_page_is_written(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    urdf = tmp_path / "r.urdf"
    urdf.write_text(URDF.format(mesh="meshes/none.stl"))
    code, _, err = run(capsys, "view", str(urdf), "--out", str(tmp_path / "r.html"))
    assert code == 0 and re.search(r"link 'base': mesh 'meshes/none.stl' not found.*drawn as its frame", err), err
    assert _scene(tmp_path / "r.html")["missing"] == [0]


@pytest.mark.parametrize(("argv", "message"), [
    (["--package-dir", "nothing"], "--package-dir 'nothing': give NAME=DIR"),
    (["--target", "1,2"], "--target 1,2: give a point"),
    (["--at", "wrist=1"], "--at: 'wrist' is not a coordinate"),
    (["--out", "/proc/none/x.html"], "--out"),
])
def test_bad_options_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, _, err = run(capsys, "view", "two_link_arm", *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_view_plots_the_signals_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    model = robodyn.load("two_link_arm")  # an NPZ run carries its inputs (a CSV does not)
    robodyn.simulate(model, 1.0, {"shoulder": 1.0}, {"elbow_tau": 0.5}).to_npz(tmp_path / "run.npz")
    code, _, err = run(capsys, "view", "two_link_arm", "--trajectory", str(tmp_path / "run.npz"), "--plot",
                       "elbow,shoulder_dot", "--plot", "elbow_tau", "--out", str(tmp_path / "run.html"))
    assert code == 0, err
    assert [(s["group"], s["names"]) for s in _scene(tmp_path / "run.html")["series"]] == [
        ("states", ["elbow", "shoulder_dot"]), ("inputs", ["elbow_tau"])]
    code, _, err = run(capsys, "view", "two_link_arm", "--trajectory", str(tmp_path / "run.npz"), "--plot", "knee",
                       "--out", str(tmp_path / "bad.html"))
    assert code == 2 and "no signal 'knee'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "bad.html").exists()
