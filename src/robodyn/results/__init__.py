"""Simulation results: :class:`~robodyn.results.trajectory.Trajectory` and ``BatchTrajectory``
(:mod:`~robodyn.results.trajectory`), their files read back (:mod:`~robodyn.results.files`), their sensitivities
(:mod:`~robodyn.results.sensitivities`) and their plots (:mod:`~robodyn.results.plots`). The CSV text, without numpy, is
:mod:`~robodyn.results.csv_text`.
"""
