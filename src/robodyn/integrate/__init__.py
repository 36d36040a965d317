"""Integration: Runge–Kutta tableaus as data and one kernel template for all explicit methods.

- :mod:`robodyn.integrate.tableaus` — :class:`ButcherTableau` and the methods ``euler``, ``heun``, ``rk4``,
  ``dopri5``, ``dop853`` (``METHODS``).
- :mod:`robodyn.integrate.kernel_template` — numba-subset source of the fixed-step and adaptive kernels.
  It is never imported as a regular module: a loader injects ``jit``, ``hjit``, ``rhs``, ``event_fn``
  and ``eval_inputs`` and then executes it (see docs/dev/simulation.md).

Nothing here imports numba at import time.
"""
