"""A model's compiled functions: the generated modules of its ``rhs``, exact Jacobian and outputs.

- :func:`compiled_module` — the generated ``rhs`` (and ``event_fn``) with their C entry points ``rhs_c``,
  ``event_c``; :func:`jacobian_module` holds the exact Jacobian ``jac`` and ``jac_c``, generated only when an
  implicit method asks for it (a large chain's Jacobian tape is much bigger than its right-hand side);
  :func:`output_module` the outputs ``out_fn``. A new model therefore compiles only its own small functions.
- :func:`model_addresses` — ``fns = [rhs, event_fn, jac, chart]``, the addresses through which the shared integrator
  kernels (:mod:`robodyn.integrate.kernels.module`) reach the model (:mod:`robodyn.codegen.indirect`).

The texts come from the model's contract (``kernel_rhs_source()``, ``kernel_jacobian_source()``,
``kernel_output_source()``, ``symbol_table()``); the common header, C entries and compilation are
:mod:`robodyn.codegen.module`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from robodyn.codegen.loader import load_generated
from robodyn.codegen.module import c_entry, function_address, function_header
from robodyn.codegen.printer import safe_label

if TYPE_CHECKING:
    import sympy

    from robodyn.model.protocol import ModelContract

__all__ = ["chart_text", "compiled_module", "jacobian_module", "jacobian_text", "linearization_function",
           "model_addresses", "module_text", "output_module", "output_text", "parameter_jacobian_text",
           "python_function", "rhs_ir"]


def _header(model: ModelContract, n_events: int = 0) -> str:
    """The header of a model's generated function module (imports, decorators, its sizes)."""
    return function_header(safe_label(model.name), model.n_states, model.n_inputs, len(model.parameters), n_events)


def module_text(model: ModelContract, events: Sequence[sympy.Expr] = ()) -> str:
    """The source of a model's function module: ``rhs`` and ``rhs_c`` (and ``event_fn``, ``event_c``)."""
    source = model.kernel_rhs_source()
    if source is None:
        raise ValueError(f"model {model.name!r} has no numba source (compilable is False)")
    parts = [_header(model, len(events)), source, c_entry("rhs", "N_STATES")]
    if events:
        parts += [model.kernel_event_source(events), c_entry("event_fn", "N_EVENTS")]
    return "\n\n".join(parts)


def jacobian_text(model: ModelContract) -> str | None:
    """The source of a model's Jacobian module ``jac`` / ``jac_c``, or None without a source for it."""
    source = model.kernel_jacobian_source()
    if source is None:
        return None
    return "\n\n".join([_header(model), source, c_entry("jac", "N_STATES * (N_STATES + N_INPUTS)")])


def parameter_jacobian_text(model: ModelContract) -> str | None:
    """The source of a model's module of df/dp ``jacp(t, x, u, p, out)`` (called from Python), or None without one."""
    source = model.kernel_parameter_jacobian_source()
    return None if source is None else f"{_header(model)}\n\n{source}"


def chart_text(model: ModelContract) -> str | None:
    """The source of a model's chart module ``chart`` / ``chart_c`` (a model on a manifold), or None."""
    source = model.kernel_chart_source()
    if source is None:
        return None
    return "\n\n".join([_header(model), source, c_entry("chart", "2 * N_STATES")])


def output_text(model: ModelContract) -> str | None:
    """The source of a model's output module ``out_fn(t, x, u, p, out)``, or None without a source for it."""
    source = model.kernel_output_source()
    if source is None:
        return None
    return f"{_header(model)}\n\n{source}"


def compiled_module(model: ModelContract, events: Sequence[sympy.Expr] = ()) -> ModuleType:
    """The module of ``model``'s compiled functions (with ``events``), generated or reused from the cache.

    ``model`` must have ``kernel_rhs_source()``. Machine code is compiled lazily (numba, on the first call or
    the first ``.address``) or loaded from its cache. Kept in the model's memo: models are immutable.
    """
    memo = model.memo()
    key = ("function module", tuple(events))
    module = memo.get(key)
    if module is None:
        module = memo[key] = load_generated(module_text(model, events), "robodyn_gen")
    return module


def jacobian_module(model: ModelContract) -> ModuleType | None:
    """The module of ``model``'s exact Jacobian ``jac`` / ``jac_c``, or None when the model has no source for it."""
    return _memo_module(model, "jacobian module", jacobian_text, "robodyn_jac")


def output_module(model: ModelContract) -> ModuleType | None:
    """The module of ``model``'s outputs ``out_fn(t, x, u, p, out)`` (called from Python), or None without a
    source for them."""
    return _memo_module(model, "output module", output_text, "robodyn_out")


def _memo_module(model: ModelContract, key: str, text_of: Callable[[ModelContract], str | None],
                 prefix: str) -> ModuleType | None:
    """The generated module of ``text_of(model)`` (None without a text), kept in the model's memo under ``key``."""
    memo = model.memo()
    if key not in memo:
        text = text_of(model)
        memo[key] = None if text is None else load_generated(text, prefix)
    module: ModuleType | None = memo[key]
    return module


def python_function(model: ModelContract, which: str) -> Callable[..., None] | None:
    """``model``'s compiled ``rhs``, ``jac``, ``out_fn`` or ``jacp`` (``which``: ``"rhs"``, ``"jacobian"``,
    ``"output"``, ``"parameter jacobian"``) to call from Python as ``fn(t, x, u, p, out)``, or None without that
    source: the same generated modules the kernels use, compiled by LLVM when they are straight-line code (no numba
    in the process), else by numba. Kept in the model's memo (the code does not depend on parameter values)."""
    from robodyn.codegen.module import straight_line_function

    memo = model.memo()
    key = ("python function", which)
    if key not in memo:
        text = {"rhs": module_text, "jacobian": jacobian_text, "output": output_text,
                "parameter jacobian": parameter_jacobian_text}[which](model)
        name = {"rhs": "rhs", "jacobian": "jac", "output": "out_fn", "parameter jacobian": "jacp"}[which]
        function = None if text is None else straight_line_function(text, name)
        if function is None and text is not None:
            module = (compiled_module(model) if which == "rhs" else
                      jacobian_module(model) if which == "jacobian" else output_module(model)
                      if which == "output" else _memo_module(model, "parameter jacobian module",
                                                             parameter_jacobian_text, "robodyn_jacp"))
            function = None if module is None else getattr(module, name)
        memo[key] = function
    found: Callable[..., None] | None = memo[key]
    return found


def linearization_function(model: ModelContract, source: str) -> Callable[..., None]:
    """``lin(t, x, u, p, out)`` writing [A | B | C | D] flat, compiled from ``source`` (a function ``lin`` written
    for ``model``: a diagram's forward-mode derivative, robodyn.diagrams.code.derivative_sources) under the
    model's header: by LLVM when it is straight-line code, else by numba. A diagram and its parsed-model record
    compile the same text, so they give the same bits."""
    from robodyn.codegen.module import straight_line_function

    text = f"{_header(model)}\n\n{source}"
    function = straight_line_function(text, "lin")
    if function is None:
        function = load_generated(text, "robodyn_lin").lin
    return function


def rhs_ir(model: ModelContract) -> tuple[str, str] | None:
    """The LLVM IR of ``model``'s ``rhs_c`` and its symbol (robodyn.codegen.llvm.pyir), or None when its right-hand side
    is not straight-line code (a chain's tape, a helper call) or the model has no source: what a fused batch
    kernel compiles in (robodyn.integrate.kernels.fused_ir). Kept in the model's memo."""
    memo = model.memo()
    if "rhs ir" not in memo:
        from robodyn.codegen.llvm.pyir import Unsupported, function_ir

        try:
            memo["rhs ir"] = function_ir(module_text(model), "rhs") if model.compilable else None
        except (Unsupported, ValueError):
            memo["rhs ir"] = None
    found: tuple[str, str] | None = memo["rhs ir"]
    return found


def model_addresses(model: ModelContract, events: Sequence[sympy.Expr] = (),
                    jacobian: bool = False) -> tuple[np.ndarray, bool]:
    """``fns = [rhs, event_fn, jac, chart]`` (int64 ``(4,)``, 0 for none) of ``model``'s compiled functions, and whether
    all of them came from the on-disk cache.

    ``jacobian=False`` leaves the Jacobian out (0): only the implicit methods use it, and without it they
    difference ``rhs``. Each function is loaded from its exported object (robodyn.codegen.objects: no numba in
    the process), or compiled here by numba and exported for later processes. The addresses are kept in the
    model's memo (its equations do not change; parameters are passed at each call): writing a large model's
    module text again costs more than the call it serves (0.17 s for the Panda's). A kept answer counts as cached.
    """
    key = ("model addresses", tuple(events), jacobian)
    memo = model.memo()
    if key in memo:
        kept: np.ndarray = memo[key]
        return kept, True
    fns, cached = _addresses(model, events, jacobian)
    memo[key] = fns
    return fns, cached


def _addresses(model: ModelContract, events: Sequence[sympy.Expr], jacobian: bool) -> tuple[np.ndarray, bool]:
    functions = [(module_text(model, events), "robodyn_gen", "rhs_c")]
    if events:
        functions.append((functions[0][0], "robodyn_gen", "event_fn_c"))
    jac_text = jacobian_text(model) if jacobian else None
    if jac_text is not None:
        functions.append((jac_text, "robodyn_jac", "jac_c"))
    chart = chart_text(model)
    if chart is not None:
        functions.append((chart, "robodyn_chart", "chart_c"))
    found = {name: function_address(text, prefix, name) for text, prefix, name in functions}
    fns = np.array([found["rhs_c"][0], found.get("event_fn_c", (0, True))[0], found.get("jac_c", (0, True))[0],
                    found.get("chart_c", (0, True))[0]], dtype=np.int64)
    return fns, all(cached for _, cached in found.values())
