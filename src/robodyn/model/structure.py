"""A model's structure: what it is made of, beyond x' = f, as one typed value.

:func:`structure_of` asks a model the five structural questions of the contract once — its chart (the states lie on
a manifold: a floating base), its bilateral constraints (closed loops, held points), its sampled blocks, its
impacts and its block diagram — and gives the answers as a :class:`Structure`. Consumers choose what to do by
one look at it instead of a chain of capability checks: ``simulate()`` picks its path by :attr:`Structure.path`
(robodyn.integrate.simulate, docs/dev/simulation.md "Dispatch"), forward sensitivities name the first structure
they cannot integrate (:meth:`Structure.obstacles`).

The answers are the models' own (memoized by them: robodyn.mechanisms.floating.chain, robodyn.mechanisms.loops,
robodyn.diagrams.diagram); the block diagram's drawing is computed only when asked (:meth:`Structure.drawing`), as
it walks the diagram's loops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from robodyn.model.protocol import Chart, Constraints, Impacts, ModelContract, Sampling

__all__ = ["Path", "Structure", "structure_of"]

#: The ways a model is simulated, by its structure: in its chart, between the sample instants of its sampled blocks,
#: from impact to impact, or plainly (the method's family decides; constraints only check the initial state).
Path = Literal["chart", "sampled", "impacts", "plain"]


@dataclass(frozen=True, slots=True, eq=False)
class Structure:
    """The structural answers of one model (each None when the model has no such part).

    chart
        The model the integrators step in when the states lie on a manifold (``model.chart()``).
    constraints
        The bilateral constraints of closed loops or held points (``model.constraints()``).
    sampling
        The sampled blocks' rates and held signals (``model.sampling()``).
    impacts
        The rigid contacts whose impacts make the velocities jump (``model.impacts()``).
    diagram
        Whether the model is a block diagram (``model.block_diagram()`` is not None); its drawing:
        :meth:`drawing`.
    """

    model: ModelContract
    chart: Chart | None
    constraints: Constraints | None
    sampling: Sampling | None
    impacts: Impacts | None
    diagram: bool

    @property
    def path(self) -> Path:
        """How ``simulate()`` runs the model: ``chart`` first (the chart model is then run by its own structure),
        then ``sampled``, then ``impacts``, else ``plain``."""
        if self.chart is not None:
            return "chart"
        if self.sampling is not None:
            return "sampled"
        return "impacts" if self.impacts is not None else "plain"

    def obstacles(self) -> list[str]:
        """What makes the model more than x' = f(t, x, u, p) on a vector space, in words, in the order of the
        fields (discrete time first): the reasons forward sensitivities are refused."""
        reasons = [(self.model.sample_period is not None, "it is a discrete-time model"),
                   (self.chart is not None,
                    f"its states lie on a manifold (a {self.chart.manifold if self.chart else ''})"),
                   (self.constraints is not None, "it has closed loops or held points (constraints)"),
                   (self.impacts is not None, "its velocities jump at impacts"),
                   (self.sampling is not None, "it has sampled blocks (discrete states jump at the instants)")]
        return [reason for applies, reason in reasons if applies]

    def drawing(self) -> dict[str, Any] | None:
        """The block diagram's blocks, wires, inputs, outputs and loops (``model.block_diagram()``), or None."""
        return self.model.block_diagram() if self.diagram else None


def structure_of(model: ModelContract) -> Structure:
    """The :class:`Structure` of ``model``, from its answers to ``chart()``, ``constraints()``, ``sampling()``,
    ``impacts()`` and ``block_diagram()`` (whether it answers, kept in the model's memo: the drawing walks loops)."""
    return Structure(model, model.chart(), model.constraints(), model.sampling(), model.impacts(),
                     _is_diagram(model))


def _is_diagram(model: ModelContract) -> bool:
    """Whether ``model`` answers ``block_diagram()``, drawn once per model (the answer kept in its memo)."""
    memo = model.memo()
    known = memo.get("is block diagram")
    if known is None:
        known = memo["is block diagram"] = model.block_diagram() is not None
    return bool(known)
