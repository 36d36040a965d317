"""State estimation: the steady-state Kalman filter of a linear system and the LQG controller built from it
(:mod:`~robodyn.control.estimation.kalman`); the estimators as sampled diagram blocks, ``kalman``, ``ekf`` and
``ukf`` (:mod:`~robodyn.control.estimation.blocks`), the arithmetic of one filter step
(:mod:`~robodyn.control.estimation.filters`: Joseph's update, the scaled unscented transform) and what a
period of the continuous plant gives them (:mod:`~robodyn.control.estimation.discretization`: Van Loan's
process noise, the zero-order hold, the RK4 mean); where a filter block rests and what it is to a report
(:mod:`~robodyn.control.estimation.rest`: the plant's rest point and the steady-state filter's covariance); each
filter's whole sample as one compiled call (:mod:`~robodyn.control.estimation.compiled`: the Kalman filter and the
EKF; :mod:`~robodyn.control.estimation.compiled_ukf`: the UKF).
"""
