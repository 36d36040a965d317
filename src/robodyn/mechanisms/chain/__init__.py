"""Chains and trees of rigid links on a fixed base: :class:`ChainSystem`
(:mod:`~robodyn.mechanisms.chain.system`), joints and links (:mod:`~robodyn.mechanisms.chain.parts`), and what is
computed on its tape: frames, outputs, quantities, the regressor, the exact linearization, closed forms and export.
"""
