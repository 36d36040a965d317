"""Calls through a function's address from numba code: how the shared kernels reach a model's functions.

The integrator kernels are compiled once per machine (:func:`robodyn.codegen.module.kernel_module`) and
take the model's compiled functions as machine addresses (``int64``): its right-hand side, its event
functions and its Jacobian, each a C function ``void fn(double t, double *x, double *u, double *p,
double *out)`` (a numba ``cfunc``, :func:`robodyn.codegen.cache.private_cfunc`). :func:`call_model` emits
the indirect call. Because the address is an argument and not a constant, the kernels' machine code does
not depend on the model, and numba's on-disk cache of them stays valid for every model.

Measured (numba 0.68, pendulum, 10^5 RK4 steps): 7.3-7.6 ms through the address against 7.4-7.7 ms with
the right-hand side compiled into the kernel, i.e. no measurable cost; a cached kernel module loads in
~7 ms where a per-model kernel took 3.8-5 s to compile. numba's first-class function types were the other
candidate; an address keeps the kernels' signature plain (an ``int64`` array) and needs no typing of
function objects.
"""

from __future__ import annotations

from typing import Any

from numba import types
from numba.core import errors
from numba.extending import intrinsic

__all__ = ["call_model"]


def _is_vector(ty: Any) -> bool:
    return isinstance(ty, types.Array) and ty.dtype == types.float64 and ty.ndim == 1 and ty.layout == "C"


@intrinsic
def call_model(typingctx: Any, address: Any, t: Any, x: Any, u: Any, p: Any, out: Any) -> Any:
    """``fn(t, x, u, p, out)`` for the C function at ``address``: x, u, p, out C-contiguous float64 vectors.

    The arrays' data pointers are passed; the callee reads ``x``, ``u``, ``p`` and writes ``out``.
    """
    if not isinstance(address, types.Integer):
        raise errors.TypingError(f"call_model: the address must be an integer, got {address}")
    for label, ty in (("x", x), ("u", u), ("p", p), ("out", out)):
        if not _is_vector(ty):
            raise errors.TypingError(f"call_model: {label} must be a C-contiguous float64 vector, got {ty}")
    signature = types.void(address, t, x, u, p, out)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        from llvmlite import ir

        double = ir.DoubleType()
        function_type = ir.FunctionType(ir.VoidType(), [double, *([double.as_pointer()] * 4)])
        function = builder.inttoptr(args[0], function_type.as_pointer())
        time = context.cast(builder, args[1], sig.args[1], types.float64)
        pointers = [context.make_array(ty)(context, builder, value).data for ty, value in zip(sig.args[2:], args[2:])]
        builder.call(function, [time, *pointers])
        return context.get_dummy_value()

    return signature, codegen
