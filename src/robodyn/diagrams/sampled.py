"""Diagrams with sampled blocks: the sample instants, the held signals, and the discrete-time linear model.

A block with a sample period T (a ``kind: discrete`` model, a library block made with ``sample=T``) reads its
inputs at t_k = t0 + k T, and from there holds its outputs (zero-order hold) until its next instant; its state
x[k] is the one its outputs at t_k are computed from, and becomes x[k+1] = f(t_k, x[k], u[k]) at t_{k+1}. Periods
must be integer multiples of the smallest, the *base period* (several rates); the *hyperperiod* is their least
common multiple.

:class:`Sampling` describes this for one diagram. Between instants the diagram evolves as its **flow model**
(:class:`Flow`): the diagram's states followed by each sampled block's held outputs and held inputs (the inputs of
its pending update), the continuous blocks integrating with the held values in place of the sampled blocks'
outputs, everything else constant. At an instant, :meth:`Sampling.jump` applies the pending updates of the blocks
sampled there, then evaluates the diagram with their outputs live (in the evaluation order, so a sampled block
driven by another one sampled at the same instant sees its new output) and holds the new outputs and inputs.

**Linearization** (:meth:`Sampling.linearization`): the map from (x_c, x_d) at an instant of the hyperperiod to the
next, with the external inputs held: the instant's signals by the chain rule through the blocks' exact Jacobians,
the flow over each base period by the exact matrix exponential of its linearization (ZOH), the updates by the
blocks' exact Jacobians. The result is a discrete-time LinearSystem with ``dt`` the hyperperiod — exact at an
operating point (where the continuous part rests between instants), and elsewhere the linearization of one
period's map at its start, as Simulink's ``linmod`` gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import reduce
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError
from robodyn.diagrams.code import ComposedCode
from robodyn.model.system import Model, Vector

if TYPE_CHECKING:
    from robodyn.diagrams.diagram import Diagram
    from robodyn.model.protocol import ModelContract

__all__ = ["Flow", "Sampling", "sampling_of"]

Differences = Callable[[Callable[[np.ndarray], Any], np.ndarray], tuple[np.ndarray, float]]
PERIOD_RTOL: Final = 1e-9  # A period within this fraction of an integer multiple of the base period is that multiple.
#: Base periods in the hyperperiod a linearization steps through (periods of 1 ms and 1 s: 1,000), ~0.2 ms each:
#: 100,000 take ~20 s; rates further apart do not make one useful discrete-time model.
MAX_HYPERPERIOD_STEPS: Final = 100_000


def sampling_of(diagram: Diagram) -> Sampling | None:
    """The diagram's :class:`Sampling`, or None when no block is sampled (checks the periods)."""
    periods = {b: model.sample_period for b, model in diagram.blocks.items() if model.sample_period is not None}
    if not periods:
        return None
    return Sampling(diagram, {b: float(T) for b, T in periods.items()})


class Sampling:
    """The sampled blocks of a diagram: their rates, and where their held signals sit in the flow's state."""

    def __init__(self, diagram: Diagram, periods: Mapping[str, float]):
        self.diagram = diagram
        name = diagram.name
        for block, period in periods.items():
            if not (math.isfinite(period) and period > 0):
                raise InputError(f"diagram {name!r}, block {block!r}: sample period {period!r} must be > 0")
        fastest = min(periods, key=lambda b: periods[b])
        self.base = periods[fastest]
        self.every: dict[str, int] = {}
        for block, period in periods.items():
            ratio = period / self.base
            steps = round(ratio)
            if abs(ratio - steps) > PERIOD_RTOL * ratio:
                raise InputError(f"diagram {name!r}: the sample period {period:g} s of block {block!r} is not an "
                                 f"integer multiple of {self.base:g} s (block {fastest!r}): make every period a "
                                 "multiple of the smallest")
            self.every[block] = steps
        self.steps = reduce(math.lcm, self.every.values(), 1)  # base periods in a hyperperiod
        self.hyperperiod = self.base * self.steps
        blocks = diagram.blocks
        at = diagram.n_states
        self.held_y: dict[str, slice] = {}
        self.held_u: dict[str, slice] = {}
        for block in self.every:
            self.held_y[block] = slice(at, at + blocks[block].n_outputs)
            at += blocks[block].n_outputs
        for block in self.every:
            self.held_u[block] = slice(at, at + blocks[block].n_inputs)
            at += blocks[block].n_inputs
        self.size = at
        self._order: dict[str, _Step] | None = None  # the evaluation order's steps (:meth:`_steps`)

    # --- evaluation -------------------------------------------------------------------------------------------
    def _steps(self) -> dict[str, _Step]:
        """The blocks in evaluation order with what evaluating one needs, looked up once (made on first use)."""
        if self._order is None:
            d = self.diagram
            self._order = {block: _Step(block, d._blocks[block], *d._slices[block], self.held_y.get(block),
                                        d._blocks[block].n_inputs, tuple(d.drivers(block))) for block in d._order}
        return self._order

    def signals(self, t: float, z: Vector, u: Vector, p: Vector, live: AbstractSet[str],
                inputs_of: Iterable[str] | None = None) -> tuple[dict[str, Vector], dict[str, Vector]]:
        """Each block's output and input with the sampled blocks in ``live`` computed and the others held; the
        inputs of the blocks ``inputs_of`` only, when given (the others' are not computed)."""
        ys: dict[str, Vector] = {}
        steps = self._steps()
        for step in steps.values():
            if step.held is not None and step.block not in live:
                ys[step.block] = z[step.held]
            else:
                ys[step.block] = step.model.h_raw(t, z[step.rows], step.inputs(u, ys), p[step.columns])
        wanted = self.diagram._blocks if inputs_of is None else inputs_of
        return ys, {block: steps[block].inputs(u, ys) for block in wanted}

    def _compiled_instant(self, live: frozenset[str]) -> tuple[Any, Any] | None:
        """The compiled ``update`` and ``hold`` of an instant of the blocks ``live`` (robodyn.diagrams.code),
        or None when a block has no numba source."""
        memo = self.diagram.memo()
        key = ("sampled instant", live)
        if key not in memo:
            memo[key] = _instant_functions(self, live)
        found: tuple[Any, Any] | None = memo[key]
        return found

    def start(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """The flow state at the first instant: ``x`` with every sampled block's outputs and inputs there."""
        z = np.zeros(self.size)
        z[: x.size] = x
        compiled = self._compiled_instant(frozenset(self.every))
        if compiled is not None:
            out = np.empty(self.size)
            compiled[1](float(t), z, u, p, out)
            return out
        ys, us = self.signals(t, z, u, p, set(self.every), self.every)
        for block in self.every:
            z[self.held_y[block]], z[self.held_u[block]] = ys[block], us[block]
        return z

    def hits(self, k: int) -> frozenset[str]:
        """The sampled blocks with an instant at base step ``k`` (one set per phase of the hyperperiod)."""
        phases = self.diagram.memo().setdefault("sampled phases", {})
        live = phases.get(k % self.steps)
        if live is None:
            live = phases[k % self.steps] = frozenset(b for b, every in self.every.items() if k % every == 0)
        found: frozenset[str] = live
        return found

    def jump(self, t: float, z: Vector, u: Vector, p: Vector, k: int) -> np.ndarray:
        """The flow state after the instant at base step ``k`` > 0: pending updates applied, outputs held anew."""
        live = self.hits(k)
        compiled = self._compiled_instant(live)
        if compiled is not None:
            updated, out = np.empty(self.size), np.empty(self.size)
            compiled[0](float(t), np.ascontiguousarray(z, dtype=float), u, p, updated)
            compiled[1](float(t), updated, u, p, out)
            return out
        z = np.array(z, dtype=float)
        for step in self._steps().values():
            if step.block in live and step.model.n_states:
                z[step.rows] = step.model.f_raw(t, z[step.rows], z[self.held_u[step.block]], p[step.columns])
        ys, us = self.signals(t, z, u, p, live, live)
        for block in live:
            z[self.held_y[block]], z[self.held_u[block]] = ys[block], us[block]
        return z

    def residual(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """f of the diagram as a model: the continuous blocks' derivatives and the sampled blocks' increments
        x[k+1] − x[k], everything evaluated as at an instant of every block (zero exactly at an operating point)."""
        d = self.diagram
        z = self.start(t, x, u, p)
        _, us = self.signals(t, z, u, p, set(self.every))
        parts = []
        for block, model in d._blocks.items():
            rows, columns = d._slices[block]
            value = model.f_raw(t, z[rows], us[block], p[columns])
            parts.append(value - z[rows] if block in self.every else value)
        return np.concatenate(parts) if parts else np.zeros(0)

    def outputs(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """The diagram's outputs at an instant of every block."""
        ys, _ = self.signals(t, self.start(t, x, u, p), u, p, set(self.every))
        return np.array([ys[b][port] for b, port in self.diagram._outputs.values()], dtype=float)

    def flow(self) -> Flow:
        memo = self.diagram.memo()
        if "sampled flow" not in memo:
            memo["sampled flow"] = Flow(self)
        found: Flow = memo["sampled flow"]
        return found

    # --- the discrete-time linear model -----------------------------------------------------------------------
    def linearization(self, t: float, x: Vector, u: Vector, p: Vector, differences: Differences | None = None
                      ) -> tuple[np.ndarray, ...]:
        """A, B, C, D of the map over one hyperperiod from the instant ``t`` (see the module docstring).
        ``differences(function, point) -> (J, error)``: how the Jacobians of a block without exact ones (a filter
        written in Python) are taken (the linearize layer passes its central differences); None: such a block is
        refused."""
        from scipy.linalg import expm

        from robodyn.base.budget import check_count

        check_count(self.steps, MAX_HYPERPERIOD_STEPS, f"the base periods of {self.base:g} s in its hyperperiod",
                    "make the sample periods closer (or their ratios simpler) to linearize it", f"diagram "
                    f"{self.diagram.name!r}")
        d = self.diagram
        n, m, N = d.n_states, d.n_inputs, self.size
        z0 = self.start(t, x, u, p)
        every = set(self.every)
        # w = (z, u): the flow state and the held external inputs; M maps (x, u) at the instant to w
        M = np.zeros((N + m, n + m))
        M[N:, n:] = np.eye(m)
        M[:n, :n] = np.eye(n)
        S = self._instant(t, z0, u, p, every, differences)  # (N + m) x (N + m): w -> w, held signals refreshed
        M = S @ M
        C, D = self._output_rows(t, z0, u, p, every, M, differences)
        flow = self.flow()
        F = np.zeros((N + m, N + m))
        A_flow, B_flow = flow.jacobians_raw(t, z0, u, p)
        F[:N, :N], F[:N, N:] = A_flow, B_flow
        step = expm(F * self.base)  # the exact flow of the linearization over one base period (u held)
        for k in range(1, self.steps + 1):
            M = step @ M
            live = self.hits(k)
            U = self._updates(t, z0, p, live, differences)
            M = U @ M
            if k < self.steps:
                M = self._instant(t, z0, u, p, live, differences) @ M
        return M[:n, :n], M[:n, n:], C, D

    def _updates(self, t: float, z: Vector, p: Vector, live: AbstractSet[str], differences: Differences | None
                 ) -> np.ndarray:
        """d w / d w of the pending updates of the blocks in ``live``: x_b <- f_b(x_b, held u_b)."""
        d = self.diagram
        N, m = self.size, d.n_inputs
        U = np.eye(N + m)
        for block in live:
            model = d._blocks[block]
            if not model.n_states:
                continue
            rows, columns = d._slices[block]
            A, B = _block_jacobians(model, t, z[rows], z[self.held_u[block]], p[columns], "f", differences)
            U[rows] = 0.0
            U[rows, rows] = A
            U[rows, self.held_u[block]] = B
        return U

    def _signal_derivatives(self, t: float, z: Vector, u: Vector, p: Vector, live: AbstractSet[str],
                            differences: Differences | None = None
                            ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """d y_b / d w and d u_b / d w of every block, with the blocks in ``live`` evaluated and the other sampled
        ones held (w = (z, u))."""
        d = self.diagram
        N, m = self.size, d.n_inputs
        _, us = self.signals(t, z, u, p, live)
        dy: dict[str, np.ndarray] = {}

        def input_rows(block: str) -> np.ndarray:
            model = d._blocks[block]
            rows = np.zeros((model.n_inputs, N + m))
            for inlet, kind, source, port in d.drivers(block):
                if kind == "signal" and source in dy:
                    rows[inlet] = dy[source][port]
                elif kind == "input":
                    rows[inlet, N + source] = 1.0
            return rows

        for block in d._order:
            model = d._blocks[block]
            if block in self.every and block not in live:
                rows = np.zeros((model.n_outputs, N + m))
                rows[:, self.held_y[block]] = np.eye(model.n_outputs)
                dy[block] = rows
                continue
            state, columns = d._slices[block]
            Cb, Db = _block_jacobians(model, t, z[state], us[block], p[columns], "h", differences, d.name, block)
            dx = np.zeros((model.n_states, N + m))
            dx[:, state] = np.eye(model.n_states)
            dy[block] = Cb @ dx + Db @ input_rows(block)
        return dy, {block: input_rows(block) for block in d._blocks}

    def _instant(self, t: float, z: Vector, u: Vector, p: Vector, live: AbstractSet[str],
                 differences: Differences | None = None) -> np.ndarray:
        """d w / d w of holding anew the outputs and inputs of the blocks in ``live``."""
        dy, du = self._signal_derivatives(t, z, u, p, live, differences)
        S = np.eye(self.size + self.diagram.n_inputs)
        for block in live:
            S[self.held_y[block]] = dy[block]
            S[self.held_u[block]] = du[block]
        return S

    def _output_rows(self, t: float, z: Vector, u: Vector, p: Vector, live: AbstractSet[str], M: np.ndarray,
                     differences: Differences | None = None) -> tuple[np.ndarray, np.ndarray]:
        """C, D of the diagram's outputs at the instant, from (x, u) through M."""
        d = self.diagram
        n = d.n_states
        dy, _ = self._signal_derivatives(t, z, u, p, live, differences)
        rows = np.array([dy[b][port] for b, port in d._outputs.values()]).reshape(len(d._outputs), -1) @ M
        return rows[:, :n], rows[:, n:]


@dataclass(frozen=True, slots=True)
class _Step:
    """One block of the evaluation order: its model, state rows and parameter columns in the flow's vectors, its
    held outputs (sampled blocks) and its drivers (:meth:`Diagram.drivers`)."""

    block: str
    model: ModelContract
    rows: slice
    columns: slice
    held: slice | None
    n_inputs: int
    drivers: tuple[tuple[int, str, Any, int], ...]

    def inputs(self, u: Vector, ys: Mapping[str, Vector]) -> np.ndarray:
        """The block's inputs from the diagram's inputs and the outputs ``ys`` computed so far (0 for the others:
        a block evaluated before its drivers has no feedthrough), as ``Diagram._block_input``."""
        value = np.zeros(self.n_inputs)
        for inlet, kind, source, port in self.drivers:
            if kind == "signal":
                found = ys.get(source)
                if found is not None:
                    value[inlet] = found[port]
            else:
                value[inlet] = u[source] if kind == "input" else source
        return value


def _block_jacobians(model: Any, t: float, x: Vector, u: Vector, p: Vector, which: str,
                     differences: Differences | None, diagram: str = "", block: str = "") -> tuple[np.ndarray, ...]:
    """A block's exact (A, B) (``which`` "f") or (C, D) ("h"); by ``differences`` of f_raw or h_raw in (x, u) when
    it has none and they are given, else an InputError naming the block."""
    if which == "f" and model.jacobian_method is not None:
        return tuple(np.asarray(a, dtype=float) for a in model.jacobians_raw(t, x, u, p))
    exact = model.output_jacobians_raw(t, x, u, p) if which == "h" and model.jacobian_method is not None else None
    if exact is not None:
        return tuple(np.asarray(a, dtype=float) for a in exact)
    if differences is None:
        raise InputError(f"diagram {diagram!r}: block {block!r} has no exact output Jacobian; a sampled diagram is "
                         "linearized through its blocks' exact Jacobians")
    function = model.f_raw if which == "f" else model.h_raw
    n = x.size
    J = np.asarray(differences(lambda z: function(t, z[:n], z[n:], p), np.concatenate([x, u]))[0], dtype=float)
    return J[:, :n], J[:, n:]


def _instant_functions(sampling: Sampling, live: frozenset[str]) -> tuple[Any, Any] | None:
    from robodyn.codegen.loader import load_generated
    from robodyn.codegen.module import function_header, straight_line_function
    from robodyn.codegen.printer import safe_label
    from robodyn.diagrams.code import block_plans, code_blocks, compose_jump

    d = sampling.diagram
    models = code_blocks(d.blocks, d.memo().setdefault("lti forms", {}))
    if models is None:
        return None
    index = {b: k for k, b in enumerate(d.blocks)}
    held = {b: s.start for b, s in sampling.held_y.items()}
    plans = block_plans(models, d._slices, d.input_sources(), held)
    texts = compose_jump(plans, [index[b] for b in d._order], sorted(index[b] for b in live),
                         {index[b]: s.start for b, s in sampling.held_u.items()}, sampling.size)
    if texts is None:
        return None
    header = function_header(safe_label(d.name), sampling.size, d.n_inputs, len(d.parameters))
    functions = []
    for text, name in zip(texts, ("update", "hold")):
        module = f"{header}\n\n{text}"
        function = straight_line_function(module, name)
        functions.append(function if function is not None else getattr(load_generated(module, "robodyn_jump"),
                                                                       name))
    return functions[0], functions[1]


class Flow(ComposedCode, Model):
    """A sampled diagram between its instants: states z = (the diagram's states, held outputs, held inputs),
    the continuous blocks integrating with the sampled blocks' held outputs, everything else constant; outputs the
    diagram's, from the held values. Compiled like the diagram when its blocks are."""

    kind = "diagram flow"

    def __init__(self, sampling: Sampling):
        d = sampling.diagram
        self.owner = sampling
        self.name = f"{d.name}_flow"
        extra = [f"{b}.{y}@held" for b in sampling.every for y in d.blocks[b].outputs]
        extra += [f"{b}.{v}@input" for b in sampling.every for v in d.blocks[b].inputs]
        self.states = (*d.states, *extra)
        self.inputs = d.inputs
        self.outputs = d.outputs
        self.parameters = MappingProxyType(dict(d.parameters))

    def _f(self, t: float, z: Vector, u: Vector, p: Vector) -> Any:
        compiled = self._call("rhs", t, z, u, p, self.n_states)
        if compiled is not None:
            return compiled
        s = self.owner
        d = s.diagram
        _, us = s.signals(t, z, u, p, set())
        out = np.zeros(self.n_states)
        for block, model in d.blocks.items():
            if block not in s.every and model.n_states:
                rows, columns = d._slices[block]
                out[rows] = model.f_raw(t, z[rows], us[block], p[columns])
        return out

    def _h(self, t: float, z: Vector, u: Vector, p: Vector) -> Any:
        compiled = self._call("output", t, z, u, p, self.n_outputs)
        if compiled is not None:
            return compiled
        ys, _ = self.owner.signals(t, z, u, p, set())
        return np.array([ys[b][port] for b, port in self.owner.diagram._outputs.values()], dtype=float)

    def _composed(self) -> tuple[str, str] | None:
        memo = self.memo()
        if "flow code" not in memo:
            from robodyn.diagrams.code import block_plans, code_blocks, compose

            d = self.owner.diagram
            composed = None
            # the sampled blocks are held between instants: only the others' code is needed
            models = code_blocks(d.blocks, d.memo().setdefault("lti forms", {}), held=self.owner.every)
            if models is not None:
                held = {b: s.start for b, s in self.owner.held_y.items()}
                plans = block_plans(models, d._slices, d.input_sources(), held)
                index = {b: k for k, b in enumerate(d.blocks)}
                composed = compose(plans, [index[b] for b in d._order],
                                   [(index[b], port) for b, port in d._outputs.values()], n_rows=self.n_states)
            memo["flow code"] = composed
        found: tuple[str, str] | None = memo["flow code"]
        return found

    @property
    def self_contained(self) -> bool:
        return False

    @property
    def jacobian_method(self) -> str | None:
        return "diagram" if self.owner.diagram.jacobian_method is not None else None

    def jacobians_raw(self, t: float, z: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        """df/dz, df/du of the flow: the continuous blocks' exact Jacobians chained through the held signals."""
        s = self.owner
        d = s.diagram
        N, m = s.size, d.n_inputs
        _, du = s._signal_derivatives(t, z, u, p, set())
        _, us = s.signals(t, z, u, p, set())
        J = np.zeros((N, N + m))
        for block, model in d.blocks.items():
            if block in s.every or not model.n_states:
                continue
            rows, columns = d._slices[block]
            A, B = (np.asarray(a, dtype=float) for a in model.jacobians_raw(t, z[rows], us[block], p[columns]))
            J[rows] = B @ du[block]
            J[rows, rows] += A
        return J[:, :N], J[:, N:]

