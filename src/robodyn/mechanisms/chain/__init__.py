"""Chains and trees of rigid links on a fixed base: :class:`ChainSystem`
(:mod:`~robodyn.mechanisms.chain.system`), joints and links (:mod:`~robodyn.mechanisms.chain.parts`) and their tree
of bodies (:mod:`~robodyn.mechanisms.chain.bodies`), and what is
computed on its tape, read through its public view (:mod:`~robodyn.mechanisms.chain.tape_view`): frames
(:mod:`~robodyn.mechanisms.chain.frames`), outputs with exact C and D (:mod:`~robodyn.mechanisms.chain.outputs`),
derived quantities (:mod:`~robodyn.mechanisms.chain.quantities`), the regressor
(:mod:`~robodyn.mechanisms.chain.regressor`), the exact linearization (:mod:`~robodyn.mechanisms.chain.linearization`),
closed forms for printing (:mod:`~robodyn.mechanisms.chain.closed`), the functions for export
(:mod:`~robodyn.mechanisms.chain.exported`); a chain's ball joints (:mod:`~robodyn.mechanisms.chain.balls`) and the
tape's program of a tree with them (:mod:`~robodyn.mechanisms.chain.ball_program`) and the chart the integrators step
them in (:mod:`~robodyn.mechanisms.chain.ball_chart`).
"""
