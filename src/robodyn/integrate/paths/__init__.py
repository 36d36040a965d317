"""The paths of ``simulate()`` beyond the kernels: exact LTI runs (:mod:`~robodyn.integrate.paths.exact_image`, on the
matrix exponentials of :mod:`robodyn.linear.exact`), scipy's stiff solvers (:mod:`~robodyn.integrate.paths.stiff`),
discrete-time models (:mod:`~robodyn.integrate.paths.discrete`), sampled diagrams
(:mod:`~robodyn.integrate.paths.sampled`), impacts (:mod:`~robodyn.integrate.paths.impacts`), moving bases in their
chart (:mod:`~robodyn.integrate.paths.chart`) and forward sensitivities
(:mod:`~robodyn.integrate.paths.sensitivities`)."""
