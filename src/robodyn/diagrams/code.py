"""A diagram's generated code: its blocks' numba sources composed into one ``rhs`` and one ``out_fn``.

Every block of a compilable diagram has the sources of the model contract (``kernel_rhs_source()``,
``kernel_output_source()``; a block whose outputs are its states needs none for them). :func:`compose` writes the
diagram's functions ``rhs(t, x, u, p, out)`` and ``out_fn(t, x, u, p, out)`` from them, in the diagram's
evaluation order: each block's outputs (``_s<k>_<j>``), then each block's derivatives into its rows of ``out``.

- **Inlined**: a block function that is straight-line code (``_x0 = x[0]``, arithmetic, ``out[i] = ...``: what
  robodyn generates for symbolic models) is parsed with :mod:`ast` and copied into the diagram's function with
  its locals renamed ``_b<k>_name``, ``x[i]`` and ``p[i]`` moved to the block's rows, ``u[i]`` replaced by the
  signal that drives the input and ``out[i]`` by the block's signal or row. A diagram of such blocks is itself
  straight-line code: LLVM compiles it in milliseconds (robodyn.codegen.llvm.pyir) and fused batch kernels take it.
- **Called**: any other block source (a chain's tape, helpers) is copied whole with its top-level names renamed
  ``_b<k>_name`` and called on views of the diagram's arrays (its inputs gathered into a small array).

A block without numba sources that is linear with constant matrices (a LinearSystem: a controller from
``robodyn.mixsyn``, ``hinfsyn``, ``lqg``) takes part through its lti block (:func:`code_blocks`:
robodyn.diagrams.blocks.lti.compiled_form), the generator of the library's ``lti`` blocks; any other makes the
diagram run interpreted.

An input whose driving signal is not computed yet when a block's outputs are evaluated (a block without direct
feedthrough, evaluated before the blocks that drive it) reads 0.0, as the interpreted diagram does: such an
output does not depend on it. Nothing is evaluated here; the texts are compiled like any model's
(robodyn.model.compiled).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.codegen.fragments import prefixed, top_level_names
from robodyn.codegen.straight_line import ARGUMENTS as _ARGUMENTS
from robodyn.codegen.straight_line import expanded
from robodyn.codegen.text import python_identifier

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["BlockPlan", "ComposedCode", "code_blocks", "compose", "compose_jump", "derivative_sources",
           "parameter_source"]

_INDENT: Final = "    "


class ComposedCode:
    """The model contract's code of a model whose functions are composed from its blocks (a diagram, the flow of a
    sampled one): ``compilable``, ``kernel_rhs_source``, ``kernel_output_source`` from ``_composed()``, and the
    compiled functions called from Python (``_call``)."""

    def _composed(self) -> tuple[str, str] | None:
        raise NotImplementedError

    @property
    def compilable(self) -> bool:
        """Whether every block has numba sources: the model then compiles to one rhs and one out_fn."""
        return self._composed() is not None

    def kernel_rhs_source(self) -> str | None:
        composed = self._composed()
        return None if composed is None else composed[0]

    def kernel_output_source(self) -> str | None:
        composed = self._composed()
        return None if composed is None else composed[1]

    def _call(self, which: str, t: float, x: Any, u: Any, p: Any, size: int) -> Any:
        """The compiled ``rhs``, ``out_fn`` or ``jac`` (``which``: "rhs", "output", "jacobian") at a point, ``(size,)``,
        or None when the model is not compiled (robodyn.model.compiled.python_function)."""
        if not self.compilable:
            return None
        from robodyn.model.compiled import python_function

        function = python_function(self, which)  # type: ignore[arg-type]
        if function is None:
            return None
        out = np.empty(size)
        function(float(t), x, u, p, out)
        return out


class _NotComposable(Exception):
    """A block source that cannot take part in a composed function (the diagram then runs interpreted)."""


@dataclass(frozen=True, slots=True)
class BlockPlan:
    """One block of a diagram as the code sees it: its model, where its states and parameters sit in the
    diagram's vectors, and what drives each of its inputs (``("signal", block index, output index)``,
    ``("input", diagram input index, 0)`` or ``("const", value, 0)``)."""

    model: ModelContract
    x_offset: int
    p_offset: int
    sources: tuple[tuple[str, Any, int], ...]
    #: where the block's held outputs are in x (a sampled block between its sample instants: its outputs are read
    #: from there and its states do not move), or None
    held: int | None = None


def compose(plans: Sequence[BlockPlan], order: Sequence[int], outputs: Sequence[tuple[int, int]],
            n_rows: int | None = None) -> tuple[str, str] | None:
    """The sources of the diagram's ``rhs`` and ``out_fn`` (without the module header), or None when a block has
    no numba source. ``order``: the block indices in evaluation order; ``outputs``: (block, port) per diagram
    output; ``n_rows``: the size of x when it holds more than the blocks' states (held outputs): rows that no
    block moves get 0."""
    try:
        writer = _Writer(plans)
        signal_lines = writer.signals(order)
        rhs_lines = list(signal_lines)
        moving: set[int] = set()
        for k, plan in enumerate(plans):
            if plan.model.n_states and plan.held is None:
                rhs_lines += writer.derivatives(k)
                moving |= set(range(plan.x_offset, plan.x_offset + plan.model.n_states))
        total = n_rows if n_rows is not None else sum(plan.model.n_states for plan in plans)
        rhs_lines += [f"out[{i}] = 0.0" for i in range(total) if i not in moving]
        out_lines = list(signal_lines)
        out_lines += [f"out[{j}] = {writer.signal(k, port)}" for j, (k, port) in enumerate(outputs)]
    except _NotComposable:
        return None
    return writer.text(rhs_lines, out_lines)


def compose_jump(plans: Sequence[BlockPlan], order: Sequence[int], hits: Sequence[int],
                 held_u: Mapping[int, int], size: int) -> tuple[str, str] | None:
    """The sources of a sampled diagram's instant for the blocks ``hits`` (indices): ``update(t, x, u, p, out)``
    writes x with those blocks' pending updates applied (their held inputs at ``held_u[k]`` in x), and ``hold(t,
    x, u, p, out)`` writes x with their outputs and inputs held anew (the other sampled blocks held, ``plans``'
    ``held``). None when a block has no numba source."""
    import dataclasses

    try:
        writer = _Writer([dataclasses.replace(plan, sources=tuple(("held", held_u[k] + i, 0)
                                                                 for i in range(plan.model.n_inputs)))
                          if k in hits else plan for k, plan in enumerate(plans)])
        update: list[str] = []
        moved: set[int] = set()
        for k in hits:
            plan = plans[k]
            if plan.model.n_states:
                update += writer.derivatives(k)
                moved |= set(range(plan.x_offset, plan.x_offset + plan.model.n_states))
        update += [f"out[{i}] = x[{i}]" for i in range(size) if i not in moved]
        live = [dataclasses.replace(plan, held=None) if k in hits else plan for k, plan in enumerate(plans)]
        holder = _Writer(live)
        hold = holder.signals(order)
        written: set[int] = set()
        for k in hits:
            plan = plans[k]
            assert plan.held is not None
            for j in range(plan.model.n_outputs):
                hold.append(f"out[{plan.held + j}] = {holder.signal(k, j)}")
                written.add(plan.held + j)
            for i in range(plan.model.n_inputs):
                hold.append(f"out[{held_u[k] + i}] = {ast.unparse(holder.source(k, i))}")
                written.add(held_u[k] + i)
        hold += [f"out[{i}] = x[{i}]" for i in range(size) if i not in written]
    except _NotComposable:
        return None
    first, second = writer.text(update, []), holder.text(hold, [])
    return first[0].replace("def rhs(", "def update("), second[0].replace("def rhs(", "def hold(")


class _Writer:
    def __init__(self, plans: Sequence[BlockPlan]):
        self.plans = plans
        self.helpers: list[str] = []  # module-level text of called blocks (renamed)
        self.known: set[tuple[int, int]] = set()  # signals computed so far
        self.called: dict[tuple[int, str], str] = {}  # (block, function) -> the renamed function

    def signal(self, k: int, port: int) -> str:
        return f"_s{k}_{port}"

    def source(self, k: int, inlet: int) -> ast.expr:
        """The expression that drives input ``inlet`` of block ``k`` (0.0 before its signal is computed)."""
        kind, a, b = self.plans[k].sources[inlet]
        if kind == "input":
            return _subscript("u", a)
        if kind == "const":
            return ast.Constant(float(a))
        if kind == "held":  # a sampled block's input held at its last instant: an entry of x
            return _subscript("x", a)
        if (a, b) not in self.known:
            return ast.Constant(0.0)
        return ast.Name(self.signal(a, b), ast.Load())

    # --- the parts ------------------------------------------------------------------------------------------
    def signals(self, order: Sequence[int]) -> list[str]:
        lines: list[str] = []
        for k in order:
            model = self.plans[k].model
            held = self.plans[k].held
            text = model.kernel_output_source()
            if held is not None:
                lines += [f"{self.signal(k, j)} = x[{held + j}]" for j in range(model.n_outputs)]
            elif text is None:
                if not model.outputs_are_states:
                    raise _NotComposable
                lines += [f"{self.signal(k, j)} = x[{self.plans[k].x_offset + j}]" for j in range(model.n_states)]
            else:
                lines += self.block_function(k, text, "out_fn", [self.signal(k, j) for j in range(model.n_outputs)])
            self.known |= {(k, j) for j in range(model.n_outputs)}
        return lines

    def derivatives(self, k: int) -> list[str]:
        model = self.plans[k].model
        text = model.kernel_rhs_source() if model.compilable else None
        if text is None:
            raise _NotComposable
        offset = self.plans[k].x_offset
        return self.block_function(k, text, "rhs", [f"out[{offset + i}]" for i in range(model.n_states)])

    def block_function(self, k: int, text: str, name: str, targets: list[str]) -> list[str]:
        """Lines computing ``name`` of block ``k`` into ``targets`` (its ``out[i]``): inlined or called."""
        try:
            tree = ast.parse(text)
        except SyntaxError:
            raise _NotComposable from None
        inlined = _inline(expanded(tree, name), name, k, self, targets)
        return inlined if inlined is not None else self.call(k, tree, name, targets)

    def call(self, k: int, tree: ast.Module, name: str, targets: list[str]) -> list[str]:
        plan = self.plans[k]
        model = plan.model
        if (k, name) not in self.called:
            defined = top_level_names(tree, imports=False)  # imports at module level: not a generated fragment
            if defined is None or name not in defined:
                raise _NotComposable
            self.helpers.append(prefixed(tree, defined, f"_b{k}_"))
            self.called[(k, name)] = f"_b{k}_{name}"
        m, n, n_p = model.n_inputs, model.n_states, len(model.parameters)
        lines = [f"_bu{k} = np.empty({m})"]
        lines += [f"_bu{k}[{i}] = {ast.unparse(self.source(k, i))}" for i in range(m)]
        x_view = f"x[{plan.x_offset}:{plan.x_offset + n}]"
        p_view = f"p[{plan.p_offset}:{plan.p_offset + n_p}]"
        if name == "rhs":
            return [*lines, f"{self.called[(k, name)]}(t, {x_view}, _bu{k}, {p_view}, out[{plan.x_offset}:"
                            f"{plan.x_offset + n}])"]
        lines += [f"_by{k} = np.empty({len(targets)})",
                  f"{self.called[(k, name)]}(t, {x_view}, _bu{k}, {p_view}, _by{k})"]
        return [*lines, *(f"{target} = _by{k}[{j}]" for j, target in enumerate(targets))]

    def text(self, rhs_lines: list[str], out_lines: list[str]) -> tuple[str, str]:
        helpers = "\n\n".join(self.helpers)

        def function(name: str, lines: list[str]) -> str:
            body = [f"{_INDENT}{line}" for line in lines] or [f"{_INDENT}pass"]
            return "\n".join(["@jit", f"def {python_identifier(name)}(t, x, u, p, out):", *body, f"{_INDENT}return",
                              ""])

        rhs = function("rhs", rhs_lines)
        out = function("out_fn", out_lines)
        return (f"{helpers}\n\n\n{rhs}" if helpers else rhs), (f"{helpers}\n\n\n{out}" if helpers else out)


def derivative_sources(rhs: str, out: str, n: int, m: int, n_outputs: int) -> tuple[str, str] | None:
    """The sources of ``jac(t, x, u, p, out)`` (df/dx then df/du, row-major) and ``lin(t, x, u, p, out)`` ([A | B |
    C | D] row-major) from composed straight-line ``rhs`` and ``out_fn`` sources, by forward-mode differentiation
    (robodyn.codegen.forward); None when either is not straight-line code (a block is called)."""
    from robodyn.codegen.forward import NotStraightLine, jacobian_lines

    try:
        bodies = []
        for text, name in ((rhs, "rhs"), (out, "out_fn")):
            tree = ast.parse(text)
            if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != name:
                return None
            bodies.append(tree.body[0].body)
        jac = jacobian_lines(bodies[0], n, n, m, prefix="f")
        lin = [*jac, *jacobian_lines(bodies[1], n_outputs, n, m, offset=n * (n + m), prefix="h")]
    except (NotStraightLine, SyntaxError):
        return None

    def function(name: str, lines: list[str]) -> str:
        return "\n".join(["@jit", f"def {python_identifier(name)}(t, x, u, p, out):",
                          *(f"{_INDENT}{line}" for line in lines), f"{_INDENT}return", ""])

    return function("jac", jac), function("lin", lin)


def parameter_source(rhs: str, n: int, n_p: int) -> str | None:
    """The source of ``jacp(t, x, u, p, out)`` (df/dp ``(n, n_p)`` row-major) from a composed straight-line ``rhs``,
    by forward-mode differentiation with respect to p (robodyn.codegen.forward); None when it is not straight-line
    code."""
    from robodyn.codegen.forward import NotStraightLine, seeded_derivatives

    try:
        tree = ast.parse(rhs)
        if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != "rhs":
            return None
        lines, _, rows = seeded_derivatives(tree.body[0].body, n, {("p", c): {c: "1.0"} for c in range(n_p)})
    except (NotStraightLine, SyntaxError):
        return None
    lines += [f"out[{i * n_p + c}] = {rows.get(i, {}).get(c, '0.0')}" for i in range(n) for c in range(n_p)]
    return "\n".join(["@jit", "def jacp(t, x, u, p, out):", *(f"{_INDENT}{line}" for line in lines),
                      f"{_INDENT}return", ""])


# --- inlining ---------------------------------------------------------------------------------------------
def _inline(tree: ast.Module, name: str, k: int, writer: _Writer, targets: list[str]) -> list[str] | None:
    """The body of ``name`` rewritten for block ``k``, or None when the text is more than that one straight-line
    function (then it is called)."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != name:
        return None
    function = tree.body[0]
    if [a.arg for a in function.args.args] != list(_ARGUMENTS):
        return None
    local: set[str] = set()
    for statement in function.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name) and target.id not in _ARGUMENTS:
                local.add(target.id)
            elif not (_is_constant_subscript(target, "out")):
                return None
        elif not isinstance(statement, ast.Return | ast.Pass) or (
                isinstance(statement, ast.Return) and statement.value is not None):
            return None
    rewriter = _Rewriter(writer, k, local, targets)
    lines = []
    for statement in function.body:
        if isinstance(statement, ast.Assign):
            try:
                rewritten = rewriter.visit(statement)
            except _Fallback:
                return None
            lines.append(ast.unparse(ast.fix_missing_locations(rewritten)))
    return lines


class _Fallback(Exception):
    """Something the inliner does not rewrite (a computed index): the block function is called instead."""


def _is_constant_subscript(node: ast.AST, array: str) -> bool:
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == array
            and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int)


def _subscript(array: str, index: int) -> ast.Subscript:
    return ast.Subscript(ast.Name(array, ast.Load()), ast.Constant(index), ast.Load())


class _Rewriter(ast.NodeTransformer):
    def __init__(self, writer: _Writer, k: int, local: set[str], targets: list[str]):
        self.writer, self.k, self.local, self.targets = writer, k, local, targets
        self.plan = writer.plans[k]

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.local:
            return ast.Name(f"_b{self.k}_{node.id}", node.ctx)
        if node.id in ("x", "u", "p", "out"):
            raise _Fallback  # an array used whole
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        for array in ("x", "p", "u", "out"):
            if _is_constant_subscript(node, array):
                index = node.slice.value  # type: ignore[attr-defined]
                if array == "x":
                    return _subscript("x", self.plan.x_offset + index)
                if array == "p":
                    return _subscript("p", self.plan.p_offset + index)
                if array == "u":
                    return self.writer.source(self.k, index)
                if index >= len(self.targets):
                    raise _Fallback
                return ast.parse(self.targets[index], mode="eval").body
        if isinstance(node.value, ast.Name) and node.value.id in ("x", "p", "u", "out"):
            raise _Fallback
        return self.generic_visit(node)


# --- calling ----------------------------------------------------------------------------------------------
def code_blocks(blocks: Mapping[str, ModelContract], forms: dict[str, Any], held: Collection[str] = ()
                ) -> dict[str, ModelContract] | None:
    """Each block's model in the composed code, in the diagram's block order: the block itself when it has numba
    sources (or is ``held``: a sampled block whose code the flow does not need), else its lti block
    (robodyn.diagrams.blocks.lti.compiled_form); None when a block has neither (the diagram runs interpreted).
    ``forms``: the diagram's store of the lti blocks made (by block name, None for none), kept across calls."""
    from robodyn.diagrams.blocks.lti import compiled_form

    models: dict[str, ModelContract] = {}
    for block, model in blocks.items():
        if model.compilable or block in held:
            models[block] = model
            continue
        if block not in forms:
            forms[block] = compiled_form(model)
        if forms[block] is None:
            return None
        models[block] = forms[block]
    return models


def block_plans(blocks: Mapping[str, ModelContract], slices: Mapping[str, tuple[slice, slice]],
                sources: Mapping[str, list[tuple[str, Any, int]]], held: Mapping[str, int] | None = None
                ) -> list[BlockPlan]:
    """The :class:`BlockPlan` of each block, in the diagram's block order (``held``: where sampled blocks' held
    outputs are in x)."""
    return [BlockPlan(model, slices[b][0].start, slices[b][1].start, tuple(sources[b]), (held or {}).get(b))
            for b, model in blocks.items()]
