"""Kinematics of rigid-body models: frames, forward kinematics and Jacobians (:mod:`~robodyn.kinematics.frames`),
inverse kinematics (:mod:`~robodyn.kinematics.ik`), frame paths along a trajectory (:mod:`~robodyn.kinematics.paths`),
rotations and quaternions (:mod:`~robodyn.kinematics.rotations`), a picture of the mechanism
(:mod:`~robodyn.kinematics.picture`) and animations (:mod:`~robodyn.kinematics.animate`).
"""

from robodyn.kinematics.frames import REFERENCES, Kinematics, Pose, kinematics

__all__ = ["REFERENCES", "Kinematics", "Pose", "kinematics"]
