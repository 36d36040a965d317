"""The generated functions of a sensitivity model (robodyn.model.derived.sensitivity): ``rhs``, ``jac`` and ``out_fn``
of the
state [x, S_1, ..., S_k], S_j = dx/dtheta_j.

Two ways, chosen by the model's own code:

- **Forward mode on straight-line code.** When the model's ``rhs`` is straight-line code (symbolic models, Lagrangian
  and mechanical models up to six coordinates, diagrams of them, small chains' tapes written out), S_j' = f_x S_j +
  f_p e_j is the directional derivative of f along (S_j, e_j): :func:`robodyn.codegen.forward.seeded_derivatives`
  seeds x[i] with S_j's entry i (an entry of the augmented state) and the parameter p[c] of direction j with 1. The
  result is straight-line again (LLVM compiles it in milliseconds; the fused batch kernels take it), exact, and
  costs about one evaluation of f per direction.
- **Composed calls.** Otherwise the model's ``rhs``, its exact ``jac`` (df/dx, df/du) and ``jacp`` (df/dp) are copied
  with their top-level names prefixed and called by a ``rhs`` that forms f_x S + f_p on work arrays (numba).

With state feedback u = u_ref - K (x - x_ref) the inputs move with the state: du/dx = G = -K is stored after the
model's parameters (``p[n_p + r n + l] = G[r, l]``), and the tangent of u[r] along S_j is sum_l G[r, l] S_j[l].

``jac`` is the Newton matrix's Jacobian of the implicit methods: block-diagonal, f_x for x and f_x + f_u G for every
S_j (the feedback's f_u G of x the kernels add themselves), the approximation of CVODES's simultaneous corrector
(Hindmarsh et al., "SUNDIALS", ACM TOMS 31(3), 2005, section 3.2): f_xx S, the coupling of S to x, is left out, so
Newton converges to the same solution (its error is nilpotent in the block-triangular part) without second
derivatives.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from robodyn.codegen.text import python_identifier

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["EXACT_LINES", "TAPE_BUDGET", "block_jacobian", "composed_jacobian", "composed_rhs", "directional_outputs",
           "directional_rhs", "exact_jacobian", "prefixed", "sensitivity_sources"]

_INDENT: Final = "    "
EXACT_LINES: Final = 4000  # Lines of a generated rhs up to which its exact Jacobian is generated too.
#: A tape of N nodes (a chain's) is differentiated as straight-line code for k directions when N (k + 1) is at most
#: this, else its rhs, jac and jacp are called. Measured (dopri5, rtol 1e-8, warm): the 6-joint Puma (1,617 nodes)
#: with k = 1 cost 3.4 plain runs written out, 6.2 called; with k = 12, 11.7 written out, 6.8 called (the Jacobian by
#: the manipulator formula, then f_x S, beats forward mode through the articulated-body algorithm per direction).
TAPE_BUDGET: Final = 20_000

Direction = tuple[str, int]  # ("parameter", index in p) or ("state", index in x)


def sensitivity_sources(model: ModelContract, directions: Sequence[Direction], feedback: bool
                        ) -> dict[str, str | None]:
    """``rhs``, ``jac`` and ``out_fn`` of the sensitivity model of ``model`` (each None when it cannot be made: the
    model has no such source, or it is neither straight-line code nor composable), by forward mode on straight-line
    code, else by composed calls (module docstring)."""
    from robodyn.codegen.forward import NotStraightLine
    from robodyn.codegen.straight_line import straight_line_body

    n, n_p, m, k = model.n_states, len(model.parameters), model.n_inputs, len(directions)
    found: dict[str, str | None] = {"rhs": None, "jac": None, "out_fn": None, "exact": None}
    rhs = model.kernel_rhs_source()
    if rhs is None:
        return found
    body = straight_line_body(rhs, "rhs", TAPE_BUDGET // (k + 1))
    try:
        if body is not None:
            generated = found["rhs"] = directional_rhs(body, n, n_p, m, directions, feedback)
            found["jac"] = exact_jacobian(generated, n * (k + 1), m)
            if found["jac"] is None:
                found["jac"] = block_jacobian(body, n, n_p, m, k, feedback)
            else:
                found["exact"] = "yes"
    except NotStraightLine:
        found["rhs"] = None
    if found["rhs"] is None:
        jac = model.kernel_jacobian_source()
        needs = any(kind == "parameter" for kind, _ in directions)
        jacp = model.kernel_parameter_jacobian_source() if needs else None
        if jac is not None and (jacp is not None or not needs):
            found["rhs"] = composed_rhs(rhs, jac, jacp, n, n_p, m, directions, feedback)
            found["jac"] = composed_jacobian(jac, n, n_p, m, k, feedback)
    outputs = model.kernel_output_source()
    out_body = straight_line_body(outputs, "out_fn", TAPE_BUDGET // (k + 1)) if outputs and found["rhs"] else None
    if out_body is not None:
        try:
            found["out_fn"] = directional_outputs(out_body, n, model.n_outputs, n_p, m, directions, feedback)
        except NotStraightLine:
            pass
    return found


def _function(name: str, lines: Sequence[str], decorator: str = "jit") -> str:
    body = [f"{_INDENT}{line}" for line in lines] or [f"{_INDENT}pass"]
    return "\n".join([f"@{python_identifier(decorator)}", f"def {python_identifier(name)}(t, x, u, p, out):", *body,
                      f"{_INDENT}return", ""])


def _seeds(n: int, n_p: int, m: int, directions: Sequence[Direction], feedback: bool
           ) -> tuple[list[str], dict[tuple[str, int], dict[int, str]]]:
    """The lines naming the inputs' tangents (with feedback) and the seeds of x, u and p for the directions."""
    k = len(directions)
    seeds: dict[tuple[str, int], dict[int, str]] = {("x", i): {j: f"x[{n + j * n + i}]" for j in range(k)}
                                                    for i in range(n)}
    for j, (kind, index) in enumerate(directions):
        if kind == "parameter":
            seeds.setdefault(("p", index), {})[j] = "1.0"
    lines: list[str] = []
    if feedback:
        for r in range(m):
            for j in range(k):
                lines.append(f"_su{r}_{j} = " + " + ".join(f"p[{n_p + r * n + q}] * x[{n + j * n + q}]"
                                                             for q in range(n)))
            seeds[("u", r)] = {j: f"_su{r}_{j}" for j in range(k)}
    return lines, seeds


def _directional(name: str, body: Sequence[ast.stmt], n: int, size: int, n_p: int, m: int,
                 directions: Sequence[Direction], feedback: bool) -> str:
    """``name`` of [x, S]: the ``size`` values of the model's straight-line function ``body``, then the directional
    derivative of each along every S_j (+ the inputs' G S_j) and parameter, by forward mode."""
    from robodyn.codegen.forward import seeded_derivatives

    lines, seeds = _seeds(n, n_p, m, directions, feedback)
    found, values, rows = seeded_derivatives(body, size, seeds, prefix="s" if name == "rhs" else "o")
    lines += found
    lines += [f"out[{i}] = {values.get(i, '0.0')}" for i in range(size)]
    lines += [f"out[{size + j * size + i}] = {rows.get(i, {}).get(j, '0.0')}" for j in range(len(directions))
              for i in range(size)]
    return _function(name, lines)


def directional_rhs(body: Sequence[ast.stmt], n: int, n_p: int, m: int, directions: Sequence[Direction],
                    feedback: bool) -> str:
    """``rhs`` of [x, S]: f, then S_j' = f_x S_j (+ f_u G S_j) + df/dp_j, by forward mode on the model's straight-line
    ``rhs`` (``body``). Raises robodyn.codegen.forward.NotStraightLine when the body is not."""
    return _directional("rhs", body, n, n, n_p, m, directions, feedback)


def directional_outputs(body: Sequence[ast.stmt], n: int, n_out: int, n_p: int, m: int,
                        directions: Sequence[Direction], feedback: bool) -> str:
    """``out_fn`` of the sensitivity model: y, then dy/dtheta_j = h_x S_j (+ h_u G S_j) + dh/dp_j, by forward mode on
    the model's straight-line ``out_fn`` (``body``)."""
    return _directional("out_fn", body, n, n_out, n_p, m, directions, feedback)


def exact_jacobian(rhs: str, size: int, m: int) -> str | None:
    """``jac`` of [x, S] exactly (f_xx S included), by forward mode on the generated straight-line ``rhs`` itself: what
    a Rosenbrock method needs (its order rests on the exact Jacobian). None when that ``rhs`` has more than
    :data:`EXACT_LINES` lines (the code would grow with its size times the state's)."""
    from robodyn.codegen.forward import jacobian_lines
    from robodyn.codegen.straight_line import straight_line_body

    body = straight_line_body(rhs, "rhs")
    if body is None or len(body) > EXACT_LINES:
        return None
    return _function("jac", jacobian_lines(body, size, size, m, prefix="e"))


def block_jacobian(body: Sequence[ast.stmt], n: int, n_p: int, m: int, k: int, feedback: bool) -> str:
    """``jac`` of [x, S] (block-diagonal: see the module docstring), df/dx and df/du of the model by forward mode on
    its straight-line ``rhs``: the augmented A ``(N, N)`` then B ``(N, m)``, row-major, N = n (k + 1)."""
    from robodyn.codegen.forward import seeded_derivatives

    seeds = {("x", i): {i: "1.0"} for i in range(n)} | {("u", r): {n + r: "1.0"} for r in range(m)}
    lines, _, rows = seeded_derivatives(body, n, seeds, prefix="j")
    size = n * (k + 1)
    entries = ["0.0"] * (size * (size + m))
    for i in range(n):
        row = rows.get(i, {})
        for q in range(n):
            plain = row.get(q)
            entries[i * size + q] = plain or "0.0"
            terms = [plain] if plain else []
            if feedback:
                terms += [f"{row[n + r]} * p[{n_p + r * n + q}]" for r in range(m) if n + r in row]
            closed = " + ".join(terms) if terms else "0.0"
            for b in range(1, k + 1):
                entries[(b * n + i) * size + b * n + q] = closed
        for r in range(m):
            entries[size * size + i * m + r] = row.get(n + r, "0.0")
    return _function("jac", lines + [f"out[{e}] = {v}" for e, v in enumerate(entries)])


# --- composed calls -------------------------------------------------------------------------------------------
def prefixed(text: str, prefix: str) -> str | None:
    """``text`` (a generated fragment: functions, module-level values, ``from ... import ... as ...``) with its
    top-level names prefixed wherever they appear, or None when it holds anything else."""
    from robodyn.codegen.fragments import prefixed as renamed
    from robodyn.codegen.fragments import top_level_names

    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    names = top_level_names(tree)
    return None if names is None else renamed(tree, names, prefix)


def _total_jacobian(n: int, n_p: int, m: int, feedback: bool) -> list[str]:
    """Lines filling ``_T`` (n, n) with f_x (+ f_u G) from the model's ``jac`` written into ``_W``."""
    lines = [f"_T = np.empty(({n}, {n}))", f"for _i in range({n}):", f"{_INDENT}for _q in range({n}):",
             f"{_INDENT * 2}_v = _W[_i * {n} + _q]"]
    if feedback:
        lines += [f"{_INDENT * 2}for _r in range({m}):",
                  f"{_INDENT * 3}_v += _W[{n * n} + _i * {m} + _r] * p[{n_p} + _r * {n} + _q]"]
    return [*lines, f"{_INDENT * 2}_T[_i, _q] = _v"]


def _calls(n: int, n_p: int) -> tuple[str, str]:
    return f"x[0:{n}]", f"p[0:{n_p}]"


def composed_rhs(rhs: str, jac: str, jacp: str | None, n: int, n_p: int, m: int, directions: Sequence[Direction],
                 feedback: bool) -> str | None:
    """``rhs`` of [x, S] calling the model's ``rhs``, ``jac`` and ``jacp`` (None: no parameter direction needs it),
    each copied with its names prefixed; None when a source cannot be copied so."""
    parts = [prefixed(rhs, "_sr"), prefixed(jac, "_sj"), prefixed(jacp, "_sp") if jacp is not None else ""]
    if any(part is None for part in parts):
        return None
    x, p = _calls(n, n_p)
    lines = [f"_srrhs(t, {x}, u, {p}, out[0:{n}])", f"_W = np.empty({n * (n + m)})", f"_sjjac(t, {x}, u, {p}, _W)",
             *_total_jacobian(n, n_p, m, feedback)]
    if jacp is not None:
        lines += [f"_P = np.empty({max(n * n_p, 1)})", f"_spjacp(t, {x}, u, {p}, _P)"]
    for j, (kind, index) in enumerate(directions):
        start = f"_P[_i * {n_p} + {index}]" if kind == "parameter" else "0.0"
        lines += [f"for _i in range({n}):", f"{_INDENT}_v = {start}", f"{_INDENT}for _q in range({n}):",
                  f"{_INDENT * 2}_v += _T[_i, _q] * x[{n + j * n} + _q]", f"{_INDENT}out[{n + j * n} + _i] = _v"]
    return "\n\n".join([*(part for part in parts if part), _function("rhs", lines)])


def composed_jacobian(jac: str, n: int, n_p: int, m: int, k: int, feedback: bool) -> str | None:
    """``jac`` of [x, S] (block-diagonal) calling the model's ``jac``; None when it cannot be copied."""
    part = prefixed(jac, "_sj")
    if part is None:
        return None
    x, p = _calls(n, n_p)
    size = n * (k + 1)
    lines = [f"_W = np.empty({n * (n + m)})", f"_sjjac(t, {x}, u, {p}, _W)", *_total_jacobian(n, n_p, m, feedback),
             f"for _e in range({size * (size + m)}):", f"{_INDENT}out[_e] = 0.0",
             f"for _i in range({n}):", f"{_INDENT}for _q in range({n}):",
             f"{_INDENT * 2}out[_i * {size} + _q] = _W[_i * {n} + _q]",
             f"{_INDENT * 2}for _b in range(1, {k + 1}):",
             f"{_INDENT * 3}out[(_b * {n} + _i) * {size} + _b * {n} + _q] = _T[_i, _q]",
             f"{_INDENT}for _r in range({m}):",
             f"{_INDENT * 2}out[{size * size} + _i * {m} + _r] = _W[{n * n} + _i * {m} + _r]"]
    return "\n\n".join([part, _function("jac", lines)])
