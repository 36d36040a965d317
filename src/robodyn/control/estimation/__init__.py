"""State estimation: the steady-state Kalman filter of a linear system and the LQG controller built from it
(:mod:`~robodyn.control.estimation.kalman`)."""
