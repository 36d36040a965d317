"""Chains and trees of rigid links on a fixed base: :class:`ChainSystem`
(:mod:`~robodyn.mechanisms.chain.system`), joints and links (:mod:`~robodyn.mechanisms.chain.parts`), and what is
computed on its tape, read through its public view (:mod:`~robodyn.mechanisms.chain.tape_view`): frames
(:mod:`~robodyn.mechanisms.chain.frames`), outputs with exact C and D (:mod:`~robodyn.mechanisms.chain.outputs`),
derived quantities (:mod:`~robodyn.mechanisms.chain.quantities`), the regressor
(:mod:`~robodyn.mechanisms.chain.regressor`), the exact linearization (:mod:`~robodyn.mechanisms.chain.linearization`),
closed forms for printing (:mod:`~robodyn.mechanisms.chain.closed`) and the functions for export
(:mod:`~robodyn.mechanisms.chain.exported`).
"""
