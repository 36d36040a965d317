"""LLVM IR of a fused batch kernel: one explicit Runge–Kutta pair with one model's right-hand side compiled in.

The shared adaptive kernel (``kernel_template.py``) serves every model: it reaches the model's ``rhs`` through an
address, keeps the stages in arrays, and loops over the tableau's entries at run time. For a batch that is what
stands between it and a kernel written by hand for one model (benchmarks/prange_dopri5.py): each stage goes
through memory and an opaque call. :func:`fused_ir` writes, for one model and one FSAL embedded pair with the
polynomial dense output of DOPRI5, the kernel that does the same arithmetic with everything known: the model's
straight-line IR (:func:`robodyn.codegen.llvm.pyir.function_ir`) inlined, the state and stages of the model's size
unrolled, the tableau's nonzero weights as constants. LLVM's optimizer then keeps the stages in registers.

It covers the common batch — no events, inputs constant over the run (``u`` is given), no stop points inside
(t0, t1), outputs at ``t_eval`` — and does, operation for operation and in the same order, what
``_adaptive_core`` does in that case (scipy's controller, Hairer's first step, the same zero weights skipped, the
same NaN-aware ``min``/``max`` as numba's), so its trajectories, step counts and failures are the shared kernel's
bit for bit (tests/integrate/kernels/test_fused.py compares them). The controller is written twice, here and in
numba (``kernel_template.py``), both from the constants of :mod:`robodyn.integrate.methods.controller` (read when
the IR is written), because this form pays (~1.6x on a batch, benchmarks/RESULTS.md): a change to the formula in one
is a change to both (tests/integrate/kernels/test_controller_forms.py checks they agree).
Everything is written with ``alloca`` s and plain loads and stores; ``mem2reg``/SROA turn them into registers.

Signature of the function (``symbol``; all arrays C-contiguous)::

    i64 kernel(i64 first, i64 stop, f64* x0s (N, n), f64* ps (N, n_p), f64* u (m,), f64* t_eval (T,), i64 T,
               f64* atol (n,), f64 rtol, f64 t0, f64 t1, f64 h0, f64 h_max, i64 max_steps,
               f64* out_xs (N, T, n), i64* counts (N, 7), i64* statuses (N,), f64* t_fails (N,), i64* i_fails (N,))

for the runs ``first <= i < stop``; ``counts[i]`` as the shared kernel's (outputs, events, nfev, accepted,
rejected, 0, 0). The inputs at the outputs are not written: with inputs held constant they are the same for every
trajectory (the caller fills them).
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Sequence
from typing import Final

import numpy as np

from robodyn.integrate.methods import controller
from robodyn.integrate.status import MAX_STEPS, NON_FINITE, OK, STEP_COLLAPSE

__all__ = ["N_COUNTS", "fused_ir"]

N_COUNTS: Final = 7  # counts per run, as the shared kernel's (kernel_template.py)
_INTRINSICS: Final = ("declare double @llvm.sqrt.f64(double)", "declare double @llvm.pow.f64(double, double)",
                      "declare double @llvm.fabs.f64(double)")


def _c(value: float) -> str:
    """An IR double constant, exact."""
    return "0x" + struct.pack(">d", float(value)).hex().upper()


class _Builder:
    """IR text with numbered values, labelled blocks and named ``alloca`` variables."""

    def __init__(self) -> None:
        self.allocas: list[str] = []
        self.body: list[str] = []
        self.count = 0

    def value(self, text: str) -> str:
        self.count += 1
        name = f"%v{self.count}"
        self.body.append(f"  {name} = {text}")
        return name

    def label(self) -> str:
        self.count += 1
        return f"b{self.count}"

    def block(self, label: str) -> None:
        self.body.append(f"{label}:")

    def br(self, label: str) -> None:
        self.body.append(f"  br label %{label}")

    def cbr(self, condition: str, yes: str, no: str) -> None:
        self.body.append(f"  br i1 {condition}, label %{yes}, label %{no}")

    def var(self, name: str, kind: str = "double", size: int = 1) -> str:
        self.allocas.append(f"  %{name} = alloca {kind}, i64 {max(size, 1)}, align 8")
        return f"%{name}"

    def at(self, pointer: str, index: int | str, kind: str = "double") -> str:
        return self.value(f"getelementptr inbounds {kind}, ptr {pointer}, i64 {index}")

    def load(self, pointer: str, index: int | str | None = None, kind: str = "double") -> str:
        address = pointer if index is None else self.at(pointer, index, kind)
        return self.value(f"load {kind}, ptr {address}, align 8")

    def store(self, value: str, pointer: str, index: int | str | None = None, kind: str = "double") -> None:
        address = pointer if index is None else self.at(pointer, index, kind)
        self.body.append(f"  store {kind} {value}, ptr {address}, align 8")

    def op(self, operation: str, a: str, b: str, kind: str = "double") -> str:
        return self.value(f"{operation} {kind} {a}, {b}")

    def cmp(self, predicate: str, a: str, b: str) -> str:
        return self.value(f"fcmp {predicate} double {a}, {b}")

    def icmp(self, predicate: str, a: str, b: str) -> str:
        return self.value(f"icmp {predicate} i64 {a}, {b}")

    def select(self, condition: str, a: str, b: str, kind: str = "double") -> str:
        return self.value(f"select i1 {condition}, {kind} {a}, {kind} {b}")

    def call(self, function: str, *arguments: str) -> str:
        return self.value(f"call double @{function}({', '.join(f'double {a}' for a in arguments)})")

    # numba's builtins, as it lowers them
    def min(self, *values: str) -> str:  # Python's min: the later value where it is smaller
        result = values[0]
        for other in values[1:]:
            result = self.select(self.cmp("olt", other, result), other, result)
        return result

    def max(self, *values: str) -> str:
        result = values[0]
        for other in values[1:]:
            result = self.select(self.cmp("ogt", other, result), other, result)
        return result

    def finite(self, value: str) -> str:
        return self.cmp("one", self.call("llvm.fabs.f64", value), "0x7FF0000000000000")

    def add_i(self, pointer: str, amount: int) -> None:
        self.store(self.op("add", self.load(pointer, kind="i64"), str(amount), "i64"), pointer, kind="i64")


def _weighted(ir: _Builder, weights: np.ndarray, K: str, n: int, i: int) -> str:
    """acc = 0.0 + sum_j w_j K[j, i] over the nonzero weights, in order (the shared kernel skips zeros)."""
    acc = _c(0.0)
    for j, w in enumerate(weights):
        if w != 0.0:
            acc = ir.op("fadd", acc, ir.op("fmul", _c(w), ir.load(K, j * n + i)))
    return acc


def fused_ir(model_ir: str, model_symbol: str, n: int, m: int, n_p: int,
             method: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]) -> tuple[str, str]:
    """The module text and symbol of the fused batch kernel of the model function ``model_symbol`` (its LLVM IR
    ``model_ir``, ``void(double t, ptr x, ptr u, ptr p, ptr out)``) with ``method = (A, b, c, e, dense,
    error_order)`` of an FSAL pair with DOPRI5's dense output (``ButcherTableau.kernel_method()``, no DOP853 E3).

    n, m, n_p: the model's states, inputs and parameters (n >= 1). The symbol is named by the text's hash.
    """
    A, b, c, e, dense, error_order = method
    s, stages = b.size, c.size
    exponent = _c(controller.step_exponent(error_order))
    ir = _Builder()
    x, x_new, xw, xq = (ir.var(name, size=n) for name in ("x", "x_new", "xw", "xq"))
    K = ir.var("K", size=stages * n)
    R = ir.var("R", size=(2 + dense.shape[0]) * n)
    u = ir.var("uu", size=m)
    p = ir.var("pp", size=n_p)
    i_run, n_out, nfev, accepted, rejected_n = (ir.var(name, "i64") for name in
                                                 ("i_run", "n_out", "nfev", "accepted", "rejected_n"))
    status, i_fail, j_eval, i_bad, i_worst, rejected = (ir.var(name, "i64") for name in
                                                         ("status", "i_fail", "j_eval", "i_bad", "i_worst", "rej"))
    t, t_fail, h_abs, t_new_v, h_v = (ir.var(name) for name in ("t", "t_fail", "h_abs", "t_new", "h"))
    sqrt_n = _c(np.sqrt(float(n)))

    def rhs(time: str, state: str, out: str) -> None:
        ir.body.append(f"  call void @rk_model(double {time}, ptr {state}, ptr {u}, ptr {p}, ptr {out})")

    def row(pointer: str, r: int) -> str:
        return ir.at(pointer, r * n)

    def copy(source: str, target: str) -> None:
        for k in range(n):
            ir.store(ir.load(source, k), target, k)

    def first_nonfinite(vectors: Sequence[str], into: str) -> str:
        """Store the first index i where any of ``vectors`` is not finite (or -1) into ``into``; the flag."""
        index = "-1"
        for k in reversed(range(n)):
            good = "true"
            for vector in vectors:
                good = ir.value(f"and i1 {good}, {ir.finite(ir.load(vector, k))}")
            index = ir.select(good, index, str(k), "i64")
        ir.store(index, into, kind="i64")
        return ir.icmp("sge", index, "0")

    ir.store("%first", i_run, kind="i64")
    loop_run, body_run, done = ir.label(), ir.label(), ir.label()
    ir.br(loop_run)
    ir.block(loop_run)
    i = ir.load(i_run, kind="i64")
    ir.cbr(ir.icmp("slt", i, "%stop"), body_run, done)
    ir.block(body_run)
    x0 = ir.at("%x0s", ir.op("mul", i, str(n), "i64"))
    out_x = ir.at("%out_xs", ir.op("mul", i, ir.op("mul", "%T", str(n), "i64"), "i64"))
    p_row = ir.at("%ps", ir.op("mul", i, str(n_p), "i64"))
    for k in range(n_p):
        ir.store(ir.load(p_row, k), p, k)
    for k in range(m):
        ir.store(ir.load("%u", k), u, k)
    copy(x0, x)
    for k in range((2 + dense.shape[0]) * n):  # never read before written; defined all the same
        ir.store(_c(0.0), R, k)
    for counter in (n_out, nfev, accepted, rejected_n, j_eval):
        ir.store("0", counter, kind="i64")
    ir.store(str(OK), status, kind="i64")
    ir.store("-1", i_fail, kind="i64")
    ir.store(_c(float("nan")), t_fail)
    ir.store("%t0", t)

    def push(state: str) -> None:
        """Write ``state`` at row n_out if there is room, and count it (the shared kernel's _push_output)."""
        k = ir.load(n_out, kind="i64")
        room, write, after = ir.label(), ir.label(), ir.label()
        ir.br(room)
        ir.block(room)
        ir.cbr(ir.icmp("slt", k, "%T"), write, after)
        ir.block(write)
        base = ir.op("mul", k, str(n), "i64")
        for q in range(n):
            ir.store(ir.load(state, q), out_x, ir.op("add", base, str(q), "i64"))
        ir.br(after)
        ir.block(after)
        ir.store(ir.op("add", k, "1", "i64"), n_out, kind="i64")

    # outputs at t_eval <= t0: the initial state
    head, head_push, head_done = ir.label(), ir.label(), ir.label()
    ir.br(head)
    ir.block(head)
    j = ir.load(j_eval, kind="i64")
    in_range, check_time = ir.icmp("slt", j, "%T"), ir.label()
    ir.cbr(in_range, check_time, head_done)
    ir.block(check_time)
    ir.cbr(ir.cmp("ole", ir.load("%t_eval", j), "%t0"), head_push, head_done)
    ir.block(head_push)
    push(x)
    ir.store(ir.op("add", ir.load(j_eval, kind="i64"), "1", "i64"), j_eval, kind="i64")
    ir.br(head)
    ir.block(head_done)
    ir.store("%h0", h_abs)
    run_end, fresh_ok = ir.label(), ir.label()
    starts = ir.label()
    ir.cbr(ir.cmp("olt", "%t0", "%t1"), starts, run_end)

    # the segment's start: f(t0, x0), its check and Hairer's first step ([HNW] II.4)
    ir.block(starts)
    rhs("%t0", x, K)
    ir.add_i(nfev, 1)
    bad = ir.label()
    flag_x = first_nonfinite([x], i_fail)
    check_k = ir.label()
    ir.cbr(flag_x, bad, check_k)
    ir.block(check_k)
    ir.cbr(first_nonfinite([K], i_fail), bad, fresh_ok)
    ir.block(bad)
    ir.store(str(NON_FINITE), status, kind="i64")
    ir.store("%t0", t_fail)
    ir.br(run_end)
    ir.block(fresh_ok)
    ir.store("-1", i_fail, kind="i64")
    select_h, steps = ir.label(), ir.label()
    ir.cbr(ir.cmp("ole", "%h0", _c(0.0)), select_h, steps)
    ir.block(select_h)
    span = ir.op("fsub", "%t1", "%t0")
    ir.store(span, h_abs)
    probe, count_probe = ir.label(), ir.label()
    ir.cbr(ir.cmp("ogt", span, _c(0.0)), probe, count_probe)
    ir.block(probe)
    d0 = d1 = _c(0.0)
    scales = []
    for k in range(n):
        xk = ir.load(x, k)
        scale = ir.max(ir.op("fadd", ir.load("%atol", k), ir.op("fmul", ir.call("llvm.fabs.f64", xk), "%rtol")),
                       _c(controller.TINY_SCALE))
        scales.append(scale)
        q0 = ir.op("fdiv", xk, scale)
        d0 = ir.op("fadd", d0, ir.op("fmul", q0, q0))
        q1 = ir.op("fdiv", ir.load(K, k), scale)
        d1 = ir.op("fadd", d1, ir.op("fmul", q1, q1))
    d0 = ir.op("fdiv", ir.call("llvm.sqrt.f64", d0), sqrt_n)
    d1 = ir.op("fdiv", ir.call("llvm.sqrt.f64", d1), sqrt_n)
    tiny = ir.value(f"or i1 {ir.cmp('olt', d0, _c(1e-5))}, {ir.cmp('olt', d1, _c(1e-5))}")
    guess = ir.select(tiny, _c(1e-6), ir.op("fdiv", ir.op("fmul", _c(0.01), d0), d1))
    h_probe = ir.min(guess, span)
    for k in range(n):
        ir.store(ir.op("fadd", ir.load(x, k), ir.op("fmul", h_probe, ir.load(K, k))), xw, k)
    rhs(ir.op("fadd", "%t0", h_probe), xw, x_new)
    d2 = _c(0.0)
    for k in range(n):
        v = ir.op("fdiv", ir.op("fsub", ir.load(x_new, k), ir.load(K, k)), scales[k])
        d2 = ir.op("fadd", d2, ir.op("fmul", v, v))
    d2 = ir.op("fdiv", ir.op("fdiv", ir.call("llvm.sqrt.f64", d2), sqrt_n), h_probe)
    flat = ir.value(f"and i1 {ir.cmp('ole', d1, _c(1e-15))}, {ir.cmp('ole', d2, _c(1e-15))}")
    h1 = ir.select(flat, ir.max(_c(1e-6), ir.op("fmul", h_probe, _c(1e-3))),
                   ir.call("llvm.pow.f64", ir.op("fdiv", _c(0.01), ir.max(d1, d2)), _c(1.0 / (error_order + 1))))
    chosen = ir.min(ir.op("fmul", _c(100.0), h_probe), h1, span, "%h_max")
    ir.store(ir.select(ir.finite(d2), chosen, h_probe), h_abs)
    ir.br(count_probe)
    ir.block(count_probe)
    ir.add_i(nfev, 1)
    ir.br(steps)

    # the steps: while t < t1
    ir.block(steps)
    step_top, step_body = ir.label(), ir.label()
    ir.br(step_top)
    ir.block(step_top)
    ir.cbr(ir.cmp("olt", ir.load(t), "%t1"), step_body, run_end)
    ir.block(step_body)
    t_now = ir.load(t)
    min_step = ir.max(ir.op("fmul", _c(controller.MIN_STEP_REL), ir.call("llvm.fabs.f64", t_now)),
                      _c(controller.TINY_STEP))
    h_now = ir.load(h_abs)
    ir.store(ir.select(ir.cmp("ogt", h_now, "%h_max"), "%h_max", ir.max(h_now, min_step)), h_abs)
    ir.store("0", rejected, kind="i64")
    ir.store("-1", i_bad, kind="i64")
    ir.store("-1", i_worst, kind="i64")
    attempt, failed, accept = ir.label(), ir.label(), ir.label()
    ir.br(attempt)

    ir.block(attempt)  # one attempt: collapse and step-count checks, the stages, the error norm
    h_try = ir.load(h_abs)
    collapse, counted, budget = ir.label(), ir.label(), ir.label()
    ir.cbr(ir.cmp("olt", h_try, min_step), collapse, counted)
    ir.block(collapse)
    bad_index = ir.load(i_bad, kind="i64")
    has_bad = ir.icmp("sge", bad_index, "0")
    ir.store(ir.select(has_bad, str(NON_FINITE), str(STEP_COLLAPSE), "i64"), status, kind="i64")
    ir.store(ir.select(has_bad, bad_index, ir.load(i_worst, kind="i64"), "i64"), i_fail, kind="i64")
    ir.br(failed)
    ir.block(counted)
    tries = ir.op("add", ir.load(accepted, kind="i64"), ir.load(rejected_n, kind="i64"), "i64")
    stages_label = ir.label()
    ir.cbr(ir.icmp("sge", tries, "%max_steps"), budget, stages_label)
    ir.block(budget)
    ir.store(str(MAX_STEPS), status, kind="i64")
    ir.br(failed)
    ir.block(stages_label)
    t_new = ir.min(ir.op("fadd", t_now, h_try), "%t1")
    h = ir.op("fsub", t_new, t_now)
    ir.store(t_new, t_new_v)
    ir.store(h, h_v)
    for jj in range(1, s):
        for k in range(n):
            ir.store(ir.op("fadd", ir.load(x, k), ir.op("fmul", h, _weighted(ir, A[jj, :jj], K, n, k))), xw, k)
        tj = ir.op("fadd", t_now, ir.op("fmul", _c(c[jj]), h)) if jj < s - 1 else t_new
        rhs(tj, xw, row(K, jj))
    copy(xw, x_new)
    ir.add_i(nfev, s - 1)
    sq = worst = _c(0.0)
    worst_index = ir.load(i_worst, kind="i64")
    for k in range(n):
        xk, yk = ir.load(x, k), ir.load(x_new, k)
        scale = ir.max(ir.op("fadd", ir.load("%atol", k), ir.op("fmul", "%rtol", ir.max(ir.call("llvm.fabs.f64", xk),
                                                                                        ir.call("llvm.fabs.f64", yk)))),
                       _c(controller.TINY_SCALE))
        d = ir.op("fdiv", ir.op("fmul", _weighted(ir, e[:s], K, n, k), h), scale)
        sq = ir.op("fadd", sq, ir.op("fmul", d, d))
        size = ir.call("llvm.fabs.f64", d)
        larger = ir.cmp("ogt", size, worst)
        worst = ir.select(larger, size, worst)
        worst_index = ir.select(larger, str(k), worst_index, "i64")
    ir.store(worst_index, i_worst, kind="i64")
    err = ir.op("fdiv", ir.call("llvm.sqrt.f64", sq), sqrt_n)
    # The first component with a non-finite stage or new state (i_bad, as the shared kernel finds it), scanned only
    # when the cheap test fails: a non-finite stage of nonzero error weight makes err non-finite (the scale is
    # finite and positive when x_new is finite), so err, x_new and the stages of zero error weight decide it.
    ir.store("-1", i_bad, kind="i64")
    quick = ir.finite(err)
    for k in range(n):
        quick = ir.value(f"and i1 {quick}, {ir.finite(ir.load(x_new, k))}")
        for jj in range(s):
            if e[jj] == 0.0:
                quick = ir.value(f"and i1 {quick}, {ir.finite(ir.load(K, jj * n + k))}")
    scan, judged, small, large, large_bad, reject = (ir.label() for _ in range(6))
    factor = ir.var("factor")
    ir.cbr(quick, judged, scan)
    ir.block(scan)
    ir.cbr(first_nonfinite([row(K, jj) for jj in range(s)] + [x_new], i_bad), large_bad, judged)
    ir.block(judged)
    ir.cbr(ir.cmp("olt", err, _c(1.0)), small, large)
    ir.block(small)  # accepted
    power = ir.call("llvm.pow.f64", err, exponent)
    grow = ir.select(ir.cmp("oeq", err, _c(0.0)), _c(controller.MAX_FACTOR),
                     ir.min(_c(controller.MAX_FACTOR), ir.op("fmul", _c(controller.SAFETY), power)))
    was_rejected = ir.icmp("ne", ir.load(rejected, kind="i64"), "0")
    ir.store(ir.op("fmul", h, ir.select(was_rejected, ir.min(_c(1.0), grow), grow)), h_abs)
    ir.add_i(accepted, 1)
    ir.br(accept)
    ir.block(large)  # rejected
    shrink = ir.op("fmul", _c(controller.SAFETY), ir.call("llvm.pow.f64", err, exponent))
    ir.store(ir.max(_c(controller.MIN_FACTOR), shrink), factor)
    ir.br(reject)
    ir.block(large_bad)  # a non-finite attempt shrinks by MIN_FACTOR
    ir.store(_c(controller.MIN_FACTOR), factor)
    ir.br(reject)
    ir.block(reject)
    h_next = ir.op("fmul", h, ir.load(factor))
    ir.store(h_next, h_abs)
    ir.store("1", rejected, kind="i64")
    ir.add_i(rejected_n, 1)
    keep = ir.cmp("olt", h_next, min_step)
    ir.store(ir.select(keep, ir.load(i_bad, kind="i64"), "-1", "i64"), i_bad, kind="i64")
    ir.br(attempt)

    ir.block(failed)
    ir.store(t_now, t_fail)
    ir.br(run_end)

    # an accepted step: the dense output if an output time lies inside, the outputs, then move on
    ir.block(accept)
    t_new, h = ir.load(t_new_v), ir.load(h_v)
    j = ir.load(j_eval, kind="i64")
    has_next, look, make_dense, outputs = ir.icmp("slt", j, "%T"), ir.label(), ir.label(), ir.label()
    ir.cbr(has_next, look, outputs)
    ir.block(look)
    ir.cbr(ir.cmp("olt", ir.load("%t_eval", j), t_new), make_dense, outputs)
    ir.block(make_dense)
    for k in range(n):
        ir.store(ir.load(x, k), R, k)
        ir.store(ir.load(x_new, k), R, n + k)
    for r in range(dense.shape[0]):
        for k in range(n):
            ir.store(_weighted(ir, dense[r, :stages], K, n, k), R, (2 + r) * n + k)
    ir.br(outputs)
    ir.block(outputs)
    out_top, out_check, out_body, out_done = ir.label(), ir.label(), ir.label(), ir.label()
    ir.br(out_top)
    ir.block(out_top)
    j = ir.load(j_eval, kind="i64")
    ir.cbr(ir.icmp("slt", j, "%T"), out_check, out_done)
    ir.block(out_check)
    tq = ir.load("%t_eval", j)
    ir.cbr(ir.cmp("ole", tq, t_new), out_body, out_done)
    ir.block(out_body)
    at_end, at_start = ir.cmp("oeq", tq, t_new), ir.cmp("oeq", tq, t_now)
    theta = ir.op("fdiv", ir.op("fsub", tq, t_now), h)
    for k in range(n):
        acc, power_k = _c(0.0), _c(1.0)
        for r in range(2, 2 + dense.shape[0]):
            power_k = ir.op("fmul", power_k, theta)
            acc = ir.op("fadd", acc, ir.op("fmul", ir.load(R, r * n + k), power_k))
        inside = ir.op("fadd", ir.op("fmul", h, acc), ir.load(R, k))
        value = ir.select(at_end, ir.load(x_new, k), ir.select(at_start, ir.load(x, k), inside))
        ir.store(value, xq, k)
    push(xq)
    ir.store(ir.op("add", ir.load(j_eval, kind="i64"), "1", "i64"), j_eval, kind="i64")
    ir.br(out_top)
    ir.block(out_done)
    ir.store(t_new, t)
    copy(x_new, x)
    for k in range(n):
        ir.store(ir.load(K, (s - 1) * n + k), K, k)
    ir.br(step_top)

    ir.block(run_end)
    counts = ir.at("%counts", ir.op("mul", ir.load(i_run, kind="i64"), str(N_COUNTS), "i64"), "i64")
    for slot, value in enumerate((ir.load(n_out, kind="i64"), "0", ir.load(nfev, kind="i64"),
                                  ir.load(accepted, kind="i64"), ir.load(rejected_n, kind="i64"), "0", "0")):
        ir.store(value, counts, slot, kind="i64")
    index = ir.load(i_run, kind="i64")
    ir.store(ir.load(status, kind="i64"), "%statuses", index, kind="i64")
    ir.store(ir.load(t_fail), "%t_fails", index)
    ir.store(ir.load(i_fail, kind="i64"), "%i_fails", index, kind="i64")
    ir.store(ir.op("add", index, "1", "i64"), i_run, kind="i64")
    ir.br(loop_run)
    ir.block(done)
    ir.body.append("  ret i64 0")

    model = _inlined(model_ir, model_symbol)
    body = "\n".join(["entry:", *ir.allocas, "  br label %start", "start:", *ir.body])
    digest = hashlib.sha256((model + body).encode()).hexdigest()[:24]
    symbol = f"robodyn_tape_rk_{digest}"
    parameters = ("i64 %first, i64 %stop, ptr noalias readonly %x0s, ptr noalias readonly %ps, "
                  "ptr noalias readonly %u, ptr noalias readonly %t_eval, i64 %T, ptr noalias readonly %atol, "
                  "double %rtol, double %t0, double %t1, double %h0, double %h_max, i64 %max_steps, "
                  "ptr noalias %out_xs, ptr noalias %counts, ptr noalias %statuses, ptr noalias %t_fails, "
                  "ptr noalias %i_fails")
    declarations = sorted(set(_INTRINSICS) | set(_declarations(model_ir)))
    text = "\n".join([*declarations, model, f"define i64 @{symbol}({parameters}) nounwind {{", body, "}", ""])
    return text, symbol


_DEFINE: Final = re.compile(r"^define void @(\S+)\((.*)\) nounwind \{$")


def _declarations(model_ir: str) -> list[str]:
    return [line for line in model_ir.splitlines() if line.startswith("declare ")]


def _inlined(model_ir: str, symbol: str) -> str:
    """The model function's definition renamed ``@rk_model``, internal and always inlined."""
    lines = [line for line in model_ir.splitlines() if not line.startswith("declare ")]
    for k, line in enumerate(lines):
        found = _DEFINE.match(line)
        if found and found.group(1) == symbol:
            lines[k] = f"define internal void @rk_model({found.group(2)}) nounwind alwaysinline {{"
            return "\n".join(lines)
    raise ValueError(f"no definition of @{symbol} in the model's IR")
