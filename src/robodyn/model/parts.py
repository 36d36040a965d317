"""The answers a model gives about its parts, "none" by default: :class:`ModelParts`, a base of
:class:`robodyn.model.system.Model`.

What a model is made of beyond its equations — a robot file with shapes to draw, a moving base and its masses,
contacts, a diagram's blocks, loops, signals and sampled parts, where its blocks rest and what they do in a loop —
is asked of every model through the model contract (robodyn.model.protocol); the kinds that have such parts
(diagrams, URDF and MJCF robots, floating chains, estimator blocks) override these defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robodyn.base.errors import InputError
from robodyn.model.values import Vector

if TYPE_CHECKING:
    from robodyn.model.protocol import BaseMasses, ContactPoint, ModelContract, Sampling
    from robodyn.model.roles import Role

__all__ = ["ModelParts"]


class ModelParts:
    """The defaults of the contract's questions about a model's parts (a model without any)."""

    __slots__ = ()

    name: str
    kind: str

    @property
    def geometry_file(self) -> Path | None:
        """The robot file whose links carry shapes to draw (a URDF's ``<visual>`` and ``<collision>``, an MJCF's geoms:
        the 3-D view, robodyn.viewer), or None (the default) for a model without one."""
        return None

    def fixed_base(self) -> ModelContract | None:
        """A moving base's robot with its base held at the world's origin (its joints the same coordinates, its
        frames placed relative to the base: the 3-D view moves them by the base's states), or None (the default) for
        a model whose base does not move."""
        return None

    def base_masses(self) -> BaseMasses | None:
        """A moving base's masses: its root link's, placed in its own frame, and the rest's (the twin of
        :meth:`fixed_base` weighs only the rest: the 3-D view adds the root link to its centre of mass), or None (the
        default) for a model whose base does not move."""
        return None

    def contact_points(self) -> tuple[ContactPoint, ...]:
        """The compliant contacts whose forces are outputs (:class:`robodyn.model.protocol.ContactPoint`: their names,
        frames and planes' normals, for the 3-D view to draw), or () (the default) for a model without any."""
        return ()

    @property
    def sample_period(self) -> float | None:
        """The sample period dt in s of a discrete-time model, whose ``f`` is the update map x[k+1] = f(t_k, x[k],
        u[k]) rather than a derivative; None (the default) for a continuous-time model."""
        return None

    def switching_expressions(self) -> tuple[Any, ...]:
        """Functions g of the model's symbols whose sign changes where its equations have a corner or a step (a
        saturation's u - upper), for a diagram to stop its integration there; () when there are none known."""
        return ()

    def output_expressions(self) -> list[Any] | None:
        """The outputs as expressions in the model's symbol table (symbolic models), or None."""
        return None

    def switching_events(self) -> list[Any]:
        """Terminal events at the model's corners (a diagram's saturations: robodyn.diagrams.switching) at
        which ``simulate`` stops and restarts its integration; [] (the default) when there are none."""
        return []

    def robot_block(self) -> tuple[str, ModelContract] | None:
        """A diagram's block with frames (its name and model), whose kinematics ``robodyn fk`` and
        ``robodyn.kinematics.Kinematics`` give under the block's prefix (``arm.tool``), or None."""
        return None

    def block_diagram(self) -> dict[str, Any] | None:
        """A diagram's blocks, wires, inputs, outputs and loops (what ``robodyn analyze`` draws), or None."""
        return None

    def linearization_source(self) -> str | None:
        """A diagram's composed exact linearization as module source (what a cached record keeps), or None."""
        return None

    def open_loop(self, port: str) -> tuple[ModelContract, str, str]:
        """A diagram with its loop broken at ``port``, and the names of the injected input and the returned output
        (``linearize(..., open=port)``); only diagrams have loops to break."""
        raise InputError(f"model {self.name!r} ({self.kind}) has no loops to open at {port!r}: make a "
                         "robodyn.Diagram of the plant and the controller")

    def with_outputs(self, outputs: Mapping[str, str]) -> ModelContract:
        """The model with the outputs ``{name: "block.port"}`` added (a diagram's block signals, as a report records
        them); only diagrams have signals to add."""
        raise InputError(f"model {self.name!r} ({self.kind}) has no block signals to add as outputs")

    def rest_state(self, t: float, x: Vector, u: Vector, p: Vector) -> Vector | None:
        """The state near ``x`` (n,) the model rests at with its inputs held at ``u`` (m,), when it knows it without
        a search (a sampled estimator's steady-state filter; a diagram's assembled from its blocks'), else None (the
        default). ``find_equilibrium`` starts there by default."""
        return None

    def roles(self) -> tuple[Role, ...]:
        """What the model does in a closed loop that reports show (robodyn.model.roles: an estimator, a predictive
        controller; a diagram's, its blocks' qualified), () by default."""
        return ()

    def sampling(self) -> Sampling | None:
        """The sampled parts of a model made of continuous and discrete-time blocks (a diagram with sampled blocks:
        robodyn.diagrams.sampled.Sampling), or None (the default): ``simulate`` and ``linearize`` then stop at the
        sample instants and give a discrete-time linear model."""
        return None
