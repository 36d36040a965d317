"""The generated code of a model with actuator states: the inner model's kernels called on gathered views.

A model with actuator states (robodyn.model.kinds.actuated) has its inner model's states at some positions of its
own state vector (``gather``) and its activations at others (``acts``); each input of the inner model is either an
input of the outer model or an activation. :class:`ActuatorLayout` holds those positions; :func:`rhs_source`,
:func:`jacobian_source` and :func:`chart_source` write the outer model's ``rhs``, ``jac`` and ``chart`` around the
inner model's (its source copied whole, its top-level names prefixed ``_inner_``: robodyn.codegen.fragments).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from robodyn.codegen.fragments import prefixed_source

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

    def constants(self) -> str:
        """Module-level index arrays the generated functions loop over (a loop, not one line per entry: numba's
        time to compile a function grows faster than its length)."""
        arrays = {"gather": self.gather, "acts": self.acts, "controls": self.controls,
                  "feed_u": tuple(j if kind == "u" else -1 for kind, j in self.feeds),
                  "feed_a": tuple(self.acts[j] if kind == "a" else -1 for kind, j in self.feeds)}
        lines = [f"_act_{name} = np.array({tuple(int(v) for v in values)!r}, dtype=np.int64)"
                 for name, values in arrays.items()]
        return "\n".join([*lines, f"_act_rates = np.array({tuple(float(r) for r in self.rates)!r}, dtype=np.float64)"])


_GATHER: Final = """_xi = np.empty({n})
for _i in range({n}):
    _xi[_i] = x[_act_gather[_i]]
_ui = np.empty({mi})
for _k in range({mi}):
    _ui[_k] = u[_act_feed_u[_k]] if _act_feed_u[_k] >= 0 else x[_act_feed_a[_k]]"""

_RATES: Final = """for _i in range({k}):
    _at = _act_acts[_i]
    _c = _act_controls[_i]
    out[_at] = _act_rates[_i] * (u[_c] - x[_at]) if _act_rates[_i] != 0.0 else u[_c]"""

_JACOBIAN: Final = """for _q in range({total}):
    out[_q] = 0.0
for _i in range({n}):
    _row = _act_gather[_i]
    for _j in range({n}):
        out[_row * {size} + _act_gather[_j]] = _ji[_i * {n} + _j]
    for _k in range({mi}):
        _v = _ji[{n} * {n} + _i * {mi} + _k]
        if _act_feed_u[_k] >= 0:
            out[{top} + _row * {m} + _act_feed_u[_k]] += _v
        else:
            out[_row * {size} + _act_feed_a[_k]] += _v
for _i in range({k}):
    _at = _act_acts[_i]
    _rate = _act_rates[_i]
    if _rate != 0.0:
        out[_at * {size} + _at] = -_rate
        out[{top} + _at * {m} + _act_controls[_i]] = _rate
    else:
        out[{top} + _at * {m} + _act_controls[_i]] = 1.0"""

_CHART: Final = """_di = np.empty({n})
for _i in range({n}):
    _di[_i] = xdot[_act_gather[_i]]
_ci = np.empty({twice})
{inner}chart(t, _xi, _di, p, _ci)
for _i in range({n}):
    out[_act_gather[_i]] = _ci[_i]
    out[{size} + _act_gather[_i]] = _ci[{n} + _i]
for _i in range({k}):
    _at = _act_acts[_i]
    out[_at] = x[_at]
    out[{size} + _at] = xdot[_at]"""


def _inner(source: str, name: str) -> str:
    """The inner model's kernel text with its top-level names prefixed (ValueError if it is not a fragment)."""
    found = prefixed_source(source, _PREFIX)
    if found is None or name not in found[1]:
        raise ValueError(f"the inner model's source does not define {name!r} as a generated fragment")
    return found[0]


def _function(name: str, arguments: str, text: str) -> str:
    return "\n".join(["@jit", f"def {name}({arguments}):", *(f"{_INDENT}{line}" for line in text.splitlines()),
                      f"{_INDENT}return", ""])


def _sizes(layout: ActuatorLayout) -> dict[str, int]:
    n, mi, size, m = len(layout.gather), len(layout.feeds), layout.size, layout.m
    return {"n": n, "mi": mi, "size": size, "m": m, "k": len(layout.acts), "top": size * size,
            "total": size * (size + m), "twice": 2 * n}


def rhs_source(layout: ActuatorLayout, inner: str) -> str:
    """``rhs(t, x, u, p, out)`` of the outer model from the inner model's ``rhs`` source."""
    sizes = _sizes(layout)
    body = "\n".join([_GATHER.format(**sizes), f"_fi = np.empty({sizes['n']})", f"{_PREFIX}rhs(t, _xi, _ui, p, _fi)",
                      f"for _i in range({sizes['n']}):", f"{_INDENT}out[_act_gather[_i]] = _fi[_i]",
                      _RATES.format(**sizes)])
    return "\n\n".join([_inner(inner, "rhs"), layout.constants(), _function("rhs", "t, x, u, p, out", body)])


def jacobian_source(layout: ActuatorLayout, inner: str) -> str:
    """``jac(t, x, u, p, out)`` of the outer model (df/dx ``(N, N)`` then df/du ``(N, m)``, row-major) from the
    inner model's ``jac``: A = [[A_i, B_i on the activations], [0, -1/tau]], B = [[B_i on the inputs], [1/tau]]."""
    sizes = _sizes(layout)
    body = "\n".join([_GATHER.format(**sizes), f"_ji = np.empty({sizes['n'] * (sizes['n'] + sizes['mi'])})",
                      f"{_PREFIX}jac(t, _xi, _ui, p, _ji)", _JACOBIAN.format(**sizes)])
    return "\n\n".join([_inner(inner, "jac"), layout.constants(), _function("jac", "t, x, u, p, out", body)])


def chart_source(layout: ActuatorLayout, inner: str) -> str:
    """``chart(t, x, xdot, p, out)`` of the outer chart (the state recentred, then its derivative: ``2 N`` values)
    from the inner chart's: the activations and their derivatives pass through."""
    sizes = _sizes(layout)
    gather = _GATHER.format(**sizes).split("\n_ui")[0]  # the state only: a chart function has no inputs
    body = "\n".join([gather, _CHART.format(inner=_PREFIX, **sizes)])
    return "\n\n".join([_inner(inner, "chart"), layout.constants(), _function("chart", "t, x, xdot, p, out", body)])
