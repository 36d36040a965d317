"""Closed kinematic loops and constrained points: :class:`ConstrainedChain`
(:mod:`~robodyn.mechanisms.loops.constrained`, its tree :mod:`~robodyn.mechanisms.loops.tree`), numbers on the
constraint manifold (:mod:`~robodyn.mechanisms.loops.constraints`) and consistent initial conditions
(:mod:`~robodyn.mechanisms.loops.assembly`).
"""
