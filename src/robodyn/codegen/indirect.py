"""Calls through a function's address from numba code: how the shared kernels reach a model's functions.

The integrator kernels are compiled once per machine (:func:`robodyn.integrate.kernels.module.kernel_module`) and
take the model's compiled functions as machine addresses (``int64``): its right-hand side, its event
functions and its Jacobian, each a C function ``void fn(double t, double *x, double *u, double *p,
double *out)`` (a numba ``cfunc``, :func:`robodyn.codegen.cache.private_cfunc`). :func:`model_call` makes
the intrinsics that emit the indirect calls. Because the address is an argument and not a constant, the
kernels' machine code does not depend on the model, and numba's on-disk cache of them stays valid for every
model.

Measured (numba 0.68): 4.7 ns per call of the joint's right-hand side through the address against 1.7 ns
compiled into the caller (18.7 against 12.3 ns for the pendulum's), i.e. +5-10% per step on the smallest
models (benchmarks/RESULTS.md); a cached kernel module loads in ~7 ms where a per-model kernel took 3.8-5 s
to compile. numba's first-class function types were the other
candidate; an address keeps the kernels' signature plain (an ``int64`` array) and needs no typing of
function objects.
"""

from __future__ import annotations

from typing import Any

from numba import types
from numba.core import errors
from numba.extending import intrinsic

__all__ = ["complex_pointer", "double_pointer", "int_pointer", "model_call"]


def _is_vector(ty: Any) -> bool:
    return isinstance(ty, types.Array) and ty.dtype == types.float64 and ty.ndim == 1 and ty.layout == "C"


def model_call(slot: int) -> Any:
    """An intrinsic ``fn(fns, t, x, u, p, out)`` calling the C function whose address is ``fns[slot]``.

    The kernels' ``rhs``, ``event_fn`` and ``jac`` (slots 0, 1, 2). An intrinsic, not a jitted function: a
    call of a jitted helper that LLVM does not inline costs two atomic reference-count updates per array
    argument (numba's NRT), which made a small model's steps 1.4-4.5x slower; the intrinsic reads the address
    and emits the indirect call in the caller itself.
    """

    @intrinsic
    def call(typingctx: Any, fns: Any, t: Any, x: Any, u: Any, p: Any, out: Any) -> Any:
        if not (isinstance(fns, types.Array) and fns.dtype == types.int64 and fns.ndim == 1):
            raise errors.TypingError(f"model_call: fns must be an int64 vector, got {fns}")
        for label, ty in (("x", x), ("u", u), ("p", p), ("out", out)):
            if not _is_vector(ty):
                raise errors.TypingError(f"model_call: {label} must be a C-contiguous float64 vector, got {ty}")
        signature = types.void(fns, t, x, u, p, out)

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            from llvmlite import ir

            table = context.make_array(sig.args[0])(context, builder, args[0])
            address = builder.load(builder.gep(table.data, [ir.Constant(ir.IntType(64), slot)]))
            double = ir.DoubleType()
            function_type = ir.FunctionType(ir.VoidType(), [double, *([double.as_pointer()] * 4)])
            function = builder.inttoptr(address, function_type.as_pointer())
            time = context.cast(builder, args[1], sig.args[1], types.float64)
            pointers = [context.make_array(ty)(context, builder, value).data
                        for ty, value in zip(sig.args[2:], args[2:])]
            builder.call(function, [time, *pointers])
            return context.get_dummy_value()

        return signature, codegen

    return call


def _pointer_intrinsic(dtype: Any) -> Any:
    @intrinsic
    def pointer(typingctx: Any, address: Any) -> Any:
        if not isinstance(address, types.Integer):
            raise errors.TypingError(f"an address must be an integer, got {address}")
        signature = types.CPointer(dtype)(address)

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            return builder.inttoptr(args[0], context.get_value_type(sig.return_type))

        return signature, codegen

    return pointer


#: ``double_pointer(address)``, ``int_pointer(address)``, ``complex_pointer(address)``: a typed pointer from an
#: integer address (for ``numba.carray``), as the kernels' C entry points unpack their arguments
#: (robodyn.integrate.kernels.entry)
double_pointer = _pointer_intrinsic(types.float64)
int_pointer = _pointer_intrinsic(types.int64)
complex_pointer = _pointer_intrinsic(types.complex128)
