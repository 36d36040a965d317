"""The sparse solve of a tree's factor on addresses, written in LLVM IR with vector types: linearize's lean path.

:func:`robodyn.codegen.linalg.tree_solve` (numba) computes ``sign`` M^-1 G from M's leaves-first Cholesky factor L
and writes the rows back in model order. numba vectorizes its row operations for 256-bit registers; a humanoid's
solve (38 rows, 108 columns, 331 entries of the factor) is bound by those operations' loads and stores. This
module writes the same solve as LLVM IR whose row operations are ``<8 x double>`` (one AVX-512 register where the
machine has them, two AVX ones otherwise), compiled once per machine and kept in the cache like the models'
functions (robodyn.codegen.llvm.native): no numba in the process. Every entry undergoes the same operations in the same
order as in tree_solve (a subtraction of a product per factor entry in the factor's order, then a product with the
pivot's reciprocal; the IR has no fast-math or contraction flags), so the results are tree_solve's bit for bit;
only the returned sum (a finite check) is added in another order.

    double tree_solve_ir(double *parts, int64 *plan, double *out)

with the plan of :func:`tree_solve_plan` (sign -1): L (n, n) then G (n, k) at the start of
``parts`` (G overwritten), -M^-1 G's first s columns into the (n, s) rows at ``left_at`` of ``out``, the others into
the (n, k - s) rows at ``right_at``, the nb x nb block at ``block_at`` of ``parts`` into the first nb columns of
``out``'s first nb rows of the target's length. Returns the sum of what it wrote.
"""

from __future__ import annotations

import functools
from typing import Any, Final

import numpy as np

from robodyn.base.digest import sha256

__all__ = ["LANES", "PLAN_HEADER", "tree_solve_ir", "tree_solve_plan"]

LANES: Final = 8  # doubles per vector operation
#: The header of a plan (int64), by slot: n, k, s (left's columns), the size of ``parts``, where left and right
#: start in ``out`` (their rows are s and k - s long, one after the other), the size of ``out``, where the block
#: starts in ``parts``, its size nb (nb x nb), the row length of the target's block in ``out`` (it starts at
#: ``out``'s start) and the factor pattern's entries; then the pattern: starts (n + 1), columns, order (n); then
#: the pattern by columns: starts (n + 1) and, per column j, the rows i > j that list it, from the last.
PLAN_HEADER: Final = 11


def tree_solve_plan(sizes: tuple[int, int, int], parts_size: int, out: tuple[int, int, int],
                    block: tuple[int, int, int], pattern: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """The int64 plan of :func:`tree_solve_ir` (see :data:`PLAN_HEADER`): ``sizes`` (n, k, s), ``out`` (where left
    and right start, the size of ``out``), ``block`` (its start in ``parts``, nb, the target's row length) and
    ``pattern`` (starts, columns, order) as robodyn.codegen.linalg.tree_solve takes them."""
    starts, columns, order = (np.asarray(a, dtype=np.int64) for a in pattern)
    n = sizes[0]
    above: list[list[int]] = [[] for _ in range(n)]  # per column j, the rows i > j that list it
    for i in range(n):
        for j in columns[starts[i]: starts[i + 1]]:
            above[int(j)].append(i)
    rows = [sorted(found, reverse=True) for found in above]  # the order the pushes into row j came in
    transposed = np.cumsum([0, *map(len, rows)])
    header = [*sizes, parts_size, out[0], out[1], out[2], *block, columns.size]
    return np.concatenate([np.array(header, dtype=np.int64), starts, columns, order, transposed,
                           np.array([i for found in rows for i in found], dtype=np.int64)]).astype(np.int64)

_V = f"<{LANES} x double>"
# 512-bit vectors are legal in these functions where the machine has them (LLVM's tuning for many x86 machines
# otherwise splits them into two 256-bit halves: the ones the vectorizers prefer)
_WIDE = f'"min-legal-vector-width"="{64 * LANES}"'


def _lanes(signature: str, setup: str, vector: str, scalar: str, count: str = "k",
           phis: tuple[str, str, str] = ("", "", ""), done: str = "  ret void") -> str:
    """An ``alwaysinline`` function of one loop over ``c < %count``: vectors of LANES (``vector`` on ``%c``), then
    one at a time (``scalar`` on ``%t``), every row operation of the solve in the same skeleton. ``setup`` opens the
    entry block; ``phis``: lines that open the vector loop, the tail's entry and the tail loop (a running sum);
    ``done``: the last block's lines."""
    rounded = f"%{count[0]}v"
    vec_phi, tail0_phi, tail_phi = (f"\n{text}" if text else "" for text in phis)
    return f"""define internal {signature} alwaysinline nounwind {_WIDE} {{
entry:
{setup}
  {rounded} = and i64 %{count}, -{LANES}
  %any = icmp sgt i64 {rounded}, 0
  br i1 %any, label %vec, label %tail0
vec:
  %c = phi i64 [0, %entry], [%c2, %vec]{vec_phi}
{vector}
  %c2 = add i64 %c, {LANES}
  %more = icmp slt i64 %c2, {rounded}
  br i1 %more, label %vec, label %tail0
tail0:
  %start = phi i64 [0, %entry], [{rounded}, %vec]{tail0_phi}
  %some = icmp slt i64 %start, %{count}
  br i1 %some, label %tail, label %done
tail:
  %t = phi i64 [%start, %tail0], [%t2, %tail]{tail_phi}
{scalar}
  %t2 = add i64 %t, 1
  %again = icmp slt i64 %t2, %{count}
  br i1 %again, label %tail, label %done
done:
{done}
}}
"""


# y[c] = y[c] - w * x[c] for c < k (vectors of LANES, then one at a time); y and x are distinct rows
_AXPY = _lanes(
    "void @axpy(ptr %y, ptr %x, double %w, i64 %k)", f"""  %wi = insertelement {_V} poison, double %w, i64 0
  %wv = shufflevector {_V} %wi, {_V} poison, <{LANES} x i32> zeroinitializer""",
    f"""  %py = getelementptr inbounds double, ptr %y, i64 %c
  %px = getelementptr inbounds double, ptr %x, i64 %c
  %vy = load {_V}, ptr %py, align 8
  %vx = load {_V}, ptr %px, align 8
  %m = fmul {_V} %wv, %vx
  %r = fsub {_V} %vy, %m
  store {_V} %r, ptr %py, align 8""",
    """  %qy = getelementptr inbounds double, ptr %y, i64 %t
  %qx = getelementptr inbounds double, ptr %x, i64 %t
  %sy = load double, ptr %qy, align 8
  %sx = load double, ptr %qx, align 8
  %sm = fmul double %w, %sx
  %sr = fsub double %sy, %sm
  store double %sr, ptr %qy, align 8""")

# y[c] = (((y[c] - w0 x0[c]) - w1 x1[c]) - w2 x2[c]) - w3 x3[c] for c < k: four of axpy's subtractions in their
# order, y loaded and stored once
_AXPY4 = _lanes(
    """void @axpy4(ptr %y, ptr %x0, ptr %x1, ptr %x2, ptr %x3, double %w0, double %w1, double %w2,
                                   double %w3, i64 %k)""",
    "\n".join(f"  %wi{q} = insertelement {_V} poison, double %w{q}, i64 0\n"
              f"  %wv{q} = shufflevector {_V} %wi{q}, {_V} poison, <{LANES} x i32> zeroinitializer"
              for q in range(4)),
    "\n".join([f"  %py = getelementptr inbounds double, ptr %y, i64 %c\n  %vy = load {_V}, ptr %py, align 8",
               *(f"  %px{q} = getelementptr inbounds double, ptr %x{q}, i64 %c\n"
                 f"  %vx{q} = load {_V}, ptr %px{q}, align 8\n  %m{q} = fmul {_V} %wv{q}, %vx{q}\n"
                 f"  %r{q} = fsub {_V} {'%vy' if q == 0 else f'%r{q - 1}'}, %m{q}" for q in range(4)),
               f"  store {_V} %r3, ptr %py, align 8"]),
    "\n".join(["  %qy = getelementptr inbounds double, ptr %y, i64 %t\n  %sy = load double, ptr %qy, align 8",
               *(f"  %qx{q} = getelementptr inbounds double, ptr %x{q}, i64 %t\n"
                 f"  %sx{q} = load double, ptr %qx{q}, align 8\n  %sm{q} = fmul double %w{q}, %sx{q}\n"
                 f"  %s{q} = fsub double {'%sy' if q == 0 else f'%s{q - 1}'}, %sm{q}" for q in range(4)),
               "  store double %s3, ptr %qy, align 8"]))

# row y of G: y <- (y - sum over e in [lo, hi) of w_e G[rows[e]]) / L[y, y], the subtractions in e's order, four
# at a time; w_e = L[y, rows[e]], or L[rows[e], y] (transposed: the backward pass)
_ELIMINATE = """define internal void @eliminate(ptr %G, ptr %L, i64 %y, ptr %rows, i64 %lo, i64 %hi, i64 %n, i64 %k,
                                      i1 %transposed) alwaysinline nounwind {wide} {{
entry:
  %gy = call ptr @row(ptr %G, i64 %y, i64 %k)
  br label %quads
quads:
  %e = phi i64 [%lo, %entry], [%e4, %quad]
  %e3 = add i64 %e, 3
  %fits = icmp slt i64 %e3, %hi
  br i1 %fits, label %quad, label %ones
quad:
{quad}
  call void @axpy4(ptr %gy, ptr %x0, ptr %x1, ptr %x2, ptr %x3, double %w0, double %w1, double %w2, double %w3,
                   i64 %k)
  %e4 = add i64 %e, 4
  br label %quads
ones:
  %more = icmp slt i64 %e, %hi
  br i1 %more, label %one, label %scale
one:
  %f = phi i64 [%e, %ones], [%f2, %one]
  %pj = getelementptr inbounds i64, ptr %rows, i64 %f
  %j = load i64, ptr %pj, align 8
  %w = call double @weight(ptr %L, i64 %y, i64 %j, i64 %n, i1 %transposed)
  %gj = call ptr @row(ptr %G, i64 %j, i64 %k)
  call void @axpy(ptr %gy, ptr %gj, double %w, i64 %k)
  %f2 = add i64 %f, 1
  %again = icmp slt i64 %f2, %hi
  br i1 %again, label %one, label %scale
scale:
  %lyy = call double @at(ptr %L, i64 %y, i64 %y, i64 %n)
  %d = fdiv double 1.0, %lyy
  call void @scale(ptr %gy, double %d, i64 %k)
  ret void
}}

define internal double @weight(ptr %L, i64 %y, i64 %j, i64 %n, i1 %transposed) alwaysinline nounwind {{
  %r = select i1 %transposed, i64 %j, i64 %y
  %c = select i1 %transposed, i64 %y, i64 %j
  %w = call double @at(ptr %L, i64 %r, i64 %c, i64 %n)
  ret double %w
}}
""".format(wide=_WIDE, quad="\n".join(
    f"  %o{q} = add i64 %e, {q}\n  %pj{q} = getelementptr inbounds i64, ptr %rows, i64 %o{q}\n"
    f"  %j{q} = load i64, ptr %pj{q}, align 8\n"
    f"  %w{q} = call double @weight(ptr %L, i64 %y, i64 %j{q}, i64 %n, i1 %transposed)\n"
    f"  %x{q} = call ptr @row(ptr %G, i64 %j{q}, i64 %k)" for q in range(4)))

# y[c] = y[c] * d for c < k
_SCALE = _lanes(
    "void @scale(ptr %y, double %d, i64 %k)", f"""  %di = insertelement {_V} poison, double %d, i64 0
  %dv = shufflevector {_V} %di, {_V} poison, <{LANES} x i32> zeroinitializer""",
    f"""  %py = getelementptr inbounds double, ptr %y, i64 %c
  %vy = load {_V}, ptr %py, align 8
  %r = fmul {_V} %vy, %dv
  store {_V} %r, ptr %py, align 8""",
    """  %qy = getelementptr inbounds double, ptr %y, i64 %t
  %sy = load double, ptr %qy, align 8
  %sr = fmul double %sy, %d
  store double %sr, ptr %qy, align 8""")

# out[c] = -g[c] for c < count (vectors of LANES, then one at a time); returns their sum (in LANES running sums)
_NEGATE = _lanes(
    "double @negate(ptr %out, ptr %g, i64 %count)", f"""  %minus = insertelement {_V} poison, double -1.0, i64 0
  %mv = shufflevector {_V} %minus, {_V} poison, <{LANES} x i32> zeroinitializer""",
    f"""  %pg = getelementptr inbounds double, ptr %g, i64 %c
  %po = getelementptr inbounds double, ptr %out, i64 %c
  %v = load {_V}, ptr %pg, align 8
  %r = fmul {_V} %mv, %v
  store {_V} %r, ptr %po, align 8
  %acc2 = fadd {_V} %acc, %r""",
    """  %qg = getelementptr inbounds double, ptr %g, i64 %t
  %qo = getelementptr inbounds double, ptr %out, i64 %t
  %sv = load double, ptr %qg, align 8
  %sr = fmul double -1.0, %sv
  store double %sr, ptr %qo, align 8
  %sacc2 = fadd double %sacc, %sr""", count="count",
    phis=(f"  %acc = phi {_V} [zeroinitializer, %entry], [%acc2, %vec]",
          f"  %lanes = phi {_V} [zeroinitializer, %entry], [%acc2, %vec]\n"
          f"  %sum0 = call double @llvm.vector.reduce.fadd.v{LANES}f64(double 0.0, {_V} %lanes)",
          "  %sacc = phi double [%sum0, %tail0], [%sacc2, %tail]"),
    done="  %total = phi double [%sum0, %tail0], [%sacc2, %tail]\n  ret double %total") + f"""
declare double @llvm.vector.reduce.fadd.v{LANES}f64(double, {_V})
"""

_MAIN = """define double @{symbol}(ptr %parts, ptr %plan, ptr %out) nounwind {wide} {{
entry:
  %n = load i64, ptr %plan, align 8
{header}
  %starts = getelementptr inbounds i64, ptr %plan, i64 {plan_header}
  %n1 = add i64 %n, 1
  %columns = getelementptr inbounds i64, ptr %starts, i64 %n1
  %order = getelementptr inbounds i64, ptr %columns, i64 %nnz
  %nn = mul i64 %n, %n
  %G = getelementptr inbounds double, ptr %parts, i64 %nn
  %rest = sub i64 %k, %s
  %tstarts = getelementptr inbounds i64, ptr %order, i64 %n
  %trows = getelementptr inbounds i64, ptr %tstarts, i64 %n1
  %pos = icmp sgt i64 %n, 0
  br i1 %pos, label %fi, label %blocks
fi:                                                 ; L Z = G, row by row: row i gathers the rows it lists
  %i = phi i64 [0, %entry], [%i2, %fi]
  %pe0 = getelementptr inbounds i64, ptr %starts, i64 %i
  %e0 = load i64, ptr %pe0, align 8
  %i1 = add i64 %i, 1
  %pe1 = getelementptr inbounds i64, ptr %starts, i64 %i1
  %e1 = load i64, ptr %pe1, align 8
  call void @eliminate(ptr %G, ptr %parts, i64 %i, ptr %columns, i64 %e0, i64 %e1, i64 %n, i64 %k, i1 false)
  %i2 = add i64 %i, 1
  %fi_more = icmp slt i64 %i2, %n
  br i1 %fi_more, label %fi, label %bi0
bi0:
  %last = sub i64 %n, 1
  br label %bi
bi:                                                 ; L^T X = Z: row j gathers the rows below it, from the last
  %b = phi i64 [%last, %bi0], [%b2, %bi]
  %pb0 = getelementptr inbounds i64, ptr %tstarts, i64 %b
  %b0 = load i64, ptr %pb0, align 8
  %bp1 = add i64 %b, 1
  %pb1 = getelementptr inbounds i64, ptr %tstarts, i64 %bp1
  %b1 = load i64, ptr %pb1, align 8
  call void @eliminate(ptr %G, ptr %parts, i64 %b, ptr %trows, i64 %b0, i64 %b1, i64 %n, i64 %k, i1 true)
  %b2 = sub i64 %b, 1
  %bi_more = icmp sge i64 %b2, 0
  br i1 %bi_more, label %bi, label %wi
wi:                                                 ; -G's rows back in model order, into left and right
  %r = phi i64 [0, %bi], [%r2, %wi]
  %tot = phi double [0.0, %bi], [%tot2, %wi]
  %grow = call ptr @row(ptr %G, i64 %r, i64 %k)
  %po = getelementptr inbounds i64, ptr %order, i64 %r
  %o = load i64, ptr %po, align 8
  %lo = mul i64 %o, %s
  %lo2 = add i64 %lo, %left_at
  %pleft = getelementptr inbounds double, ptr %out, i64 %lo2
  %sl = call double @negate(ptr %pleft, ptr %grow, i64 %s)
  %ro = mul i64 %o, %rest
  %ro2 = add i64 %ro, %right_at
  %pright = getelementptr inbounds double, ptr %out, i64 %ro2
  %gright = getelementptr inbounds double, ptr %grow, i64 %s
  %sr = call double @negate(ptr %pright, ptr %gright, i64 %rest)
  %t1 = fadd double %tot, %sl
  %tot2 = fadd double %t1, %sr
  %r2 = add i64 %r, 1
  %w_more = icmp slt i64 %r2, %n
  br i1 %w_more, label %wi, label %blocks
blocks:                                             ; the block into the target's corner
  %sum = phi double [0.0, %entry], [%tot2, %wi]
  %pblock = getelementptr inbounds double, ptr %parts, i64 %block_at
  %total = call double @corner(ptr %out, ptr %pblock, i64 %nb, i64 %stride, double %sum)
  ret double %total
}}
"""

_HELPERS = """define internal ptr @row(ptr %base, i64 %i, i64 %k) alwaysinline nounwind {
  %o = mul i64 %i, %k
  %p = getelementptr inbounds double, ptr %base, i64 %o
  ret ptr %p
}

define internal double @at(ptr %base, i64 %i, i64 %j, i64 %n) alwaysinline nounwind {
  %o = mul i64 %i, %n
  %o2 = add i64 %o, %j
  %p = getelementptr inbounds double, ptr %base, i64 %o2
  %v = load double, ptr %p, align 8
  ret double %v
}

define internal double @corner(ptr %out, ptr %block, i64 %nb, i64 %stride, double %sum) alwaysinline nounwind {
entry:
  %any = icmp sgt i64 %nb, 0
  br i1 %any, label %rows, label %done
rows:
  %r = phi i64 [0, %entry], [%r2, %rows_end]
  %acc = phi double [%sum, %entry], [%acc3, %rows_end]
  br label %cols
cols:
  %c = phi i64 [0, %rows], [%c2, %cols]
  %acc2 = phi double [%acc, %rows], [%acc3, %cols]
  %bo = mul i64 %r, %nb
  %bo2 = add i64 %bo, %c
  %pb = getelementptr inbounds double, ptr %block, i64 %bo2
  %v = load double, ptr %pb, align 8
  %oo = mul i64 %r, %stride
  %oo2 = add i64 %oo, %c
  %po = getelementptr inbounds double, ptr %out, i64 %oo2
  store double %v, ptr %po, align 8
  %acc3 = fadd double %acc2, %v
  %c2 = add i64 %c, 1
  %c_more = icmp slt i64 %c2, %nb
  br i1 %c_more, label %cols, label %rows_end
rows_end:
  %r2 = add i64 %r, 1
  %r_more = icmp slt i64 %r2, %nb
  br i1 %r_more, label %rows, label %done
done:
  %total = phi double [%sum, %entry], [%acc3, %rows_end]
  ret double %total
}
"""

_HEADER = [("k", 1), ("s", 2), ("left_at", 4), ("right_at", 5), ("block_at", 7), ("nb", 8), ("stride", 9),
           ("nnz", 10)]


@functools.cache
def tree_solve_ir() -> Any:
    """The compiled solve (ctypes: ``(parts, plan, out) -> float``, addresses), once per process; see the module
    docstring."""
    import ctypes

    from robodyn.codegen.llvm.native import native_kernel

    header = "\n".join(f"  %g_{name} = getelementptr inbounds i64, ptr %plan, i64 {slot}\n"
                       f"  %{name} = load i64, ptr %g_{name}, align 8" for name, slot in _HEADER)
    body = "\n".join([_HELPERS, _AXPY, _AXPY4, _ELIMINATE, _SCALE, _NEGATE,
                      _MAIN.format(symbol="{symbol}", header=header, plan_header=PLAN_HEADER, wide=_WIDE)])
    symbol = f"robodyn_tape_tree_solve_{sha256(body.encode()).hexdigest()[:16]}"
    signature = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    function, _ = native_kernel(body.replace("{symbol}", symbol), symbol, signature)
    return function
