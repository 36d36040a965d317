"""Tracking a trajectory: time-varying LQR along it (:func:`~robodyn.control.tracking.tvlqr.tvlqr`).

- :mod:`~robodyn.control.tracking.reference`: x*(t), u*(t) between the trajectory's samples (cubic Hermite states
  with the model's slopes, held or linear inputs);
- :mod:`~robodyn.control.tracking.riccati`: the finite-horizon Riccati differential equation and recursion;
- :mod:`~robodyn.control.tracking.zoh`: the exact zero-order-hold models of the intervals, one batched exponential;
- :mod:`~robodyn.control.tracking.tvlqr`: :func:`tvlqr` and its result :class:`TVLQR`, whose ``feedback`` is the
  :class:`robodyn.signals.tracking.TrackingFeedback` that ``simulate`` takes as an input.
"""
