"""sympy expressions -> straight-line Python source for numba (``rhs``, ``event_fn``).

Every model symbol is renamed to an index-based local (``_x0``, ``_u1``, ``_p2``) before printing, so
no user name can clash with Python names in the generated code, and common subexpressions are
eliminated (``sympy.cse``) into ``_c0, _c1, ...``. Floats print exactly (:mod:`robodyn.codegen.printer`).

The functions take a *symbol table* — an object with ``t_symbol``, ``x_symbols``, ``u_symbols`` and ``p_symbols``
(a symbolic model is its own) — and the expressions to print; they know nothing of model kinds.

Second-order models M(q) q'' = r are solved inside ``rhs``: for up to :data:`UNROLL_LIMIT`
coordinates by an unrolled Cholesky factorization on scalars (no allocation), above that by
:func:`robodyn.codegen.linalg.cholesky_solve_lower` on a work array. A mass matrix that is not
positive definite produces NaN, which the kernels report as a non-finite derivative at that time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import sympy

from robodyn.codegen.printer import code_symbols, numeric_form, python_printer, shared_subexpressions
from robodyn.codegen.text import python_identifier

__all__ = ["UNROLL_LIMIT", "event_source", "explicit_jacobian_source", "explicit_parameter_source",
           "explicit_rhs_source", "manipulator_jacobian_source", "manipulator_parameter_source",
           "manipulator_rhs_source", "output_source"]

UNROLL_LIMIT: Final = 6  # Coordinates up to which the Cholesky solve is unrolled into scalar code.
_INDENT: Final = "    "


def _renaming(symbols: Any) -> dict[sympy.Symbol, sympy.Symbol]:
    return code_symbols((symbols.t_symbol, symbols.x_symbols, symbols.u_symbols, symbols.p_symbols,
                         getattr(symbols, "d_symbols", ())))


def _body(symbols: Any, targets: Sequence[str], exprs: Sequence[sympy.Expr]) -> list[str]:
    """Unpacking of the used symbols, the cse intermediates and ``target = expr`` lines."""
    renaming = _renaming(symbols)
    renamed = [numeric_form(e if isinstance(e, sympy.Basic) else sympy.Float(float(e))).xreplace(renaming)
               for e in exprs]
    intermediates, reduced = shared_subexpressions(renamed)
    used = set().union(*(e.free_symbols for e in renamed)) if renamed else set()
    printer = python_printer()
    lines = []
    for prefix, source in (("_x", "x"), ("_u", "u"), ("_p", "p"), ("_d", "_d")):
        for symbol in sorted((s for s in used if s.name.startswith(prefix)), key=lambda s: int(s.name[2:])):
            lines.append(f"{symbol.name} = {source}[{symbol.name[2:]}]")
    lines += [f"{name} = {printer.doprint(value)}" for name, value in intermediates]
    lines += [f"{target} = {printer.doprint(value)}" for target, value in zip(targets, reduced)]
    return lines

def _function(name: str, lines: Sequence[str], decorator: str = "jit") -> str:
    body = [f"{_INDENT}{line}" for line in lines] or [f"{_INDENT}pass"]
    return "\n".join([f"@{python_identifier(decorator)}", f"def {python_identifier(name)}(t, x, u, p, out):", *body,
                      f"{_INDENT}return", ""])


def _unrolled_cholesky(n: int) -> list[str]:
    """Solve M a = r for symmetric positive definite M held in scalars _M{i}_{j} (i >= j), _r{i}."""
    if n == 1:  # a division (NaN unless M > 0, like the factorization would give)
        return ["_a0 = _r0 / _M0_0 if _M0_0 > 0.0 else math.nan"]
    lines = []
    for j in range(n):
        square = " - ".join([f"_M{j}_{j}", *(f"_L{j}_{k} * _L{j}_{k}" for k in range(j))])
        lines.append(f"_L{j}_{j} = math.sqrt({square}) if ({square}) > 0.0 else math.nan")
        for i in range(j + 1, n):
            rest = " - ".join([f"_M{i}_{j}", *(f"_L{i}_{k} * _L{j}_{k}" for k in range(j))])
            lines.append(f"_L{i}_{j} = ({rest}) / _L{j}_{j}")
    for i in range(n):  # forward substitution L z = r
        rest = " - ".join([f"_r{i}", *(f"_L{i}_{k} * _z{k}" for k in range(i))])
        lines.append(f"_z{i} = ({rest}) / _L{i}_{i}")
    for i in reversed(range(n)):  # back substitution L^T a = z
        rest = " - ".join([f"_z{i}", *(f"_L{k}_{i} * _a{k}" for k in range(i + 1, n))])
        lines.append(f"_a{i} = ({rest}) / _L{i}_{i}")
    return lines


def manipulator_rhs_source(symbols: Any, mass_lower: Sequence[Any], rhs: Sequence[Any]) -> str:
    """Source of ``rhs(t, x, u, p, out)`` for M(q) q'' = r, the state ``[q, q']``.

    ``mass_lower`` holds M's lower triangle row by row (M[0][0], M[1][0], M[1][1], ...), ``rhs`` the n
    entries of r; q'' comes from a Cholesky solve on scalars (or a work array above UNROLL_LIMIT).
    """
    n = len(rhs)
    exprs = [*mass_lower, *rhs]
    if n <= UNROLL_LIMIT:
        targets = [f"_M{i}_{j}" for i in range(n) for j in range(i + 1)] + [f"_r{i}" for i in range(n)]
        lines = _body(symbols, targets, exprs) + _unrolled_cholesky(n)
        lines += [f"out[{i}] = x[{n + i}]" for i in range(n)]
        return _function("rhs", lines + [f"out[{n + i}] = _a{i}" for i in range(n)])
    targets = [f"_M[{i}, {j}]" for i in range(n) for j in range(i + 1)] + [f"_r[{i}]" for i in range(n)]
    return _function("rhs", [
        f"_M = np.empty(({n}, {n}))",
        f"_r = np.empty({n})",
        *_body(symbols, targets, exprs),
        "cholesky_solve_lower(_M, _r)",
        f"for _i in range({n}):",
        f"{_INDENT}out[_i] = x[{n} + _i]",
        f"{_INDENT}out[{n} + _i] = _r[_i]",
    ])


def explicit_rhs_source(symbols: Any, f: Sequence[Any]) -> str:
    """Source of ``rhs(t, x, u, p, out)`` writing x'_i = f[i] into ``out``."""
    return _function("rhs", _body(symbols, [f"out[{i}]" for i in range(len(f))], list(f)))


def event_source(symbols: Any, events: Sequence[sympy.Expr], derived: str | None = None) -> str:
    """Source of ``event_fn(t, x, u, p, out)`` writing the event values g_k into ``out``.

    A table with ``d_symbols`` (values derived from t, x, u, p: a chain's contact gaps) names them in the events;
    ``derived`` is then the name of a function ``derived(t, x, u, p, x, _d)`` defined with the events that fills
    the array ``_d`` with their values, called first when an event uses them.
    """
    body = _body(symbols, [f"out[{k}]" for k in range(len(events))], list(events))
    count = len(getattr(symbols, "d_symbols", ()))
    if derived is not None and count and any(line.startswith("_d") and " = _d[" in line for line in body):
        body = [f"_d = np.empty({count})", f"{derived}(t, x, u, p, x, _d)", *body]
    # hjit: only the kernels call it (rhs keeps its Python wrapper: it is handy for checking generated code)
    return _function("event_fn", body, "hjit")



def output_source(symbols: Any, h: Sequence[Any]) -> str:
    """Source of ``out_fn(t, x, u, p, out)`` writing the outputs y_i = h[i] into ``out``."""
    return _function("out_fn", _body(symbols, [f"out[{i}]" for i in range(len(h))], list(h)))


def explicit_jacobian_source(symbols: Any, dfdx: Any, dfdu: Any) -> str:
    """Source of ``jac(t, x, u, p, out)`` writing df/dx then df/du, row-major, into ``out``."""
    entries = [*dfdx, *dfdu]
    return _function("jac", _body(symbols, [f"out[{k}]" for k in range(len(entries))], entries))


def manipulator_jacobian_source(symbols: Any, mass: Any, rhs: Any, derivative: Any, dmass: Sequence[Any]) -> str:
    """Source of ``jac(t, x, u, p, out)`` writing A then B, row-major, for M(q) q'' = r.

    ``mass`` M (n, n), ``rhs`` r (n,), ``derivative`` dr/d[x, u] (n, 2n + m) and ``dmass`` [dM/dq_k]
    (n of (n, n)) give the manipulator formula q'' = M^-1 r, da/dz = M^-1 (dr/dz - [dM/dq_k q'']_k): up to
    :data:`UNROLL_LIMIT` coordinates solved on scalars with M's unrolled Cholesky factor (straight-line code, which
    LLVM compiles without numba: robodyn.codegen.llvm.pyir), above it on work arrays by
    :func:`robodyn.codegen.linalg.manipulator_solve`.
    """
    n = len(rhs)
    k = len(derivative) // n
    if n <= UNROLL_LIMIT:
        return _unrolled_jacobian(symbols, mass, rhs, derivative, dmass)
    targets = ([f"_M[{i}, {j}]" for i in range(n) for j in range(n)] + [f"_r[{i}]" for i in range(n)]
               + [f"_G[{i}, {j}]" for i in range(n) for j in range(k)]
               + [f"_D[{c}, {i}, {j}]" for c in range(n) for i in range(n) for j in range(n)])
    exprs = [*mass, *rhs, *derivative, *(e for d in dmass for e in d)]
    lines = [f"_M = np.empty(({n}, {n}))", f"_r = np.empty({n})", f"_G = np.empty(({n}, {k}))",
             f"_D = np.empty(({n}, {n}, {n}))", *_body(symbols, targets, exprs),
             "manipulator_solve(_M, _r, _G, _D, out)"]
    return _function("jac", lines)


def _unrolled_jacobian(symbols: Any, mass: Any, rhs: Any, derivative: Any, dmass: Sequence[Any]) -> str:
    """:func:`manipulator_jacobian_source` on scalars: a = M^-1 r by the unrolled factor, then for each column z of
    [x, u] g = dr/dz - (dM/dz) a (the term only for the coordinates) and L L^T (da/dz) = g with the same factor."""
    n = len(rhs)
    k = len(derivative) // n
    m = k - 2 * n
    lower = [(i, j) for i in range(n) for j in range(i + 1)]
    targets = ([f"_M{i}_{j}" for i, j in lower] + [f"_r{i}" for i in range(n)]
               + [f"_G{i}_{c}" for i in range(n) for c in range(k)]
               + [f"_D{c}_{i}_{j}" for c in range(n) for i, j in lower])
    exprs = [*(mass[i * n + j] for i, j in lower), *rhs, *derivative,
             *(dmass[c][i * n + j] for c in range(n) for i, j in lower)]
    lines = _body(symbols, targets, exprs) + _unrolled_cholesky(n)
    lines += [f"out[{i * 2 * n + j}] = {1.0 if j == n + i else 0.0}" for i in range(n) for j in range(2 * n)]
    lines += [f"out[{4 * n * n + i * m + j}] = 0.0" for i in range(n) for j in range(m)]
    for c in range(k):
        for i in range(n):
            terms = [f"_G{i}_{c}", *(f"_D{c}_{max(i, j)}_{min(i, j)} * _a{j}" for j in range(n) if c < n)]
            lines.append(f"_g{i} = {' - '.join(terms)}")
        places = [(n + i) * 2 * n + c if c < 2 * n else 4 * n * n + (n + i) * m + c - 2 * n for i in range(n)]
        lines += _solved(n, places)
    return _function("jac", lines)


def _solved(n: int, places: Sequence[int]) -> list[str]:
    """Solve L L^T z = _g{i} with the unrolled factor of :func:`_unrolled_cholesky` (``_L{i}_{j}``; one coordinate:
    a division by ``_M0_0``) and write z_i into ``out[places[i]]``."""
    if n == 1:
        return [f"out[{places[0]}] = _g0 / _M0_0 if _M0_0 > 0.0 else math.nan"]
    lines = []
    for i in range(n):
        rest = " - ".join([f"_g{i}", *(f"_L{i}_{j} * _w{j}" for j in range(i))])
        lines.append(f"_w{i} = ({rest}) / _L{i}_{i}")
    for i in reversed(range(n)):
        rest = " - ".join([f"_w{i}", *(f"_L{j}_{i} * _z{j}" for j in range(i + 1, n))])
        lines.append(f"_z{i} = ({rest}) / _L{i}_{i}")
    return lines + [f"out[{place}] = _z{i}" for i, place in enumerate(places)]


def explicit_parameter_source(symbols: Any, dfdp: Sequence[Any]) -> str:
    """Source of ``jacp(t, x, u, p, out)`` writing df/dp ``(n, n_params)``, row-major, into ``out``."""
    return _function("jacp", _body(symbols, [f"out[{k}]" for k in range(len(dfdp))], list(dfdp)))


def manipulator_parameter_source(symbols: Any, mass_lower: Sequence[Any], rhs: Sequence[Any], drdp: Any,
                                 dmass_lower: Sequence[Sequence[Any]]) -> str:
    """Source of ``jacp(t, x, u, p, out)`` writing df/dp ``(2n, n_params)`` row-major for M(q) q'' = r, the state
    ``[q, q']``: zeros for q' = q_dot, then da/dp_c = M^-1 (dr/dp_c - dM/dp_c q'') (M never inverted symbolically).

    ``mass_lower`` holds M's lower triangle row by row, ``rhs`` r (n,), ``drdp`` dr/dp (n, n_params) row-major and
    ``dmass_lower`` the lower triangle of dM/dp_c for each parameter c. Up to :data:`UNROLL_LIMIT` coordinates the
    solves are unrolled on scalars (straight-line code), above it they run on work arrays.
    """
    n, k = len(rhs), len(dmass_lower)
    lower = [(i, j) for i in range(n) for j in range(i + 1)]
    zeros = [f"out[{i * k + c}] = 0.0" for i in range(n) for c in range(k)]
    if n <= UNROLL_LIMIT:
        targets = ([f"_M{i}_{j}" for i, j in lower] + [f"_r{i}" for i in range(n)]
                   + [f"_G{i}_{c}" for i in range(n) for c in range(k)]
                   + [f"_D{c}_{i}_{j}" for c in range(k) for i, j in lower])
        lines = _body(symbols, targets, [*mass_lower, *rhs, *drdp, *(e for d in dmass_lower for e in d)])
        lines += _unrolled_cholesky(n)
        for c in range(k):  # g = dr/dp_c - dM/dp_c a, then L L^T (da/dp_c) = g with M's factor
            for i in range(n):
                terms = " - ".join([f"_G{i}_{c}", *(f"_D{c}_{max(i, j)}_{min(i, j)} * _a{j}" for j in range(n))])
                lines.append(f"_g{i} = {terms}")
            lines += _factor_solve(n, c, k)
        return _function("jacp", lines + zeros)
    targets = ([f"_M[{i}, {j}]" for i, j in lower] + [f"_r[{i}]" for i in range(n)]
               + [f"_G[{i}, {c}]" for i in range(n) for c in range(k)]
               + [f"_D[{c}, {i}, {j}]" for c in range(k) for i, j in lower])
    return _function("jacp", [
        f"_M = np.empty(({n}, {n}))", f"_r = np.empty({n})", f"_G = np.empty(({n}, {max(k, 1)}))",
        f"_D = np.empty(({max(k, 1)}, {n}, {n}))",
        *_body(symbols, targets, [*mass_lower, *rhs, *drdp, *(e for d in dmass_lower for e in d)]),
        *zeros, "_F = _M.copy()", "cholesky_solve_lower(_F, _r)",
        f"for _c in range({k}):", f"{_INDENT}_g = np.empty({n})", f"{_INDENT}for _i in range({n}):",
        f"{_INDENT * 2}_v = _G[_i, _c]", f"{_INDENT * 2}for _j in range({n}):",
        f"{_INDENT * 3}_v -= _D[_c, max(_i, _j), min(_i, _j)] * _r[_j]", f"{_INDENT * 2}_g[_i] = _v",
        f"{_INDENT}_F = _M.copy()", f"{_INDENT}cholesky_solve_lower(_F, _g)", f"{_INDENT}for _i in range({n}):",
        f"{_INDENT * 2}out[({n} + _i) * {k} + _c] = _g[_i]",
    ])


def _factor_solve(n: int, c: int, k: int) -> list[str]:
    """Solve L L^T z = _g{i} with the unrolled factor of :func:`_unrolled_cholesky` and write z into column ``c`` of
    the acceleration rows of df/dp (``k`` columns)."""
    return _solved(n, [(n + i) * k + c for i in range(n)])
