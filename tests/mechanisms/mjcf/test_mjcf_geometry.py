"""MJCF placements and geom mass properties against MuJoCo's compiler (the same XML compiled by ``mujoco``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from robodyn.mechanisms.mjcf.document import Node
from robodyn.mechanisms.mjcf.geometry import NOTHING, Compiler, geom_mass, orientation

mujoco = pytest.importorskip("mujoco")

GEOMS = """<mujoco><worldbody><body name="a"><joint type="hinge"/>
<geom type="capsule" fromto="0.1 0.2 0.3 -0.3 0.5 0.9" size="0.05"/>
<geom type="box" size="0.1 0.2 0.3" pos="0.3 0 0" euler="10 20 30"/>
<geom type="ellipsoid" size="0.1 0.2 0.3" pos="0 0.3 0" xyaxes="1 1 0 0 1 2"/>
<geom type="cylinder" size="0.1 0.2" pos="0 0 0.3" zaxis="0 1 1" density="300"/>
<geom type="sphere" size="0.1" pos="0 0 -0.3" mass="2"/>
<geom type="box" fromto="0 0 0 0 0 -1" size="0.1 0.2"/>
<geom type="ellipsoid" fromto="0 0 0 1 0 0" size="0.1"/>
<geom type="capsule" fromto="0 0 0 0 0 -1" size="0.1"/>
</body></worldbody></mujoco>"""


@pytest.mark.parametrize(("sequence", "attribute", "value"), [
    ("xyz", "quat", "1 2 3 4"), ("XYZ", "euler", "10 20 30"), ("zyx", "euler", "10 20 30"),
    ("XyZ", "euler", "10 -50 30"), ("xyz", "axisangle", "1 2 3 40"), ("xyz", "xyaxes", "1 2 0 0 1 3"),
    ("xyz", "zaxis", "1 -2 3"), ("xyz", "zaxis", "0 0 -1"), ("xyz", "zaxis", "0 0 1"),
])
def test_every_orientation_form_matches_mujoco(sequence: str, attribute: str, value: str) -> None:
    model = mujoco.MjModel.from_xml_string(f'<mujoco><compiler angle="degree" eulerseq="{sequence}"/><worldbody>'
                                           f'<body {attribute}="{value}"><joint/><geom size="1"/></body>'
                                           "</worldbody></mujoco>")
    expected = np.zeros(9)
    mujoco.mju_quat2Mat(expected, model.body_quat[1])
    ours = orientation(Node("body", {attribute: value}, "x.xml", 1), Compiler(eulerseq=sequence))
    np.testing.assert_allclose(ours, expected.reshape(3, 3), rtol=0, atol=1e-15)  # rounding of unit entries


def test_geom_masses_and_inertias_match_mujocos_compiler() -> None:
    model = mujoco.MjModel.from_xml_string(GEOMS)
    total = NOTHING
    for geom in ET.fromstring(GEOMS).iter("geom"):
        attrib = dict(geom.attrib)
        total = total.plus(geom_mass(Node("geom", attrib, "x.xml", 1), attrib, Compiler()))
    turn = np.zeros(9)
    mujoco.mju_quat2Mat(turn, model.body_iquat[1])
    turn = turn.reshape(3, 3)
    inertia = turn @ np.diag(model.body_inertia[1]) @ turn.T
    # MuJoCo diagonalizes the sum (its principal axes by Jacobi iterations): agreement to a few ulps of the largest
    assert total.mass == pytest.approx(model.body_mass[1], rel=1e-14)
    np.testing.assert_allclose(total.com, model.body_ipos[1], rtol=0, atol=1e-14)
    np.testing.assert_allclose(total.inertia, inertia, rtol=0, atol=1e-13 * np.abs(inertia).max())
