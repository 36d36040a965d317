"""What a model is: the contract, the base class, values, expressions and events; the kinds and derived models.

- the contract — :mod:`~robodyn.model.protocol` (:class:`ModelContract`, everything a consumer may ask) and
  :mod:`~robodyn.model.system` (:class:`Model`, which answers all of it; the defaults of the questions about a
  model's parts, its robot file, moving base, contacts, blocks and sampling, in :mod:`~robodyn.model.parts`); what
  a block is to a report (:mod:`~robodyn.model.roles`: an estimator, a predictive controller);
- what every kind shares — values (:mod:`~robodyn.model.values`), expressions (:mod:`~robodyn.model.expr`), numbers
  and ``NAME=VALUE`` text read from the user (:mod:`~robodyn.model.quantities`), events
  (:mod:`~robodyn.model.events`), the generated functions (:mod:`~robodyn.model.compiled`, the lean ``f``
  :mod:`~robodyn.model.lean`), export tapes (:mod:`~robodyn.model.exported`) and mass-matrix plausibility
  (:mod:`~robodyn.model.plausibility`);
- :mod:`robodyn.model.kinds` — symbolic, discrete, mechanical, Lagrangian and linear models, and callables;
- :mod:`robodyn.model.derived` — models made from a model (forward sensitivities).

Rigid-body mechanisms are in robodyn.mechanisms, diagrams in robodyn.diagrams, model files in robodyn.files.
The names below are loaded on first use (PEP 562), so that importing one submodule (say ``robodyn.model.expr``
for the expression parser) does not import every model class with it; ``ChainSystem``, ``UrdfRobot``, ``load``
and ``load_file`` are still answered here, with a DeprecationWarning, for code written before the mechanisms and
files had their own folders.

How a model is built, as simulate and linearize dispatch on it: :mod:`~robodyn.model.structure`.
"""

from typing import TYPE_CHECKING

from robodyn.base.lazy import lazy_names

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "LagrangianSystem": "robodyn.model.kinds.lagrange",
    "LinearSystem": "robodyn.model.kinds.linear",
    "ManipulatorSystem": "robodyn.model.kinds.mechanical",
    "ModelContract": "robodyn.model.protocol",
    "MechanicalSystem": "robodyn.model.kinds.mechanical",
    "Model": "robodyn.model.system",
    "ScalarDamping": "robodyn.model.kinds.mechanical",
    "SymbolicModel": "robodyn.model.kinds.symbolic",
    "SymbolicSystem": "robodyn.model.kinds.symbolic",
    "System": "robodyn.model.kinds.callables",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs: the same names, imported eagerly
    from robodyn.model.kinds.callables import System
    from robodyn.model.kinds.lagrange import LagrangianSystem
    from robodyn.model.kinds.linear import LinearSystem
    from robodyn.model.kinds.mechanical import ManipulatorSystem, MechanicalSystem, ScalarDamping
    from robodyn.model.kinds.symbolic import SymbolicModel, SymbolicSystem
    from robodyn.model.protocol import ModelContract
    from robodyn.model.system import Model


_lazy_getattr, __dir__ = lazy_names(__name__, _LAZY)

#: Names this package answered before the mechanisms and the files had folders of their own: still answered, with
#: a DeprecationWarning, for one release.
_ELSEWHERE: dict[str, str] = {
    "ChainSystem": "robodyn.mechanisms.chain.system",
    "UrdfRobot": "robodyn.mechanisms.urdf.chain",
    "load": "robodyn.files.loading",
    "load_file": "robodyn.files.loading",
}


def __getattr__(name: str) -> object:
    module = _ELSEWHERE.get(name)
    if module is None:
        return _lazy_getattr(name)
    import importlib
    import warnings

    warnings.warn(f"robodyn.model.{name} moved to {module}.{name} (robodyn.{name} for load and load_file): import it "
                  "from there (the old name goes in the next release)", DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(module), name)


__all__ = [
    "LagrangianSystem",
    "LinearSystem",
    "ManipulatorSystem",
    "MechanicalSystem",
    "Model",
    "ModelContract",
    "ScalarDamping",
    "SymbolicModel",
    "SymbolicSystem",
    "System",
]
