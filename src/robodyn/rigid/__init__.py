"""Rigid-body algorithms on a straight-line tape: recursive Newton–Euler, mass matrix, positions.

One source for chains (xyz/rpy or DH placement) and, through them, every tree of rigid bodies: the
algorithms record scalar operations on a :class:`~robodyn.rigid.tape.Tape` (:mod:`~robodyn.rigid.tape`), which
:mod:`robodyn.codegen.llvm.tape` compiles to machine code with its forward-mode derivatives. The motion/force
algebra they share (3-vectors, placements, spatial vectors and inertias) is :mod:`~robodyn.rigid.spatial`.

- :mod:`~robodyn.rigid.joints` — the joints between bodies (revolute, prismatic, spherical: a ball);
  :mod:`~robodyn.rigid.rnea` — recursive Newton–Euler, mass-matrix columns, the tree's factor;
  :mod:`~robodyn.rigid.aba` — the articulated-body algorithm; :mod:`~robodyn.rigid.crba` — the mass matrix in plain
  numpy; :mod:`~robodyn.rigid.derivatives` — analytical derivatives of inverse dynamics;
- :mod:`~robodyn.rigid.dynamics` — the functions of a model on a fixed base (``ManipulatorProgram``);
  :mod:`~robodyn.rigid.floating` — on a moving base, with the base joints of :mod:`~robodyn.rigid.base_joints`;
- :mod:`~robodyn.rigid.kinematics` — frame poses, Jacobians and J'q'; :mod:`~robodyn.rigid.regressor` — the
  inverse-dynamics regressor;
- :mod:`~robodyn.rigid.constraints` — closed loops and held points; :mod:`~robodyn.rigid.contact` — compliant
  contact.
"""
