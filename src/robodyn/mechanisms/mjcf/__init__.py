"""MuJoCo MJCF robots: the XML with includes and default classes (:mod:`~robodyn.mechanisms.mjcf.document`), the
vocabulary it is checked against (:mod:`~robodyn.mechanisms.mjcf.schema`), placements and mass properties
(:mod:`~robodyn.mechanisms.mjcf.geometry`), the body tree as chain parts (:mod:`~robodyn.mechanisms.mjcf.bodies`) and
the mass properties of mesh geoms (:mod:`~robodyn.mechanisms.mjcf.meshes`), the forces of actuators and fixed
tendons (:mod:`~robodyn.mechanisms.mjcf.transmission`), the robot model (:mod:`~robodyn.mechanisms.mjcf.robot`) and
its text as a ``kind: chain`` file
(:mod:`~robodyn.mechanisms.mjcf.convert`).
"""
