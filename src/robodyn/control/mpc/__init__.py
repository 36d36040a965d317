"""Model predictive control: controllers that re-plan from each measured state.

- :mod:`~robodyn.control.mpc.receding`: nonlinear MPC by real-time iterations of the optimal-control solvers
  (:class:`RecedingHorizon`), and its sampled diagram block.
"""
