"""Simulation results: :class:`~robodyn.results.trajectory.Trajectory` and ``BatchTrajectory``
(:mod:`~robodyn.results.trajectory`), their files read back (:mod:`~robodyn.results.files`), their sensitivities
(:mod:`~robodyn.results.sensitivities`) and their plots (:mod:`~robodyn.results.plots`). The CSV text, without numpy, is
:mod:`~robodyn.results.csv_text`; what a run is made of (its statistics, events, and the :class:`Run` protocol the
readers and plots work on) is :mod:`~robodyn.results.run`.
"""
