"""MuJoCo MJCF robots: the XML with includes and default classes (:mod:`~robodyn.mechanisms.mjcf.document`), the
vocabulary it is checked against (:mod:`~robodyn.mechanisms.mjcf.schema`), placements and mass properties
(:mod:`~robodyn.mechanisms.mjcf.geometry`), the body tree as chain parts (:mod:`~robodyn.mechanisms.mjcf.bodies`) and
the robot model with its actuators and tendons (:mod:`~robodyn.mechanisms.mjcf.robot`).
"""
