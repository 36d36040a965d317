"""Feedback design on linear models: :func:`~robodyn.control.design.lqr` and
:func:`~robodyn.control.design.place` (:mod:`~robodyn.control.design`). Controllers that the control issues add
(trajectory optimization and tracking, MPC, estimators, robust synthesis) live here, one module each.
"""
