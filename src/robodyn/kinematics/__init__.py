"""Kinematics of rigid-body models: frames, forward kinematics, Jacobians, inverse kinematics, frame paths
and animations of the arm (robodyn.kinematics.frames, .ik, .paths, .animate)."""

from robodyn.kinematics.frames import REFERENCES, Kinematics, Pose, kinematics

__all__ = ["REFERENCES", "Kinematics", "Pose", "kinematics"]
