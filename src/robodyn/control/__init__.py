"""Feedback design and optimal control: :func:`~robodyn.control.design.lqr` and
:func:`~robodyn.control.design.place` (:mod:`~robodyn.control.design`); the checks of the weights of quadratic
costs that LQR, optimal control and tracking share (:mod:`~robodyn.control.weights`); optimal trajectories
(:mod:`~robodyn.control.optimal`: the problem, the DDP family and direct collocation). Controllers that the control
issues add (tracking, MPC, estimators, robust synthesis) live here, one module each.
"""
