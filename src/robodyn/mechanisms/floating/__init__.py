"""Robots on a moving base: :class:`FloatingChain` (:mod:`~robodyn.mechanisms.floating.chain`),
configurations as Lie-group points (:mod:`~robodyn.mechanisms.floating.configuration`) and the chart the integrators
step in (:mod:`~robodyn.mechanisms.floating.chart`).
"""
