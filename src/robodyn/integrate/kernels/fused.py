"""Fused batch kernels: when a batch runs one model's own compiled Runge–Kutta kernel, and how it is called.

A batch of a compiled model with an explicit FSAL method (``dopri5``), no events, inputs constant over the run
and no stop point inside (t0, t1) runs the kernel :func:`robodyn.integrate.kernels.fused_ir.fused_ir` writes for that
model: the model's straight-line right-hand side compiled into the integrator by LLVM, ~1.6x faster than the
shared kernel on a pendulum (benchmarks/bench_simulate.py), with the same trajectories bit for bit. Its
machine code is made once per model and method (~0.15 s) and kept in the cache like the model's own functions.
Every other batch — events, inputs that change, stop points, DOP853, the implicit methods, a chain's tape,
``ROBODYN_FUSED=0`` in the environment — runs the shared kernel, as before.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.integrate.methods.registry import REGISTRY, TABLEAUS

if TYPE_CHECKING:
    from robodyn.integrate.kernels.setup import KernelSetup

__all__ = ["FusedBatch", "fused_batch"]

_P, _I, _D = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double
_SIGNATURE: Final = ctypes.CFUNCTYPE(_I, _I, _I, _P, _P, _P, _P, _I, _P, _D, _D, _D, _D, _D, _I, _P, _P, _P, _P, _P)


@dataclass(frozen=True)
class FusedBatch:
    """A model's fused kernel and the inputs of its runs: ``u_start`` at t0, ``u_held`` over (t0, t1) (what the
    model sees), ``u_end`` at t1 (the shared kernel's values at its outputs). ``cached``: the machine code was
    loaded, not compiled."""

    function: Any
    symbol: str
    cached: bool
    u_start: np.ndarray
    u_held: np.ndarray
    u_end: np.ndarray

    def chunk(self, first: int, stop: int, x0: np.ndarray, p: np.ndarray, t_eval: np.ndarray, rtol: float,
              atol: np.ndarray, t0: float, t1: float, max_steps: int, xs: np.ndarray, counts: np.ndarray,
              status: np.ndarray, t_fail: np.ndarray, i_fail: np.ndarray) -> None:
        """Runs ``first <= i < stop`` (a thread's piece of the batch; ctypes releases the GIL). Arrays are
        C-contiguous: x0 (N, n), p (N, n_p), xs (N, T, n) written, counts (N, 7) int64, status, i_fail (N,)
        int64, t_fail (N,)."""
        def at(array: np.ndarray) -> int:
            return int(array.__array_interface__["data"][0]) if array.size else ctypes.addressof(_EMPTY)

        self.function(first, stop, at(x0), at(p), at(self.u_held), at(t_eval), t_eval.size, at(atol), rtol, t0, t1,
                      0.0, np.inf, max_steps, at(xs), at(counts), at(status), at(t_fail), at(i_fail))

    def inputs_at(self, t_eval: np.ndarray, t0: float, t1: float) -> np.ndarray:
        """The inputs at the output times (T, m), as the shared kernel writes them."""
        rows = np.empty((t_eval.size, self.u_held.size))
        rows[:] = self.u_held
        rows[t_eval <= t0] = self.u_start
        rows[(t_eval == t1) & (t_eval > t0)] = self.u_end
        return rows


_EMPTY = ctypes.c_double(0.0)


def fused_batch(setup: KernelSetup, method: str, t_span: tuple[float, float], stops: np.ndarray,
                n_params: int) -> FusedBatch | None:
    """The fused kernel of ``setup``'s model for a batch with ``method`` over ``t_span`` and parameter rows of
    ``n_params`` values, or None when the batch is not one it covers (see the module docstring): the shared
    kernel runs it then."""
    from robodyn.codegen.objects import enabled

    if (setup.path != "compiled" or len(setup.events) or not enabled() or setup.fns[3] != 0
            or os.environ.get("ROBODYN_FUSED", "").strip() == "0" or REGISTRY[method].family != "adaptive"):
        return None
    table, dop853 = TABLEAUS[method].kernel_method()
    if dop853 is not None:
        return None
    model, inp = setup.model, setup.inp
    t0, t1 = float(t_span[0]), float(t_span[1])
    m = model.n_inputs
    if (m > 0 and (len(inp) != 6 or inp[5][1] == 0)) or np.any((stops > t0) & (stops < t1)):
        return None  # inputs that change within the run (or state feedback), or stop points inside it
    from robodyn.model.compiled import rhs_ir

    found = rhs_ir(model)
    if found is None or model.n_states == 0:
        return None
    memo = model.memo()
    key = ("fused kernel", method, n_params)
    if key not in memo:
        from robodyn.integrate.kernels.fused_ir import fused_ir

        memo[key] = fused_ir(*found, model.n_states, m, n_params, table)
    text, symbol = memo[key]
    from robodyn.codegen.llvm.native import native_kernel

    function, cached = native_kernel(text, symbol, _SIGNATURE)
    from robodyn.signals.inputs import load_evaluator

    evaluate = load_evaluator(compiled=False)  # piecewise-constant terms only: exact in Python
    x = np.zeros(model.n_states)
    u_start, u_held, u_end = (np.zeros(m) for _ in range(3))
    evaluate(t0, t0, x, inp, u_start)
    evaluate(t0, 0.5 * (t0 + t1), x, inp, u_held)
    evaluate(t1, t1, x, inp, u_end)
    return FusedBatch(function, symbol, cached, u_start, u_held, u_end)
