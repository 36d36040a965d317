"""Input signals of a simulation: the signal classes, a model's resolved inputs, their compiled form.

The package's parts:

- :mod:`robodyn.signals.core`: the signal classes (:class:`Constant`, :class:`Step`, :class:`Ramp`,
  :class:`Sine`, :class:`Pulse`, :class:`Table`, :class:`Sum`, :class:`Scaled`, :class:`FunctionSignal`);
- :mod:`robodyn.signals.inputs`: :func:`resolve_inputs` -> :class:`Inputs` (with :class:`StateFeedback`)
  and :meth:`Inputs.compiled`, which packs them into the arrays the kernels read;
- :mod:`robodyn.signals.tracking`: :class:`TrackingFeedback`, u = u*(t) - K(t) (x - x*(t)) tabulated at knots (what
  ``robodyn.tvlqr`` gives ``simulate``), packed into the same arrays;
- :mod:`robodyn.signals.noise`: :class:`WhiteNoise`, seeded white noise held per sample (a counter-based generator:
  the same numbers compiled and interpreted, whatever steps the integrator takes);
- :mod:`robodyn.signals.kinds`: the kind codes of the packed rows, shared by the packer and the evaluator;
- ``robodyn/signals/kernel.py``: the evaluator ``eval_inputs``, a numba-compatible source template that
  is pasted into generated modules or loaded by :func:`load_evaluator` (never imported as an ordinary module).

Everything public is importable from here: ``from robodyn.signals import Step, resolve_inputs``. The names
are loaded on first use (PEP 562), so that importing one submodule (``robodyn.signals.core`` for the signal
classes, ``robodyn.signals.kinds`` for the kind codes) does not import the text parser and sympy with it.
Input tables read from CSV files: :mod:`~robodyn.signals.tables`.
"""

from typing import TYPE_CHECKING, Final

from robodyn.base.lazy import forwarded_names, lazy_names

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "CompiledInputs": "robodyn.signals.inputs",
    "Constant": "robodyn.signals.core",
    "EVALUATOR_SOURCE_PATH": "robodyn.signals.inputs",
    "FunctionSignal": "robodyn.signals.core",
    "HELD_KINDS": "robodyn.signals.kinds",  # not in __all__: use robodyn.signals.kinds
    "Inputs": "robodyn.signals.inputs",
    "KIND_CODES": "robodyn.signals.kinds",
    "N_COEF": "robodyn.signals.kinds",  # not in __all__: use robodyn.signals.kinds
    "Pulse": "robodyn.signals.core",
    "Ramp": "robodyn.signals.core",
    "Scaled": "robodyn.signals.core",
    "Signal": "robodyn.signals.core",
    "Sine": "robodyn.signals.core",
    "StateFeedback": "robodyn.signals.inputs",
    "Step": "robodyn.signals.core",
    "Sum": "robodyn.signals.core",
    "Table": "robodyn.signals.core",
    "TrackingFeedback": "robodyn.signals.tracking",
    "WhiteNoise": "robodyn.signals.noise",
    "compile_inputs": "robodyn.signals.inputs",
    "load_evaluator": "robodyn.signals.inputs",
    "resolve_inputs": "robodyn.signals.inputs",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs: the same names, imported eagerly
    from robodyn.signals.core import Constant, FunctionSignal, Pulse, Ramp, Scaled, Signal, Sine, Step, Sum, Table
    from robodyn.signals.inputs import (
        EVALUATOR_SOURCE_PATH,
        CompiledInputs,
        Inputs,
        StateFeedback,
        compile_inputs,
        load_evaluator,
        resolve_inputs,
    )
    from robodyn.signals.kinds import KIND_CODES
    from robodyn.signals.noise import WhiteNoise
    from robodyn.signals.tracking import TrackingFeedback


_lazy_getattr, _lazy_dir = lazy_names(__name__, _LAZY)
#: the command-line text form of signals is read by robodyn.files.signal_text (it parses expressions, a model-layer
#: service); these names still resolve here, with a DeprecationWarning, for one release
_MOVED_NAMES: Final = ("parse_input_assignments", "parse_signal")
_moved_getattr, _moved_dir = forwarded_names(__name__, "robodyn.files.signal_text", _MOVED_NAMES)


def __getattr__(name: str) -> object:
    return _moved_getattr(name) if name in _MOVED_NAMES else _lazy_getattr(name)


def __dir__() -> list[str]:
    return sorted(set(_lazy_dir()) | set(_moved_dir()))


__all__ = [
    "EVALUATOR_SOURCE_PATH",
    "KIND_CODES",
    "CompiledInputs",
    "Constant",
    "FunctionSignal",
    "Inputs",
    "Pulse",
    "Ramp",
    "Scaled",
    "Signal",
    "Sine",
    "StateFeedback",
    "Step",
    "Sum",
    "Table",
    "TrackingFeedback",
    "WhiteNoise",
    "compile_inputs",
    "load_evaluator",
    "resolve_inputs",
]
