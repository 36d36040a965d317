"""The generated code of a model with actuator states: the inner model's kernels called on gathered views.

A model with actuator states (robodyn.model.kinds.actuated) has its inner model's states at some positions of its
own state vector (``gather``) and its activations at others (``acts``); each input of the inner model is either an
input of the outer model or an activation. :class:`ActuatorLayout` holds those positions; :func:`rhs_source`,
:func:`jacobian_source` and :func:`chart_source` write the outer model's ``rhs``, ``jac`` and ``chart`` around the
inner model's (its source copied whole, its top-level names prefixed ``_inner_``: robodyn.codegen.fragments).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Final

import numpy as np

from robodyn.codegen.fragments import prefixed, top_level_names

__all__ = ["ActuatorLayout", "chart_source", "jacobian_source", "rhs_source"]

_PREFIX: Final = "_inner_"
_INDENT: Final = "    "


@dataclass(frozen=True, slots=True)
class ActuatorLayout:
    """Where things are. ``gather`` ``(n_inner,)``: the outer positions of the inner model's states in its order;
    ``acts`` ``(k,)``: the outer positions of the activations; ``feeds`` ``(m_inner,)``: per inner input, ``("u",
    j)`` (outer input j) or ``("a", i)`` (activation i); ``controls`` ``(k,)``: the outer input driving activation
    i; ``rates`` ``(k,)``: 1 / time constant of a filter (a' = (u - a) / tau), or 0 for an integrator (a' = u);
    ``size``, ``m``: the outer model's state and input counts."""

    gather: tuple[int, ...]
    acts: tuple[int, ...]
    feeds: tuple[tuple[str, int], ...]
    controls: tuple[int, ...]
    rates: tuple[float, ...]
    size: int
    m: int

    def split(self, x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The inner model's state ``(n_inner,)`` and inputs ``(m_inner,)`` at the outer ``x``, ``u``."""
        inputs = np.array([u[j] if kind == "u" else x[self.acts[j]] for kind, j in self.feeds], dtype=float)
        return x[list(self.gather)], inputs

    def derivative(self, inner: np.ndarray, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The outer x' ``(size,)`` from the inner model's ``(n_inner,)`` and the activations' rates."""
        out = np.empty(self.size)
        out[list(self.gather)] = inner
        for at, control, rate in zip(self.acts, self.controls, self.rates):
            out[at] = rate * (u[control] - x[at]) if rate else u[control]
        return out

    def compose(self, A_inner: np.ndarray, B_inner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The outer df/dx ``(size, size)`` and df/du ``(size, m)`` from the inner model's: A = [[A_i, B_i P_a],
        [0, -1/tau]], B = [[B_i P_u], [1/tau]] (P_a, P_u: which inner inputs the activations and the inputs feed)."""
        at = list(self.gather)
        A, B = np.zeros((self.size, self.size)), np.zeros((self.size, self.m))
        A[np.ix_(at, at)] = A_inner
        for k, (kind, j) in enumerate(self.feeds):
            if kind == "u":
                B[at, j] += B_inner[:, k]
            else:
                A[at, self.acts[j]] += B_inner[:, k]
        for row, control, rate in zip(self.acts, self.controls, self.rates):
            A[row, row] = -rate
            B[row, control] = rate or 1.0
        return A, B

    def moved(self, gather: tuple[int, ...], acts: tuple[int, ...], size: int) -> ActuatorLayout:
        """The same activations with the inner states at ``gather`` and the activations at ``acts`` of a vector of
        ``size`` (a chart's state, a tangent space)."""
        return ActuatorLayout(gather, acts, self.feeds, self.controls, self.rates, size, self.m)

    def input_lines(self, target: str = "_ui") -> list[str]:
        """The inner model's inputs gathered into ``target``."""
        lines = [f"{target} = np.empty({len(self.feeds)})"]
        for k, (kind, j) in enumerate(self.feeds):
            lines.append(f"{target}[{k}] = " + (f"u[{j}]" if kind == "u" else f"x[{self.acts[j]}]"))
        return lines

    def rate_lines(self) -> list[str]:
        """The activations' derivatives into ``out``."""
        lines = []
        for at, control, rate in zip(self.acts, self.controls, self.rates):
            lines.append(f"out[{at}] = ({rate!r}) * (u[{control}] - x[{at}])" if rate else f"out[{at}] = u[{control}]")
        return lines


def _inner(source: str, name: str) -> str:
    """The inner model's kernel text with its top-level names prefixed (ValueError if it is not a fragment)."""
    tree = ast.parse(source)
    defined = top_level_names(tree)
    if defined is None or name not in defined:
        raise ValueError(f"the inner model's source does not define {name!r} as a generated fragment")
    return prefixed(tree, defined, _PREFIX)


def _function(name: str, arguments: str, lines: list[str]) -> str:
    return "\n".join(["@jit", f"def {name}({arguments}):", *(f"{_INDENT}{line}" for line in lines),
                      f"{_INDENT}return", ""])


def _gathered(layout: ActuatorLayout, source: str, target: str) -> list[str]:
    n = len(layout.gather)
    return [f"{target} = np.empty({n})", *(f"{target}[{i}] = {source}[{g}]" for i, g in enumerate(layout.gather))]


def rhs_source(layout: ActuatorLayout, inner: str) -> str:
    """``rhs(t, x, u, p, out)`` of the outer model from the inner model's ``rhs`` source."""
    n = len(layout.gather)
    lines = [*_gathered(layout, "x", "_xi"), *layout.input_lines(), f"_fi = np.empty({n})",
             f"{_PREFIX}rhs(t, _xi, _ui, p, _fi)",
             *(f"out[{g}] = _fi[{i}]" for i, g in enumerate(layout.gather)), *layout.rate_lines()]
    return "\n\n".join([_inner(inner, "rhs"), _function("rhs", "t, x, u, p, out", lines)])


def jacobian_source(layout: ActuatorLayout, inner: str) -> str:
    """``jac(t, x, u, p, out)`` of the outer model (df/dx ``(N, N)`` then df/du ``(N, m)``, row-major) from the
    inner model's ``jac``: A = [[A_i, B_i on the activations], [0, -1/tau]], B = [[B_i on the inputs], [1/tau]]."""
    n, mi, size, m = len(layout.gather), len(layout.feeds), layout.size, layout.m
    top = size * size
    lines = [*_gathered(layout, "x", "_xi"), *layout.input_lines(), f"_ji = np.empty({n * (n + mi)})",
             f"{_PREFIX}jac(t, _xi, _ui, p, _ji)", f"for _k in range({size * (size + m)}):", f"{_INDENT}out[_k] = 0.0"]
    for i, row in enumerate(layout.gather):
        lines += [f"out[{row * size + col}] = _ji[{i * n + j}]" for j, col in enumerate(layout.gather)]
        for k, (kind, j) in enumerate(layout.feeds):
            target = top + row * m + j if kind == "u" else row * size + layout.acts[j]
            lines.append(f"out[{target}] += _ji[{n * n + i * mi + k}]")
    for at, control, rate in zip(layout.acts, layout.controls, layout.rates):
        if rate:
            lines.append(f"out[{at * size + at}] = {-rate!r}")
        lines.append(f"out[{top + at * m + control}] = {(rate or 1.0)!r}")
    return "\n\n".join([_inner(inner, "jac"), _function("jac", "t, x, u, p, out", lines)])


def chart_source(layout: ActuatorLayout, inner: str) -> str:
    """``chart(t, x, xdot, p, out)`` of the outer chart (the state recentred, then its derivative: ``2 N`` values)
    from the inner chart's: the activations and their derivatives pass through."""
    n, size = len(layout.gather), layout.size
    lines = [*_gathered(layout, "x", "_xi"), *_gathered(layout, "xdot", "_di"), f"_ci = np.empty({2 * n})",
             f"{_PREFIX}chart(t, _xi, _di, p, _ci)"]
    for i, g in enumerate(layout.gather):
        lines += [f"out[{g}] = _ci[{i}]", f"out[{size + g}] = _ci[{n + i}]"]
    for at in layout.acts:
        lines += [f"out[{at}] = x[{at}]", f"out[{size + at}] = xdot[{at}]"]
    return "\n\n".join([_inner(inner, "chart"), _function("chart", "t, x, xdot, p, out", lines)])
