"""Kinematics of rigid-body models: frames, forward kinematics, Jacobians, inverse kinematics."""

from robodyn.kinematics.frames import REFERENCES, Kinematics, Pose, kinematics

__all__ = ["REFERENCES", "Kinematics", "Pose", "kinematics"]
