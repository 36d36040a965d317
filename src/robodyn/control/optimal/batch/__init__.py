"""A problem evaluated at many points at once, and the compiled loops that do it.

- :mod:`~robodyn.control.optimal.batch.points`: :class:`ModelPoints` (a model's f and exact Jacobians at P points
  in one call) and :class:`PointwiseBatch` (the batched members of the solvers' contract derived from the per-point
  ones, for a problem without a batch form of its own).
- :mod:`~robodyn.control.optimal.batch.kernels`: the compiled loops over points through the model's machine code
  (its ``rhs_c`` and ``jac_c``), and the DDP family's compiled rollout.
"""
