"""URDF robots: the XML read (:mod:`~robodyn.mechanisms.urdf.file`), lowered to robodyn's tape
(:mod:`~robodyn.mechanisms.urdf.chain`, the default) or run through Pinocchio
(:mod:`~robodyn.mechanisms.urdf.pinocchio`).
"""
