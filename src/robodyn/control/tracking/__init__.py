"""Tracking a trajectory: time-varying LQR along it (:func:`~robodyn.control.tracking.tvlqr.tvlqr`).

- :mod:`~robodyn.control.tracking.reference`: x*(t), u*(t) between the trajectory's samples (cubic Hermite states
  with the model's slopes, held or linear inputs);
- :mod:`~robodyn.control.tracking.knots`: the exact Jacobians at the knots and the slopes of x*, one compiled call;
- :mod:`~robodyn.control.tracking.riccati`: the finite-horizon Riccati recursion (compiled) and the differential
  equation by scipy (models without compiled functions);
- :mod:`~robodyn.control.tracking.riccati_ode`: the Riccati differential equation, compiled DOP853 over the horizon;
- :mod:`~robodyn.control.tracking.zoh`: the exact zero-order-hold models of the intervals, compiled exponentials;
- :mod:`~robodyn.control.tracking.tvlqr`: :func:`tvlqr` and its result :class:`TVLQR`, whose ``feedback`` is the
  :class:`robodyn.signals.tracking.TrackingFeedback` that ``simulate`` takes as an input, and ``block()``, the same
  as a sampled diagram block (:mod:`robodyn.control.feedback_block`).
"""
