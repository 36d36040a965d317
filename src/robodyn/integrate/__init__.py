"""Integration: ``simulate()`` and what its paths share; the methods, the kernels and the paths in subfolders.

- :mod:`robodyn.integrate.simulate` — ``simulate()``: the method looked up, its family's runner called;
- :mod:`robodyn.integrate.arguments` — the span, initial states and parameter sets read and checked;
- :mod:`robodyn.integrate.prepare` — the kernels made ready on a machine before anyone waits for them;
- :mod:`robodyn.integrate.events` — events resolved for the kernels; :mod:`robodyn.integrate.corners` — a diagram's
  corners stopped at and restarted from; :mod:`robodyn.integrate.limits` — joint position limits;
- :mod:`robodyn.integrate.guards` — memory and finiteness guards; :mod:`robodyn.integrate.hint` — the stiffness
  hint; :mod:`robodyn.integrate.status` — the kernels' status codes and the message of each failure;
- :mod:`robodyn.integrate.assemble` — the runs as a Trajectory or a BatchTrajectory, with outputs;
- :mod:`robodyn.integrate.methods` — the registry of methods, the Runge–Kutta tableaus, the implicit methods' numbers;
- :mod:`robodyn.integrate.kernels` — the kernel templates, their generated module, running them, machine code;
- :mod:`robodyn.integrate.paths` — the exact, stiff, discrete, sampled, impact, chart and sensitivity paths.

Nothing here imports numba at import time (docs/dev/simulation.md).
A run as a value: the call (:mod:`~robodyn.integrate.call`), the validated job and its plan
(:mod:`~robodyn.integrate.job`) and the runs a runner returns (:mod:`~robodyn.integrate.runs`).
"""
