"""The common part of the integrators' charts: a model whose states are a stored model's states followed by tangent
coordinates of its rotations (robodyn.mechanisms.floating.chart.ChartModel for a moving base,
robodyn.mechanisms.chain.ball_chart.BallChart for a chain's ball joints).

Its outputs are its states; it keeps its memo inside the stored model's (so that it lives as long as the model's
compiled functions); its functions are compiled; a stored state lifts to the chart's with the tangent coordinates
0. What differs between charts — the right-hand side, the recentring, the kernel sources — each chart says itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robodyn.model.system import Model, Vector

__all__ = ["TangentChart"]


class TangentChart(Model):
    """A chart of ``stored`` (any model with a memo) with the tangent coordinates ``tangent`` appended to its states;
    ``manifold`` names what moves on the manifold (for messages), ``base`` its kind."""

    kind = "chart"

    def __init__(self, stored: Any, tangent: tuple[str, ...], manifold: str, base: str, memo_key: str):
        self.base = base
        self.manifold = manifold
        self.tangent = tangent
        self.name = stored.name
        self.states = (*stored.states, *tangent)
        self.inputs = stored.inputs
        self.outputs = self.states
        self.parameters = stored.parameters
        self._stored, self._memo_key = stored, memo_key

    def memo(self) -> dict[Any, Any]:
        memo: dict[Any, Any] = self._stored.memo().setdefault(self._memo_key, {})
        return memo

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return np.array(x, dtype=float)

    @property
    def outputs_are_states(self) -> bool:
        return True

    @property
    def compilable(self) -> bool:
        return True

    def lift(self, x: np.ndarray) -> np.ndarray:
        """Stored states ``(..., n)`` as chart states ``(..., n + nd)``: the tangent coordinates 0."""
        x = np.asarray(x, dtype=float)
        return np.concatenate([x, np.zeros((*x.shape[:-1], len(self.tangent)))], -1)
