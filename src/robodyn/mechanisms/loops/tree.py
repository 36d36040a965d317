"""What a constrained chain answers about its tree: a chain's rigid-body members, every coordinate, unconstrained.

A linkage (robodyn.mechanisms.loops.constrained.ConstrainedChain) keeps every coordinate of its tree as a state. The
tree's mass matrix, inverse dynamics, bias and gravity forces, Coriolis matrix, dM/dq, link centres of mass and
energies are what a user computing the linkage's energy, or the torques of a motion, reaches for first. They are the
tree's quantities: at every coordinate as given (a point off the loops too), without the constraints' forces
J^T lambda or the contacts', as robodyn.mechanisms.chain.system.ChainSystem computes them. With the constraints held,
the
kinetic and potential energies are the linkage's own (the constraints do no work), and M q'' + bias = tau +
J^T lambda holds along its motion.

:class:`TreeMembers` answers each member of :data:`TREE_MEMBERS` by one mechanism, :func:`tree_member`:
``model.mass_matrix(q, params)`` is ``model.chain.mass_matrix(q, p)`` with ``p`` this model's
parameters (its own after ``with_parameters``) overridden by ``params``. Frames, their Jacobians and forward
kinematics come from ``kinematics()`` (robodyn.Kinematics(model)), the energy at a state from ``energy(x)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Final

from robodyn.mechanisms.chain.system import ChainSystem

__all__ = ["TREE_MEMBERS", "TreeMembers", "tree_member"]

def tree_member(name: str) -> Callable[..., Any]:
    """The method ``name`` of a constrained chain that calls its tree's, ``model.chain.<name>(...)``, at this model's
    parameters overridden by its ``params`` (the chain's method takes ``params`` last); its signature and docstring
    are the chain's."""
    method = getattr(ChainSystem, name)
    signature = inspect.signature(method)
    if list(signature.parameters)[-1] != "params":
        raise TypeError(f"ChainSystem.{name} takes no params last: it cannot be a tree member")

    def member(self: Any, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self.chain, *args, **kwargs)
        bound.arguments["params"] = self.parameter_vector(bound.arguments.get("params"))
        return getattr(self.chain, name)(*bound.args[1:], **bound.kwargs)

    member.__name__, member.__qualname__ = name, f"TreeMembers.{name}"
    member.__signature__ = signature  # type: ignore[attr-defined]
    member.__doc__ = f"The tree's {name}, every coordinate, without the constraints: {method.__doc__}"
    return member


class TreeMembers:
    """The members of :data:`TREE_MEMBERS`, answered by the tree ``chain`` (a mixin of ConstrainedChain)."""

    chain: ChainSystem
    mass_matrix = tree_member("mass_matrix")
    inverse_dynamics = tree_member("inverse_dynamics")
    bias = tree_member("bias")
    gravity = tree_member("gravity")
    coriolis_matrix = tree_member("coriolis_matrix")
    mass_derivative = tree_member("mass_derivative")
    com_positions = tree_member("com_positions")
    kinetic_energy = tree_member("kinetic_energy")
    potential_energy = tree_member("potential_energy")


#: The chain members a constrained chain answers for its tree (each takes ``params`` last, like the chain's).
TREE_MEMBERS: Final = tuple(name for name in vars(TreeMembers) if not name.startswith("_") and name != "chain")
