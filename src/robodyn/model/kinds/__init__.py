"""The model kinds: each a class that answers the model contract (robodyn.model.protocol).

Symbolic first-order models (:mod:`~robodyn.model.kinds.symbolic`, their labelled form
:mod:`~robodyn.model.kinds.symbolic_form`, their exact Jacobians :mod:`~robodyn.model.kinds.symbolic_jacobians`),
discrete-time ones (:mod:`~robodyn.model.kinds.discrete`), manipulator-form and linear mechanical models
(:mod:`~robodyn.model.kinds.mechanical`, df/dp :mod:`~robodyn.model.kinds.manipulator_parameters`), Lagrangian
models (:mod:`~robodyn.model.kinds.lagrange`, named points :mod:`~robodyn.model.kinds.point_frames`), linear
systems (:mod:`~robodyn.model.kinds.linear`) and plain Python callables (:mod:`~robodyn.model.kinds.callables`);
the integrators' charts of models on manifolds share :mod:`~robodyn.model.kinds.chart`. Any model with actuator
activation states in front of its inputs is :mod:`~robodyn.model.kinds.actuated` (its generated code
:mod:`~robodyn.model.kinds.actuator_code`, its chart :mod:`~robodyn.model.kinds.actuated_chart`).
Rigid-body mechanisms are models too; they have their own folder, robodyn.mechanisms.
"""
