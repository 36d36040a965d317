"""Optimal control: trajectories that minimize a cost under the model's dynamics, bounds and constraints.

- :mod:`~robodyn.control.optimal.protocol`: what a solver is given (:class:`TranscribableProblem`) and what it
  answers (:class:`SolverOutcome`): the one contract between the problem and the solvers.
- :mod:`~robodyn.control.optimal.problem`: :class:`OptimalControlProblem`, the problem (checked when made) and its
  ``solve``; :mod:`~robodyn.control.optimal.costs` (its running and terminal terms),
  :mod:`~robodyn.control.optimal.constraints` (bounds, path and terminal constraints),
  :mod:`~robodyn.control.optimal.references` (weights and references by name) and
  :mod:`~robodyn.control.optimal.expressions` (user expressions compiled with their exact derivatives).
- :mod:`~robodyn.control.optimal.problem_file`: the YAML problem file (``kind: optimal_control``) and
  :func:`load_problem`.
- :mod:`~robodyn.control.optimal.solvers`: the registry of solvers by method name.
- :mod:`~robodyn.control.optimal.result`: :class:`OptimalTrajectory`, the answer (a Trajectory).
- :mod:`~robodyn.control.optimal.steps`: the discretized dynamics x[k+1] = F(x[k], u[k]) (euler, rk4, zoh) and
  their exact Jacobians through the step.
- :mod:`~robodyn.control.optimal.ddp`: ``solve_ddp``, the DDP family (DDP/iLQR, FDDP, input boxes);
  :mod:`~robodyn.control.optimal.ddp_passes` its compiled backward pass and box QP;
  :mod:`~robodyn.control.optimal.ddp_constraints` its augmented Lagrangian for state bounds and constraints.
- :mod:`~robodyn.control.optimal.transcription`: direct collocation's transcriptions (trapezoidal, Hermite–Simpson)
  of a problem into a sparse nonlinear program: layout, defects, quadrature, the exact sparse Jacobian.
- :mod:`~robodyn.control.optimal.ipopt`: IPOPT (CasADi's build) on such a program, fed robodyn's values and
  Jacobians through ``casadi.Callback`` objects.
- :mod:`~robodyn.control.optimal.collocation`: :func:`solve_collocation`, the solver registered as
  ``"collocation"``.
- :mod:`~robodyn.control.optimal.batch`: the problem at many points at once (the model's compiled f and Jacobians
  in one loop) and the DDP family's compiled rollout.
"""
