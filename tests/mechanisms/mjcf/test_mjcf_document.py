"""Reading MJCF files: includes, default classes, and bad input refused with its line (nothing expanded, nothing
outside the model's folder read, no other program run)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from tests.cli_run import one_line, run

import robodyn
from robodyn.base.errors import InputError, ModelFileError, RobodynWarning
from robodyn.mechanisms.mjcf.document import MAX_DEPTH, class_table, is_mjcf_text, read_mjcf

ARM = """<mujoco model="arm">
  <compiler angle="{angle}"/>
  {extra}
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" axis="0 1 0" damping="0.1" {joint}/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      <body name="lower" pos="0 0 -0.5">
        <joint name="elbow" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor name="elbow" joint="elbow" gear="5"/></actuator>
</mujoco>
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def arm(folder: Path, *, angle: str = "degree", extra: str = "", joint: str = "", name: str = "arm.xml") -> Path:
    return write(folder, name, ARM.format(angle=angle, extra=extra, joint=joint))


def load(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobodynWarning)
        return robodyn.load(str(path))


def test_a_two_link_arm_loads_with_its_actuator_named_apart_from_its_joint(tmp_path: Path) -> None:
    robot = load(arm(tmp_path))
    assert robot.coordinates == ("shoulder", "elbow")
    assert robot.inputs == ("elbow_ctrl",)
    # the motor's force is gear * u on the elbow, nothing on the shoulder: B = M^-1 [0, 5]
    x = np.array([0.3, -0.2, 0.0, 0.0])
    delta = robot.f(0.0, x, [1.0]) - robot.f(0.0, x, [0.0])
    mass = robot.mass_raw(0.0, x, [0.0], robot.parameter_vector())
    np.testing.assert_allclose(delta[2:], np.linalg.solve(mass, [0.0, 5.0]), rtol=1e-12)


def test_includes_are_expanded_in_place_and_defaults_cascade(tmp_path: Path) -> None:
    write(tmp_path, "parts/defaults.xml", """<mujoco><default><joint damping="2"/>
      <default class="stiff"><joint stiffness="3"/><default class="stiffer"><joint stiffness="4"/></default></default>
      </default></mujoco>""")
    path = arm(tmp_path, extra='<include file="parts/defaults.xml"/>', joint='class="stiffer"')
    root = read_mjcf(path)
    assert [c.tag for c in root.children][:2] == ["compiler", "default"]
    classes = class_table(root)
    assert classes["stiffer"]["joint"] == {"damping": "2", "stiffness": "4"}  # the parents' values, then its own
    robot = load(path)
    shoulder = robot.joints[0]
    assert (shoulder.damping, shoulder.stiffness) == (0.1, 4.0)  # its own damping overrides the class's


@pytest.mark.parametrize(("included", "message"), [
    ('<include file="arm.xml"/>', "includes a file that includes it"),
    ('<include file="../outside.xml"/>', "leaves the model's folder"),
])
def test_includes_that_loop_or_leave_the_folder_are_refused_with_their_line(tmp_path: Path, included: str,
                                                                             message: str) -> None:
    write(tmp_path, "outside.xml", "<mujoco/>")
    folder = tmp_path / "model"
    path = arm(folder, extra=included)
    with pytest.raises(ModelFileError, match=message) as caught:
        load(path)
    assert "arm.xml:3:" in str(caught.value)


def test_a_loop_through_two_files_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "a.xml", '<mujoco><include file="b.xml"/></mujoco>')
    write(tmp_path, "b.xml", '<mujoco><include file="a.xml"/></mujoco>')
    path = arm(tmp_path, extra='<include file="a.xml"/>')
    with pytest.raises(ModelFileError, match=r"b\.xml:1: <include file='a\.xml'> includes a file that includes it"):
        load(path)


@pytest.mark.parametrize(("extra", "joint", "message"), [
    ("<sensors/>", "", r"arm.xml:3: <sensors> is not a section of <mujoco>"),
    ("", 'dampng="1"', r"arm.xml:6: <joint> has unknown attribute dampng"),
    ('<default><geom densty="3"/></default>', "", r"arm.xml:3: <geom> has unknown attribute densty"),
    ("", 'type="spherical"', r"arm.xml:6: <joint type='spherical'>: use hinge, slide, ball or free"),
    ("", 'class="nope"', r"arm.xml:6: <joint class='nope'> names no <default> class"),
    ('<option density="1.2"/>', "", r"arm.xml:3: <option density=...>: robodyn has no fluid forces"),
])
def test_unknown_or_unsupported_elements_are_named_with_their_line(tmp_path: Path, extra: str, joint: str,
                                                                  message: str) -> None:
    with pytest.raises(ModelFileError, match=message):
        load(arm(tmp_path, extra=extra, joint=joint))


@pytest.mark.parametrize("actuator, message", [
    ('<cylinder name="servo" joint="elbow" timeconst="0.2"/>', r"<cylinder> actuator 'servo'.*dynamics would be wrong"),
    ('<general name="servo" joint="elbow" dyntype="muscle"/>', r"<general> actuator 'servo'.*dynamics would be wrong"),
    ('<general name="servo" joint="elbow" dyntype="filter" actearly="true"/>', r"'servo'.*without actearly"),
    ('<general name="servo" joint="elbow" dyntype="filter" dynprm="0"/>', r"'servo' has the filter time constant "
                                                                            r"dynprm\[0\] = 0\.0: give a positive"),
    ('<general name="servo" joint="elbow" dyntype="filter" dynprm="nan"/>', r"time constant dynprm\[0\] = nan"),
    ('<general name="shoulder" joint="elbow" dyntype="filter"/><motor name="shoulder_act" joint="shoulder"/>',
     r"activation state 'shoulder_act' of actuator 'shoulder_ctrl' is named like"),
])
def test_actuators_whose_dynamics_robodyn_does_not_build_are_refused(tmp_path: Path, actuator: str, message: str
                                                                     ) -> None:
    text = ARM.format(angle="degree", extra="", joint="").replace('<motor name="elbow" joint="elbow" gear="5"/>',
                                                                  actuator)
    with pytest.raises(ModelFileError, match=r"arm.xml:14: .*" + message):
        load(write(tmp_path, "arm.xml", text))


def test_radian_angles_that_look_like_degrees_warn(tmp_path: Path) -> None:
    with pytest.warns(RobodynWarning, match=r"angle=\"radian\".*<joint> at line 6.*look like degrees"):
        robodyn.load(str(arm(tmp_path, angle="radian", joint='range="-90 90"')))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RobodynWarning)
        robodyn.load(str(arm(tmp_path, angle="radian", joint='range="-1.5 1.5"', name="fine.xml")))
    assert not [w for w in caught if "degrees" in str(w.message)]


def test_what_robodyn_leaves_out_is_one_warning_naming_it(tmp_path: Path) -> None:
    extra = '<equality><joint name="tie" joint1="shoulder" joint2="elbow"/></equality>'
    with pytest.warns(RobodynWarning, match=r"contacts between geoms \(2 geoms.*<joint> equality constraint tie "
                                            r"\(.*arm.xml:3\)"):
        robodyn.load(str(arm(tmp_path, extra=extra)))


def test_entities_deep_nesting_and_other_roots_are_refused(tmp_path: Path) -> None:
    bomb = write(tmp_path, "bomb.xml", '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaa">]><mujoco>&a;</mujoco>')
    with pytest.raises(ModelFileError, match="declares a DTD or entities"):
        load(bomb)
    deep = write(tmp_path, "deep.xml", "<mujoco><worldbody>" + "<body>" * MAX_DEPTH + "</body>" * MAX_DEPTH
                 + "</worldbody></mujoco>")
    with pytest.raises(ModelFileError, match=f"nests elements deeper than {MAX_DEPTH}"):
        load(deep)
    other = write(tmp_path, "robot.xml", "<robot name='r'/>")
    with pytest.raises(ModelFileError, match="root element is <mujoco>"):
        load(other)
    assert is_mjcf_text("<?xml version='1.0'?><!-- a model --><mujoco model='m'/>")
    assert not is_mjcf_text("<mujocox/>")


def test_mesh_files_outside_the_model_folder_are_refused(tmp_path: Path) -> None:
    text = ARM.format(angle="degree", extra='<asset><mesh name="m" file="../../etc/part.stl"/></asset>', joint="")
    text = text.replace('<geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04"/>', '<geom type="mesh" mesh="m"/>')
    with pytest.raises(ModelFileError, match=r"arm.xml:3: mesh file '../../etc/part.stl' is outside the model's "
                                             "folder"):
        load(write(tmp_path / "model", "arm.xml", text))


def test_a_xacro_file_is_refused_naming_the_xacro_command(tmp_path: Path) -> None:
    path = write(tmp_path, "robot.urdf.xacro", "<robot xmlns:xacro='http://www.ros.org/wiki/xacro'/>")
    with pytest.raises(InputError, match=r"run `xacro .*robot.urdf.xacro > robot.urdf` first"):
        robodyn.load(str(path))


def test_bad_input_on_the_command_line_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    path = arm(tmp_path, joint='dampng="1"')
    code, _, err = run(capsys, "show", str(path))
    assert code == 2 and "arm.xml:6: <joint> has unknown attribute dampng" in one_line(err)
    code, _, err = run(capsys, "show", str(write(tmp_path, "r.urdf.xacro", "<robot/>")))
    assert code == 2 and "xacro" in one_line(err)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX only")
def test_pipes_and_huge_files_are_refused_before_reading(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe.xml"
    os.mkfifo(pipe)
    with pytest.raises(ModelFileError, match="not a regular file"):
        robodyn.load(str(pipe))
    big = tmp_path / "big.xml"
    big.write_bytes(b"<mujoco>" + b" " * 10_000_001 + b"</mujoco>")
    with pytest.raises(ModelFileError, match="larger than the limit"):
        robodyn.load(str(big))
    included = arm(tmp_path, extra='<include file="pipe.xml"/>')
    with pytest.raises(ModelFileError, match="not a regular file"):
        robodyn.load(str(included))


def test_mocap_bodies_are_left_out(tmp_path: Path) -> None:
    plain = load(arm(tmp_path))
    text = ARM.format(angle="degree", extra="", joint="").replace(
        "<worldbody>", '<worldbody><body name="target" mocap="true" pos="1 0 0"><geom size="0.1"/></body>')
    with_target = load(write(tmp_path, "target.xml", text))
    x = np.array([0.3, -0.2, 0.1, 0.4])
    np.testing.assert_array_equal(with_target.f(0.0, x, [0.5]), plain.f(0.0, x, [0.5]))
