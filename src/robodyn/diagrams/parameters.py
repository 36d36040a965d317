"""A diagram's exact df/dp and dh/dp: its blocks' parameter Jacobians composed through the wires.

A mixin of :class:`robodyn.diagrams.diagram.Diagram`. Each block's parameters are the diagram's ``block.name``; a
block's f and h depend on them directly (its own ``parameter_jacobian_raw`` and ``output_parameter_jacobian_raw``,
placed at its columns) and through its inputs, which the outputs of the blocks before it drive. In the diagram's
order of evaluation, with the states held (a partial derivative): du_b/dp from the wires' sources, dy_b/dp =
D_b du_b/dp + H_b, then df_b/dp = B_b du_b/dp + F_b — the chain rule that gives A and B (robodyn.diagrams.diagram),
with p as the variable. A compiled diagram (straight-line composed code) also gets ``jacp`` by forward-mode
differentiation of its ``rhs`` (robodyn.diagrams.code.parameter_source).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.model.values import Vector

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract
    from robodyn.model.system import Model as _Base
else:
    _Base = object

__all__ = ["DiagramParameters"]


class DiagramParameters(_Base):
    """df/dp, dh/dp and ``jacp`` of a diagram from its blocks' (see the module docstring)."""

    # the diagram's own (robodyn.diagrams.diagram), annotated here only: a mixin defines none of them
    _blocks: dict[str, ModelContract]
    _slices: dict[str, tuple[slice, slice]]
    _order: Sequence[str]
    _outputs: dict[str, tuple[str, int]]
    drivers: Callable[[str], list[tuple[int, str, Any, int]]]
    _signals: Callable[..., tuple[dict[str, Vector], ...]]
    _composed: Callable[[], tuple[str, str] | None]

    @property
    def parameter_jacobian_method(self) -> str | None:
        """``"diagram"`` when no block is sampled and every block has exact Jacobians of f and h with respect to its
        states, inputs and parameters."""
        memo = self.memo()
        if "diagram parameters exact" not in memo:
            def exact(model: ModelContract) -> bool:
                zero_x, zero_u = np.zeros(model.n_states), np.zeros(model.n_inputs)
                return model.parameter_jacobian_method is not None and model.output_parameter_jacobian_raw(
                    0.0, zero_x, zero_u, model.parameter_vector()) is not None

            memo["diagram parameters exact"] = (self.sampling() is None and self.jacobian_method is not None
                                                and all(exact(model) for model in self._blocks.values()))
        return "diagram" if memo["diagram parameters exact"] else None

    def _parameter_derivatives(self, t: float, x: Vector, u: Vector, p: Vector
                               ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """df/dp ``(n, n_p)`` and each block's dy/dp ``(its outputs, n_p)``, by the chain rule through the wires."""
        n_p = len(self.parameters)
        xs, ps, us, _ = self._signals(t, x, u, p)
        dy: dict[str, np.ndarray] = {}

        def input_derivative(block: str) -> np.ndarray:
            du = np.zeros((self._blocks[block].n_inputs, n_p))
            for inlet, kind, source, port in self.drivers(block):
                if kind == "signal" and source in dy:
                    du[inlet] = dy[source][port]
            return du

        for block in self._order:
            model, columns = self._blocks[block], self._slices[block][1]
            found = model.output_jacobians_raw(t, xs[block], us[block], ps[block])
            own = model.output_parameter_jacobian_raw(t, xs[block], us[block], ps[block])
            assert found is not None and own is not None  # parameter_jacobian_method checked them
            dy[block] = np.asarray(found[1], dtype=float) @ input_derivative(block)
            dy[block][:, columns] += np.asarray(own, dtype=float).reshape(model.n_outputs, -1)
        F = np.zeros((self.n_states, n_p))
        for block, model in self._blocks.items():
            rows, columns = self._slices[block]
            _, B = model.jacobians_raw(t, xs[block], us[block], ps[block])
            F[rows] = np.asarray(B, dtype=float) @ input_derivative(block)
            F[rows, columns] += np.asarray(model.parameter_jacobian_raw(t, xs[block], us[block], ps[block]),
                                           dtype=float).reshape(model.n_states, -1)
        return F, dy

    def parameter_jacobian_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        if self.parameter_jacobian_method is None:
            raise NotImplementedError("a block of the diagram has no exact parameter Jacobian (or one is sampled)")
        return self._parameter_derivatives(t, x, u, p)[0]

    def output_parameter_jacobian_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray | None:
        if self.parameter_jacobian_method is None:
            return None
        dy = self._parameter_derivatives(t, x, u, p)[1]
        rows = [dy[block][port] for block, port in self._outputs.values()]
        return np.array(rows, dtype=float).reshape(self.n_outputs, len(self.parameters))

    def kernel_parameter_jacobian_source(self) -> str | None:
        """``jacp`` by forward mode on the composed straight-line ``rhs``, or None (a block called, not inlined)."""
        memo = self.memo()
        if "diagram jacp" not in memo:
            composed = self._composed()
            found = None
            if composed is not None and self.parameter_jacobian_method is not None:
                from robodyn.diagrams.code import parameter_source

                found = parameter_source(composed[0], self.n_states, len(self.parameters))
            memo["diagram jacp"] = found
        code: str | None = memo["diagram jacp"]
        return code
