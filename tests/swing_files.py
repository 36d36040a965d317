"""A one-link swing with a cylinder to draw (a URDF) driven through a gain (a diagram file): the robot with shapes
the identification reports play in 3-D (tests/cli/test_cli_identify.py, tests/identification/test_identify.py)."""

from __future__ import annotations

from pathlib import Path

SWING = """<?xml version="1.0"?>
<robot name="swing">
  <link name="base"/>
  <joint name="hinge" type="revolute">
    <parent link="base"/><child link="rod"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" velocity="10" effort="10"/>
  </joint>
  <link name="rod">
    <inertial><origin xyz="0 0 -0.25"/><mass value="1"/>
      <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.001"/></inertial>
    <visual><origin xyz="0 0 -0.25"/><geometry><cylinder radius="0.02" length="0.5"/></geometry></visual>
  </link>
</robot>
"""
DRIVEN = """name: swing_driven
kind: diagram
blocks:
  arm: swing.urdf
  drive: {model: gain, parameters: {k: 0.3}}
connect:
  - drive.y -> arm.hinge_tau
inputs: {u: drive.u}
outputs: {q: arm.hinge}
"""


def write_swing(folder: Path) -> Path:
    """swing.urdf and swing_driven.yaml written into ``folder``; the diagram file's path."""
    (folder / "swing.urdf").write_text(SWING, encoding="utf-8")
    driven = folder / "swing_driven.yaml"
    driven.write_text(DRIVEN, encoding="utf-8")
    return driven
