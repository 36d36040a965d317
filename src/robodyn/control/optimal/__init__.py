"""Optimal control: trajectories that minimize a cost under the model's dynamics, bounds and constraints.

- :mod:`~robodyn.control.optimal.protocol`: what a solver is given (:class:`TranscribableProblem`) and what it
  answers (:class:`SolverOutcome`): the one contract between the problem and the solvers.
- :mod:`~robodyn.control.optimal.transcription`: direct collocation's transcriptions (trapezoidal, Hermite–Simpson)
  of a problem into a sparse nonlinear program: layout, defects, quadrature, the exact sparse Jacobian.
- :mod:`~robodyn.control.optimal.ipopt`: IPOPT (CasADi's build) on such a program, fed robodyn's values and
  Jacobians through ``casadi.Callback`` objects.
- :mod:`~robodyn.control.optimal.collocation`: :func:`solve_collocation`, the solver registered as
  ``"collocation"``.
"""
