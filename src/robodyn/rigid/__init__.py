"""Rigid-body algorithms on a straight-line tape: recursive Newton–Euler, mass matrix, positions.

One source for chains (xyz/rpy or DH placement) and, through them, every tree of rigid bodies: the
algorithms record scalar operations on a :class:`~robodyn.rigid.tape.Tape`, which
:mod:`robodyn.codegen.llvm.tape` compiles to machine code with its forward-mode derivatives. The motion/force
algebra they share (3-vectors, placements, spatial vectors and inertias) is :mod:`robodyn.rigid.spatial`.
"""
