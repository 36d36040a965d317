"""Diagrams: models made of models, each block's outputs wired to other blocks' inputs (a block diagram).

A :class:`Diagram` is a model: its states, inputs, outputs and parameters are its blocks', named
``block.name`` (``plant.q``, ``motor.R``), and it answers the model contract from its blocks' contracts, never
their classes, so ``simulate``, ``linearize``, ``find_equilibrium`` (trim with output targets too), ``modes`` and
the rest take it as they take any model.

- **Ports.** A block's output ports are its model's outputs (its states when it declares none); its input ports
  are its inputs. A wire ``"a.y -> b.u"`` drives the input ``u`` of block ``b`` with the output ``y`` of block
  ``a``; a diagram input drives one or more block inputs. Every block input is driven exactly once.
- **Evaluation.** f(t, x, u, p): the blocks' outputs in an order in which each block comes after the blocks
  that drive its feedthrough inputs (an input some output depends on at once: a nonzero column of dh/du), then
  each block's f at its inputs. A cycle through feedthrough inputs (an algebraic loop) is refused when the
  diagram is made, with the cycle named. Feedthrough is judged per input, from dh/du at two probe points (exact
  where the block has output Jacobians, else differences): a loop through an input that no output reads at once
  (an estimator's applied input, read by its update only) is no algebraic loop; one through a block whose driven
  output does not depend on the loop's input while another output does is refused: split such a block.
- **Exact Jacobians** when every block has them (``jacobian_method = "diagram"``): the chain rule through the
  wires, in the same order — du_b/dz from the wires' sources, dy_b/dz = C_b dx_b/dz + D_b du_b/dz, then
  df_b/dz = A_b dx_b/dz + B_b du_b/dz for z = x and z = u. Otherwise ``linearize`` differences f. The same with
  z = p gives df/dp and dh/dp (robodyn.diagrams.parameters).
- **Compiled**: when every block has numba sources, the diagram is one generated rhs and out_fn (and, when they
  are straight-line code, their exact Jacobian by forward-mode differentiation): robodyn.diagrams.code.
- **Sampled blocks** (a ``sample_period``): robodyn.diagrams.sampled; ``f`` is then the continuous derivatives and
  the discrete states' increments at an instant of every block (zero at an operating point), ``simulate`` stops at
  the instants and ``linearize`` gives the discrete-time model over the hyperperiod.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.base.errors import InputError
from robodyn.diagrams import build
from robodyn.diagrams.code import ComposedCode
from robodyn.diagrams.parameters import DiagramParameters
from robodyn.model.system import Model, Vector, require_model

if TYPE_CHECKING:
    from robodyn.diagrams.sampled import Sampling
    from robodyn.model.protocol import ModelContract
    from robodyn.model.roles import Role

__all__ = ["Diagram"]


class Diagram(ComposedCode, DiagramParameters, Model):
    """Blocks (any robodyn models) connected output to input, as one model.

    Parameters
    ----------
    blocks
        ``{name: model}``; names are identifiers (they prefix the diagram's names: ``plant.q``).
    connect
        Wires ``"a.y -> b.u"`` (or ``("a.y", "b.u")`` pairs): block ``a``'s output ``y`` drives block ``b``'s
        input ``u``.
    inputs
        ``{name: "b.u"}`` or ``{name: ["b.u", "c.v"]}``: the diagram's inputs and the block inputs each drives.
    outputs
        ``{name: "b.y"}``: the diagram's outputs; default every block output, named ``b.y``.
    defaults
        Values of block inputs left unconnected on purpose: ``{"b.u": 0.0}``, or ``{"b": 0.0}`` for every
        unconnected input of block ``b`` (without one, an unconnected input is an error).
    name
        The diagram's name.

    Examples
    --------
    >>> loop = Diagram({"plant": robodyn.load("joint"), "pd": pd}, ["pd.u -> plant.u", "plant.q -> pd.y"],
    ...                inputs={"r": "pd.r"}, outputs={"q": "plant.q"})  # doctest: +SKIP
    """

    kind = "diagram"
    _size: tuple[int, int]  # (blocks with the diagrams inside expanded, levels of nesting): diagram_build.check_size

    def __init__(self, blocks: Mapping[str, ModelContract], connect: Sequence[str | tuple[str, str]] = (),
                 inputs: Mapping[str, str | Sequence[str]] | None = None, outputs: Mapping[str, str] | None = None,
                 *, defaults: Mapping[str, float] | None = None, name: str = "diagram"):
        if not isinstance(blocks, Mapping) or not blocks:
            raise InputError(f"diagram {name!r}: blocks must map block names to models, got {blocks!r}")
        for label, block in blocks.items():
            if not isinstance(label, str) or not build.BLOCK_NAME.match(label):
                raise InputError(f"diagram {name!r}: block name {label!r} is not a name (letters, digits, _)")
            require_model(block, f"diagram {name!r}, block {label!r}")
        inner = [block._size if isinstance(block, Diagram) else (1, 0) for block in blocks.values()]
        self._size = (sum(leaves for leaves, _ in inner), 1 + max(depth for _, depth in inner))  # (blocks, levels)
        build.check_size(*self._size, f"diagram {name!r}")
        self.name = name
        self._blocks: dict[str, ModelContract] = dict(blocks)
        self._wires = tuple(build.wire(self._blocks, item, name) for item in connect)
        self._inputs = build.diagram_inputs(self._blocks, inputs, name)
        self._defaults: dict[tuple[str, int], float] = {}
        self._check_driven(name, defaults or {})
        self._outputs = build.diagram_outputs(self._blocks, outputs, name)
        self.states = tuple(f"{b}.{s}" for b, model in self._blocks.items() for s in model.states)
        self.inputs = tuple(self._inputs)
        self.outputs = tuple(self._outputs)
        self.parameters = MappingProxyType({f"{b}.{k}": float(v) for b, model in self._blocks.items()
                                            for k, v in model.parameters.items()})
        self._slices = build.slices(self._blocks)
        self._through = {b: build.feedthrough(model) for b, model in self._blocks.items()}
        self._order = build.evaluation_order(self._blocks, self._wires, name, self._through)
        self.sampling()  # checks the sample periods

    # --- structure ---------------------------------------------------------------------------------------
    @property
    def blocks(self) -> Mapping[str, ModelContract]:
        """The blocks by name (read-only)."""
        return MappingProxyType(self._blocks)

    def units(self) -> dict[str, str]:
        """The blocks' units under the diagram's names (``plant.q: rad``), and the diagram inputs' and outputs'
        from the block ports they stand for."""
        units = {b: model.units() for b, model in self._blocks.items()}  # once each: nested diagrams ask theirs
        found = {f"{b}.{k}": v for b, block_units in units.items() for k, v in block_units.items()}
        for label, inlets in self._inputs.items():
            block, inlet = inlets[0]
            unit = units[block].get(self._blocks[block].inputs[inlet])
            if unit is not None:
                found[label] = unit
        for label, (block, port) in self._outputs.items():
            unit = units[block].get(self._blocks[block].outputs[port])
            if unit is not None:
                found[label] = unit
        return found

    def affine_form(self, p: Vector) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(A, B, c) with x' = A x + B u + c when every block is linear and time-invariant (each has an affine form)
        and none is sampled: the exact path (matrix exponentials) then simulates the diagram."""
        if self.sampling() is not None or self.jacobian_method is None:
            return None
        for block, model in self._blocks.items():
            if model.affine_form(p[self._slices[block][1]]) is None:
                return None
        zero_x, zero_u = np.zeros(self.n_states), np.zeros(self.n_inputs)
        A, B = self.jacobians_raw(0.0, zero_x, zero_u, p)
        return np.asarray(A, dtype=float), np.asarray(B, dtype=float), self.f_raw(0.0, zero_x, zero_u, p)

    def robot_block(self) -> tuple[str, ModelContract] | None:
        """The block with frames (a chain or URDF robot), when there is exactly one: ``fk`` and ``ik`` of the
        diagram are its, with names under its prefix (``arm.tool``, ``arm.shoulder``)."""
        robots = [(b, m) for b, m in self._blocks.items() if m.kinematics() is not None]
        return robots[0] if len(robots) == 1 else None

    def block_diagram(self) -> dict[str, Any]:
        """The drawing's facts: ``blocks`` {name: {model, kind, inputs, outputs, sample}}, ``wires`` [(source
        block, port, target block, port)], ``inputs`` {name: ["b.u", ...]}, ``outputs`` {name: "b.y"}, and
        ``loops``: the ports where ``robodyn analyze`` opens the feedback loops: the loops through a block that a
        diagram input drives (a controller: a motor's back-EMF loop is physics, not control), at that block's
        output; every loop when no such block is in one."""
        blocks = {b: {"model": m.name, "kind": m.kind, "inputs": list(m.inputs), "outputs": list(m.outputs),
                      "sample": m.sample_period} for b, m in self._blocks.items()}
        wires = [(w.source, self._blocks[w.source].outputs[w.port], w.target, self._blocks[w.target].inputs[w.inlet])
                 for w in self._wires]
        inputs = {k: [f"{b}.{self._blocks[b].inputs[i]}" for b, i in v] for k, v in self._inputs.items()}
        outputs = {k: f"{b}.{self._blocks[b].outputs[j]}" for k, (b, j) in self._outputs.items()}
        return {"blocks": blocks, "wires": wires, "inputs": inputs, "outputs": outputs, "loops": self._loops()}

    def _loops(self) -> list[str]:
        """One port per elementary cycle of the block graph (at most 8 cycles are looked for)."""
        successors: dict[str, list[tuple[str, str]]] = {b: [] for b in self._blocks}
        for w in self._wires:
            successors[w.source].append((w.target, f"{w.source}.{self._blocks[w.source].outputs[w.port]}"))
        driven = {b for inlets in self._inputs.values() for b, _ in inlets}
        order = list(self._blocks)
        cycles: list[list[tuple[str, str]]] = []

        def walk(start: str, block: str, path: list[tuple[str, str]], seen: set[str]) -> None:
            for target, port in successors[block]:
                if len(cycles) >= 8:
                    return
                if target == start:
                    cycles.append([*path, (block, port)])
                elif target not in seen and order.index(target) > order.index(start):
                    walk(start, target, [*path, (block, port)], seen | {target})

        for start in order:
            walk(start, start, [], {start})
        controlled = [c for c in cycles if any(block in driven for block, _ in c)]
        ports: list[str] = []
        for cycle in controlled or cycles:  # loops through a block the references enter (a controller) first
            preferred = [port for block, port in cycle if block in driven]
            port = (preferred or [cycle[0][1]])[0]
            if port not in ports:
                ports.append(port)
        return ports

    def open_loop(self, port: str) -> tuple[Diagram, str, str]:
        """The diagram with the loop broken at ``port`` and the names of the injected input and the returned
        output: an output port ``b.y`` breaks every wire it drives, an input port ``b.u`` the wire into it; the
        injected signal ``<port>_injected`` drives what the port drove, and the returned output
        ``<port>_returned`` is the signal that drove it (robodyn.linearize(..., open=port))."""
        block, dot, name = str(port).partition(".")
        if not dot or block not in self._blocks:
            raise build.unknown(block, list(self._blocks), f"diagram {self.name!r}: open={port!r}: unknown block",
                                "blocks")
        model = self._blocks[block]
        if name in model.outputs:
            source = (block, model.outputs.index(name))
            broken = [w for w in self._wires if (w.source, w.port) == source]
        elif name in model.inputs:
            inlet = model.inputs.index(name)
            broken = [w for w in self._wires if (w.target, w.inlet) == (block, inlet)]
        else:
            raise build.unknown(name, [*model.outputs, *model.inputs], f"diagram {self.name!r}: open={port!r}: block "
                           f"{block!r} has no port", "its ports")
        if not broken:
            raise InputError(f"diagram {self.name!r}: open={port!r}: no connection to break there (the port is not "
                             "wired to another block): open a loop at a connected port")
        kept = [w for w in self._wires if w not in broken]

        def text(w: build.Wire) -> str:
            return f"{w.source}.{self._blocks[w.source].outputs[w.port]}"

        injected, returned = f"{port}_injected", f"{port}_returned"
        inputs: dict[str, str | list[str]] = {k: [f"{b}.{self._blocks[b].inputs[i]}" for b, i in v]
                                              for k, v in self._inputs.items()}
        inputs[injected] = [f"{w.target}.{self._blocks[w.target].inputs[w.inlet]}" for w in broken]
        defaults = {f"{b}.{self._blocks[b].inputs[i]}": value for (b, i), value in self._defaults.items()}
        opened = Diagram(self._blocks, [(text(w), f"{w.target}.{self._blocks[w.target].inputs[w.inlet]}")
                                        for w in kept], inputs, {returned: text(broken[0])}, defaults=defaults,
                         name=f"{self.name}_open_at_{block}_{name}")
        if dict(opened.parameters) != dict(self.parameters):  # values set on this diagram (with_parameters, --param)
            opened = opened.with_parameters(dict(self.parameters))
        return opened, injected, returned

    def with_outputs(self, outputs: Mapping[str, str]) -> Diagram:
        """The diagram with ``{name: "block.port"}`` added to its outputs (robodyn.diagrams.rest)."""
        from robodyn.diagrams.rest import with_outputs

        return with_outputs(self, outputs)

    def rest_state(self, t: float, x: Vector, u: Vector, p: Vector) -> Vector | None:
        """The state near ``x`` with the blocks that know where they rest there (robodyn.diagrams.rest), or None."""
        from robodyn.diagrams.rest import rest_state

        return rest_state(self, t, x, u, p)

    def initial_state(self) -> Vector:
        """The blocks' own initial states ``(n,)`` side by side, in the diagram's order of states."""
        parts = [model.initial_state() for model in self._blocks.values()]
        return np.concatenate(parts) if parts else np.zeros(0)

    def roles(self) -> tuple[Role, ...]:
        """The blocks' roles (estimators, predictive controllers), names qualified (robodyn.diagrams.rest)."""
        from robodyn.diagrams.rest import roles

        return roles(self)

    def show_text(self) -> str:
        """The blocks (their models and ports), the wires and the diagram's inputs and outputs, then each block's
        own equations as ``robodyn show`` prints them."""
        lines = ["blocks:"]
        for label, model in self._blocks.items():
            lines.append(f"  {label}: {model.name} ({model.kind}); in: {', '.join(model.inputs) or '-'}; "
                         f"out: {', '.join(model.outputs) or '-'}; states: {', '.join(model.states) or 'none'}")
        lines.append("wires:")
        lines += [f"  {w.source}.{self._blocks[w.source].outputs[w.port]} -> {w.target}."
                  f"{self._blocks[w.target].inputs[w.inlet]}" for w in self._wires] or ["  none"]
        for label, inlets in self._inputs.items():
            ports = ", ".join(f"{b}.{self._blocks[b].inputs[i]}" for b, i in inlets)
            lines.append(f"  input {label} -> {ports}")
        for label, (block, port) in self._outputs.items():
            lines.append(f"  output {label} <- {block}.{self._blocks[block].outputs[port]}")
        for label, model in self._blocks.items():
            lines += ["", f"block {label}:", *(f"  {line}" for line in model.show_text().splitlines())]
        return "\n".join(lines)

    def _check_driven(self, name: str, defaults: Mapping[str, float]) -> None:
        driven: dict[tuple[str, int], str] = {}
        sources = [(f"{w.source}.{self._blocks[w.source].outputs[w.port]}", (w.target, w.inlet)) for w in self._wires]
        sources += [(f"the diagram input {k!r}", inlet) for k, inlets in self._inputs.items() for inlet in inlets]
        for source, (block, inlet) in sources:
            port = f"{block}.{self._blocks[block].inputs[inlet]}"
            if (block, inlet) in driven:
                raise InputError(f"diagram {name!r}: input {port} is driven twice ({driven[(block, inlet)]} and "
                                 f"{source}): drive each block input once")
            driven[(block, inlet)] = source
        if not isinstance(defaults, Mapping):
            raise InputError(f"diagram {name!r}: defaults must map block inputs (b.u) or blocks to values")
        for key, value in defaults.items():
            from robodyn.model.quantities import parse_number

            number = parse_number(value, where=f"diagram {name!r}: default of {key}")
            block, dot, _ = str(key).partition(".")
            targets = [build.port(self._blocks, str(key), "input", name)] if dot else \
                [(block, i) for i in range(self._blocks[block].n_inputs) if (block, i) not in driven] \
                if block in self._blocks else [build.port(self._blocks, f"{key}.?", "input", name)]
            for target in targets:
                if target in driven:
                    raise InputError(f"diagram {name!r}: input {target[0]}.{self._blocks[target[0]].inputs[target[1]]}"
                                     f" has a default but is driven by {driven[target]}: a default is for an input "
                                     "left unconnected")
                self._defaults[target] = number
        loose = [f"{b}.{u}" for b, model in self._blocks.items() for i, u in enumerate(model.inputs)
                 if (b, i) not in driven and (b, i) not in self._defaults]
        if loose:
            raise InputError(f"diagram {name!r}: block inputs left unconnected: {', '.join(loose)}; connect them "
                             "(connect: [\"a.y -> b.u\"]), make them diagram inputs (inputs: {name: b.u}) or give "
                             "them a value (defaults: {b.u: 0})")

    # --- evaluation --------------------------------------------------------------------------------------
    def _split(self, x: Vector, p: Vector) -> tuple[dict[str, Vector], dict[str, Vector]]:
        xs = {b: x[s] for b, (s, _) in self._slices.items()}
        ps = {b: p[q] for b, (_, q) in self._slices.items()}
        return xs, ps

    def drivers(self, block: str) -> list[tuple[int, str, Any, int]]:
        """What drives each input of ``block``: (inlet, ``"signal"``, source block, its output index), (inlet,
        ``"input"``, diagram input index, 0) or (inlet, ``"const"``, value, 0) — the one description every
        evaluation of the diagram (values, derivatives, code) reads."""
        memo = self.memo()
        if "diagram drivers" not in memo:
            names = list(self._blocks)
            memo["diagram drivers"] = {b: [(i, kind, names[a] if kind == "signal" else a, port)
                                           for i, (kind, a, port) in enumerate(sources)]
                                       for b, sources in self.input_sources().items()}
        found: list[tuple[int, str, Any, int]] = memo["diagram drivers"][block]
        return found

    def _block_input(self, block: str, u: Vector, ys: Mapping[str, Vector]) -> Vector:
        """The inputs of ``block`` from the diagram's inputs and the outputs ``ys`` computed so far (0 for the
        others: a block evaluated before its drivers has no feedthrough)."""
        value = np.zeros(self._blocks[block].n_inputs)
        for inlet, kind, source, port in self.drivers(block):
            if kind == "signal":
                if source in ys:
                    value[inlet] = ys[source][port]
            else:
                value[inlet] = u[source] if kind == "input" else source
        return value

    def _signals(self, t: float, x: Vector, u: Vector, p: Vector
                 ) -> tuple[dict[str, Vector], dict[str, Vector], dict[str, Vector], dict[str, Vector]]:
        """Each block's state, parameters, input and output at the point."""
        xs, ps = self._split(x, p)
        ys: dict[str, Vector] = {}
        for block in self._order:
            model = self._blocks[block]
            ys[block] = model.h_raw(t, xs[block], self._block_input(block, u, ys), ps[block])
        us = {block: self._block_input(block, u, ys) for block in self._blocks}
        return xs, ps, us, ys

    def symbol_table(self) -> Any:
        """The diagram's symbols (robodyn.diagrams.switching.DiagramSymbols): for the events it makes."""
        memo = self.memo()
        if "diagram symbols" not in memo:
            from robodyn.diagrams.switching import DiagramSymbols

            memo["diagram symbols"] = DiagramSymbols(self)
        return memo["diagram symbols"]

    def switching_events(self) -> list[Any]:
        """Terminal events at the corners of its blocks (saturations, limited PIDs, quantizers), written in the
        diagram's symbols where the signals that reach them have expressions (robodyn.diagrams.switching):
        ``simulate`` stops and restarts there. None for a sampled diagram (its instants restart it)."""
        memo = self.memo()
        if "diagram corners" not in memo:
            from robodyn.diagrams.switching import switching_events

            memo["diagram corners"] = [] if self.sampling() is not None or not self.compilable else \
                switching_events(self)
        found: list[Any] = memo["diagram corners"]
        return found

    def sampling(self) -> Sampling | None:
        """The sampled blocks' rates and held signals (robodyn.diagrams.sampled.Sampling), or None when none is
        sampled: ``simulate`` stops at their instants and ``linearize`` gives a discrete-time model."""
        memo = self.memo()
        if "diagram sampling" not in memo:
            from robodyn.diagrams.sampled import sampling_of

            memo["diagram sampling"] = sampling_of(self)
        return memo["diagram sampling"]

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        sampled = self.sampling()
        if sampled is not None:  # the derivatives and the discrete states' increments at an instant of every block
            return sampled.residual(t, x, u, p)
        compiled = self._call("rhs", t, x, u, p, self.n_states)
        if compiled is not None:
            return compiled
        xs, ps, us, _ = self._signals(t, x, u, p)
        parts = [self._blocks[b].f_raw(t, xs[b], us[b], ps[b]) for b in self._blocks]
        return np.concatenate(parts) if parts else np.zeros(0)

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        sampled = self.sampling()
        if sampled is not None:
            return sampled.outputs(t, x, u, p)
        compiled = self._call("output", t, x, u, p, self.n_outputs)
        if compiled is not None:
            return compiled
        _, _, _, ys = self._signals(t, x, u, p)
        return np.array([ys[block][port] for block, port in self._outputs.values()], dtype=float)

    def h_many(self, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: Any) -> np.ndarray:
        """Outputs along a trajectory block by block, each block's own ``h_many`` on all T points at once (its
        inputs gathered from the signals before it): t ``(T,)``, x ``(T, n)``, u ``(T, m)`` -> ``(T, n_outputs)``;
        ``p`` one parameter vector or a list of per-parameter columns (:meth:`h_batch`)."""
        T = len(t)
        if self.sampling() is not None:
            return super().h_many(t, x, u, p)
        needed = self._needed_for_outputs()
        ys: dict[str, np.ndarray] = {}
        for block in (b for b in self._order if b in needed):
            model = self._blocks[block]
            rows, columns = self._slices[block]
            inputs = np.zeros((T, model.n_inputs))
            for inlet, kind, source, port in self.drivers(block):
                if kind == "signal":
                    if source in ys:
                        inputs[:, inlet] = ys[source][:, port]
                else:
                    inputs[:, inlet] = u[:, source] if kind == "input" else source
            found = model.h_many(t, np.ascontiguousarray(x[:, rows]), inputs, p[columns])
            ys[block] = np.broadcast_to(np.asarray(found, dtype=float), (T, model.n_outputs))
        if not self._outputs:
            return np.zeros((T, 0))
        return np.column_stack([ys[block][:, port] for block, port in self._outputs.values()])

    def _needed_for_outputs(self) -> set[str]:
        """The blocks the diagram's outputs depend on at an instant: their own blocks and, through blocks with
        direct feedthrough, the blocks that drive those inputs."""
        needed = {block for block, _ in self._outputs.values()}
        pending = list(needed)
        while pending:
            block = pending.pop()
            for wire in self._wires:
                if wire.target == block and wire.inlet in self._through[block] and wire.source not in needed:
                    needed.add(wire.source)
                    pending.append(wire.source)
        return needed

    # --- compiled: the blocks' sources composed (robodyn.diagrams.code) -------------------------------------
    def _composed(self) -> tuple[str, str] | None:
        memo = self.memo()
        if "diagram code" not in memo:
            from robodyn.diagrams.code import block_plans, code_blocks, compose

            composed = None
            models = code_blocks(self._blocks, memo.setdefault("lti forms", {}))
            if models is not None and self.sampling() is None:
                plans = block_plans(models, self._slices, self.input_sources())
                index = {b: k for k, b in enumerate(self._blocks)}
                composed = compose(plans, [index[b] for b in self._order],
                                   [(index[b], port) for b, port in self._outputs.values()])
            memo["diagram code"] = composed
        found: tuple[str, str] | None = memo["diagram code"]
        return found

    def input_sources(self) -> dict[str, list[tuple[str, Any, int]]]:
        """What drives each block input, by block: ``("signal", block index, output index)``, ``("input",
        diagram input index, 0)`` or ``("const", value, 0)`` (robodyn.diagrams.code's plans)."""
        index = {b: k for k, b in enumerate(self._blocks)}
        sources: dict[str, list[tuple[str, Any, int]]] = {
            b: [("input", -1, 0)] * model.n_inputs for b, model in self._blocks.items()}
        for (target, inlet), number in self._defaults.items():
            sources[target][inlet] = ("const", number, 0)
        for wire in self._wires:
            sources[wire.target][wire.inlet] = ("signal", index[wire.source], wire.port)
        for k, inlets in enumerate(self._inputs.values()):
            for target, inlet in inlets:
                sources[target][inlet] = ("input", k, 0)
        return sources

    def _derivative_code(self) -> tuple[str, str] | None:
        """The sources of the composed ``jac`` and ``lin`` (robodyn.diagrams.code), or None."""
        memo = self.memo()
        if "diagram derivatives" not in memo:
            composed = self._composed()
            found = None
            if composed is not None and self.jacobian_method is not None:
                from robodyn.diagrams.code import derivative_sources

                found = derivative_sources(*composed, self.n_states, self.n_inputs, self.n_outputs)
            memo["diagram derivatives"] = found
        code: tuple[str, str] | None = memo["diagram derivatives"]
        return code

    def linearization_source(self) -> str | None:
        """The source of the composed ``lin(t, x, u, p, out)`` ([A | B | C | D] flat, by forward-mode differentiation
        of the composed code: robodyn.diagrams.code.derivative_sources), or None; what its parsed-model record
        keeps (robodyn.files.cached_diagram)."""
        code = self._derivative_code()
        return None if code is None else code[1]

    def _linearization_function(self) -> Any:
        """The compiled ``lin(t, x, u, p, out)`` of [A | B | C | D], or None."""
        memo = self.memo()
        if "diagram lin" not in memo:
            source = self.linearization_source()
            if source is not None:
                from robodyn.model.compiled import linearization_function

                memo["diagram lin"] = linearization_function(self, source)
            else:
                memo["diagram lin"] = None
        return memo["diagram lin"]

    def kernel_jacobian_source(self) -> str | None:
        code = self._derivative_code()
        return None if code is None else code[0]

    @property
    def self_contained(self) -> bool:
        """False: a diagram's blocks come from other files (the parsed-model cache keeps no record of it)."""
        return False

    def exported_functions(self) -> Any:
        """The flattened diagram's f, h and linearize on one tape, for C export (robodyn.diagrams.export);
        None when a block is sampled or does not export."""
        from robodyn.diagrams.export import diagram_exported_functions

        return diagram_exported_functions(self)

    # --- exact derivatives through the wires ---------------------------------------------------------------
    @property
    def jacobian_method(self) -> str | None:
        """``"diagram"`` (the chain rule through the wires) when every block has exact Jacobians of f and h."""
        exact = self.memo().get("diagram exact")
        if exact is None:
            exact = self.memo()["diagram exact"] = all(build.has_exact(model) for model in self._blocks.values())
        return "diagram" if exact else None

    def _derivatives(self, t: float, x: Vector, u: Vector, p: Vector
                     ) -> tuple[np.ndarray, np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
        """df/dx (n, n), df/du (n, m) and each block's dy/dx, dy/du, by the chain rule."""
        n, m = self.n_states, self.n_inputs
        xs, ps, us, _ = self._signals(t, x, u, p)
        dy: dict[str, tuple[np.ndarray, np.ndarray]] = {}

        def input_derivative(block: str) -> tuple[np.ndarray, np.ndarray]:
            model = self._blocks[block]
            du_dx, du_du = np.zeros((model.n_inputs, n)), np.zeros((model.n_inputs, m))
            for inlet, kind, source, port in self.drivers(block):
                if kind == "signal" and source in dy:
                    du_dx[inlet], du_du[inlet] = dy[source][0][port], dy[source][1][port]
                elif kind == "input":
                    du_du[inlet, source] = 1.0
            return du_dx, du_du

        for block in self._order:
            model = self._blocks[block]
            du_dx, du_du = input_derivative(block)
            found = model.output_jacobians_raw(t, xs[block], us[block], ps[block])
            assert found is not None  # jacobian_method checked it
            C, D = (np.asarray(a, dtype=float) for a in found)
            dx = np.zeros((model.n_states, n))
            dx[:, self._slices[block][0]] = np.eye(model.n_states)
            dy[block] = (C @ dx + D @ du_dx, D @ du_du)
        A, B = np.zeros((n, n)), np.zeros((n, m))
        for block, model in self._blocks.items():
            rows = self._slices[block][0]
            du_dx, du_du = input_derivative(block)
            Ab, Bb = (np.asarray(a, dtype=float) for a in model.jacobians_raw(t, xs[block], us[block], ps[block]))
            A[rows] = Bb @ du_dx
            A[rows, rows] += Ab
            B[rows] = Bb @ du_du
            if model.sample_period is not None:  # f of a sampled block is its increment x[k+1] - x[k]
                A[rows, rows] -= np.eye(model.n_states)
        return A, B, dy

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        """Exact df/dx ``(n, n)`` and df/du ``(n, m)``: the compiled forward-mode derivative of the composed code when
        there is one (f and its Jacobian one piece of code, as in the kernels), else the chain rule through the
        blocks."""
        if self.jacobian_method is None:
            raise NotImplementedError(f"diagram {self.name!r}: a block has no exact Jacobian")
        n, m = self.n_states, self.n_inputs
        compiled = self._call("jacobian", t, x, u, p, n * (n + m)) if self._derivative_code() is not None else None
        if compiled is not None:
            return compiled[: n * n].reshape(n, n), compiled[n * n:].reshape(n, m)
        A, B, _ = self._derivatives(t, x, u, p)
        return A, B

    def output_jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector
                             ) -> tuple[np.ndarray, np.ndarray] | None:
        """Exact dh/dx ``(p, n)`` and dh/du ``(p, m)``: the C and D of the compiled linearization when there is one,
        else the chain rule through the blocks."""
        if self.jacobian_method is None:
            return None
        if self._linearization_function() is not None:
            n, m = self.n_states, self.n_inputs
            flat = self.linearization_raw(t, x, u, p)[n * (n + m):]
            return flat[: self.n_outputs * n].reshape(self.n_outputs, n), flat[self.n_outputs * n:].reshape(
                self.n_outputs, m)
        return self._output_rows(self._derivatives(t, x, u, p)[2])

    def _output_rows(self, dy: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
        """C, D of the diagram's outputs from the blocks' dy/dx, dy/du."""
        rows = [(dy[block][0][port], dy[block][1][port]) for block, port in self._outputs.values()]
        C = np.array([r[0] for r in rows]).reshape(len(rows), self.n_states)
        D = np.array([r[1] for r in rows]).reshape(len(rows), self.n_inputs)
        return C, D

    def linearization_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """A, B, C, D flat: the compiled forward-mode derivative of the composed code when there is one, else one
        pass of the chain rule through the blocks' Jacobians (the default asks for f's and h's apart)."""
        if self.jacobian_method is None:
            raise NotImplementedError(f"diagram {self.name!r}: a block has no exact Jacobian")
        lin = self._linearization_function()
        if lin is not None:
            n, m = self.n_states, self.n_inputs
            out = np.empty((n + self.n_outputs) * (n + m))
            lin(float(t), x, u, p, out)
            return out
        A, B, dy = self._derivatives(t, x, u, p)
        C, D = self._output_rows(dy)
        return np.concatenate([A.ravel(), B.ravel(), C.ravel(), D.ravel()])
