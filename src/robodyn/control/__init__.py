"""Feedback design and optimal control: :func:`~robodyn.control.design.lqr` and
:func:`~robodyn.control.design.place` (:mod:`~robodyn.control.design`); the checks of their weights
(:mod:`~robodyn.control.weights`); tracking a trajectory by time-varying LQR (:mod:`~robodyn.control.tracking`);
optimal trajectories (:mod:`~robodyn.control.optimal`: the problem, the DDP family and direct collocation);
a state-feedback law as a sampled diagram block (:mod:`~robodyn.control.feedback_block`); model predictive control
(:mod:`~robodyn.control.mpc`: linear MPC on a QP solver, nonlinear MPC by real-time iterations);
state estimation (:mod:`~robodyn.control.estimation`: the steady-state Kalman filter and LQG, and the estimators as
sampled diagram blocks); robust synthesis (:mod:`~robodyn.control.robust`: H-infinity, H2 and mixed sensitivity);
the compiled matrix exponential by scaling and squaring that the zero-order holds and the EKF's process noise
share (:mod:`~robodyn.control.pade`).
"""
