"""Integration: one registry of methods, Runge–Kutta tableaus as data and one kernel template.

- :mod:`robodyn.integrate.methods.registry` — ``REGISTRY``, every method ``simulate()`` and ``--method`` accept,
  with its family (``fixed``, ``adaptive``, ``stiff``, ``exact``) and its tableau or scipy solver.
- :mod:`robodyn.integrate.methods.tableaus` — :class:`ButcherTableau` and the tableaus of ``euler``, ``heun``,
  ``rk4``, ``dopri5``, ``dop853``.
- :mod:`robodyn.integrate.status` — the kernels' status codes and the message of each failure.
- :mod:`robodyn.integrate.kernels.kernel_template` — numba-subset source of the fixed-step and adaptive kernels.
  It is never imported as a regular module: a loader injects ``jit``, ``hjit``, ``rhs``, ``event_fn``
  and ``eval_inputs`` and then executes it (see docs/dev/simulation.md).

Nothing here imports numba at import time.
"""
