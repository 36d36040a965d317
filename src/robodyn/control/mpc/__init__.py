"""Model predictive control: controllers that re-plan from each measured state.

- :mod:`~robodyn.control.mpc.plant`: the discrete-time affine model predicted with (exact zero-order hold of a
  continuous-time system, exact linearization of a nonlinear model);
- :mod:`~robodyn.control.mpc.bounds`: the input and state bounds as problem files write them;
- :mod:`~robodyn.control.mpc.formulation`: the QP, sparse (states as variables) or condensed, built once;
- :mod:`~robodyn.control.mpc.solvers`: OSQP, Clarabel and ProxQP behind one call, and the statuses;
- :mod:`~robodyn.control.mpc.controller`: linear MPC, :func:`mpc` (``robodyn.mpc``), the controller :class:`MPC`
  and its :class:`MPCPlan`;
- :mod:`~robodyn.control.mpc.sensitivity`: the exact derivative of the first input at a plan's active set;
- :mod:`~robodyn.control.mpc.block`: linear MPC as a sampled diagram block (``MPC.block()``), its status recorded;
- :mod:`~robodyn.control.mpc.from_file`: ``model: mpc`` of diagram files;
- :mod:`~robodyn.control.mpc.receding`: nonlinear MPC by real-time iterations of the optimal-control solvers
  (:class:`RecedingHorizon`).
"""
