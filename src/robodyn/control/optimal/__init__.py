"""Optimal control: trajectories that minimize a cost under the model's dynamics, bounds and constraints.

- :mod:`~robodyn.control.optimal.protocol`: what a solver is given (:class:`TranscribableProblem`) and what it
  answers (:class:`SolverOutcome`): the one contract between the problem and the solvers.
"""
