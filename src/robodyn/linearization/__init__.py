"""From a nonlinear model to linear ones: operating points (:mod:`~robodyn.linearization.points`,
:mod:`~robodyn.linearization.equilibrium`, :mod:`~robodyn.linearization.families`), linearization at a point
(:mod:`~robodyn.linearization.linearize`, its lean path :mod:`~robodyn.linearization.lean`, many points into held
buffers :mod:`~robodyn.linearization.linearizer`, its last step :mod:`~robodyn.linearization.derivatives`), on a
manifold (:mod:`~robodyn.linearization.tangent_points`) and in a mechanism's independent coordinates
(:mod:`~robodyn.linearization.reduced`), along a trajectory (:mod:`~robodyn.linearization.ltv`), and how far the
result can be trusted (:mod:`~robodyn.linearization.validity`, which samples in the coordinates of
:mod:`~robodyn.linearization.samples`).

The folder is not called ``linearize``: a subpackage of that name would replace the function ``robodyn.linearize``
on the root package as soon as it was imported.
"""

#: linearize's methods (robodyn.linearization.linearize.METHODS), here so that the CLI offers them without importing it
LINEARIZATION_METHODS = ("auto", "symbolic", "manipulator", "linear", "complex", "central")

__all__ = ["LINEARIZATION_METHODS"]
