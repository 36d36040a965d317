"""Feedback design and optimal control: :func:`~robodyn.control.design.lqr` and
:func:`~robodyn.control.design.place` (:mod:`~robodyn.control.design`); the checks of their weights
(:mod:`~robodyn.control.weights`); tracking a trajectory by time-varying LQR (:mod:`~robodyn.control.tracking`);
optimal trajectories (:mod:`~robodyn.control.optimal`: the problem, the DDP family and direct collocation);
linear model-predictive control (:mod:`~robodyn.control.mpc`: ``robodyn.mpc``, its QP and solvers).
Controllers that the control issues add (estimators, robust synthesis) live here, one module each.
"""
