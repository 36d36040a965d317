"""How a model's names become C names in an export: the prefix, the ``P_params`` fields, the ``P_fk_<frame>``
functions (docs/export.md, "Names in C").

A name from a model is text; in C it must be an identifier that compiles in ISO C99 (``-pedantic``), GNU C and C++
whatever headers the code meets. One rule:

1. every character other than ASCII letters, digits and ``_`` is written ``_`` (``camera/depth`` -> ``camera_depth``);
2. the result is kept when it is **safe**: an identifier that does not start with ``_`` and holds no ``__`` (both
   reserved for the compiler in C and C++), that is no keyword of C or C++ and no object-like macro of the standard
   headers or the compilers (robodyn.export.c_reserved), and, for a field, none of the macros the export's own header
   defines (``P_NX`` ... ``P_NP``, its include guard);
3. otherwise it is **mangled**: its runs of letters and digits joined by single ``_``, then a trailing ``_``
   (``NAN`` -> ``NAN_``, ``new`` -> ``new_``, ``__x`` -> ``x_``; a field that would start with a digit gets ``p``
   first). A frame's part follows ``P_fk_``, so there only a leading ``_`` and ``__`` are unsafe.

Two names that end as one C name are refused, both named. The prefix is safe when it is a safe name that does not
end with ``_`` (``P_f`` would hold ``__``), is at most :data:`MAX_PREFIX` characters and is no target name CMake
keeps; a prefix given explicitly must be one, the default (the model's name) is made one: kept when safe, else its
runs of letters and digits joined by ``_`` (``two  link`` -> ``two_link``), then ``model_`` before a leading digit
or ``_model`` after what is still unsafe (``new`` -> ``new_model``), cut to :data:`MAX_PREFIX`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from robodyn.base.errors import InputError
from robodyn.export.c_reserved import C_KEYWORDS, CMAKE_TARGETS, CPP_KEYWORDS, MACROS

__all__ = ["MAX_PREFIX", "default_prefix", "field_names", "frame_functions", "header_macros", "prefix_problem",
           "spelled"]

MAX_PREFIX: Final = 48  # Characters of a prefix: its names (P_params_default, P_fk_<frame>) and files stay short.
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_KEYWORDS: Final = C_KEYWORDS | CPP_KEYWORDS
_SIZES: Final = ("NX", "NU", "NY", "NQ", "NP")


def spelled(name: str) -> str:
    """``name`` with every character other than ASCII letters, digits and ``_`` written ``_``."""
    return re.sub(r"[^A-Za-z0-9_]", "_", str(name))


def _problem(identifier: str) -> str | None:
    """Why ``identifier`` cannot stand as a name in exported C and C++, or None when it is safe."""
    if not _IDENTIFIER.match(identifier):
        return "is not a C identifier (letters, digits and _, not first a digit)"
    if identifier.startswith("_") or "__" in identifier:
        return "is reserved in C and C++ (a leading _ or a double __ belongs to the compiler)"
    if identifier in _KEYWORDS:
        return "is a C or C++ keyword"
    if identifier in MACROS:
        return "is a macro of the C standard headers or the compiler"
    return None


def _mangled(name: str, lead: str = "") -> str:
    """The runs of ASCII letters and digits of ``name`` joined by ``_``, ``lead`` before a leading digit, and ``_``."""
    core = "_".join(re.findall(r"[A-Za-z0-9]+", str(name))) or "unnamed"
    return f"{lead}{core}_" if lead and core[0].isdigit() else f"{core}_"


def header_macros(prefix: str) -> tuple[str, ...]:
    """The macros the export's header defines: ``P_NX`` ... ``P_NP`` and the include guard ``P_H`` (upper case)."""
    return (*(f"{prefix}_{size}" for size in _SIZES), f"{prefix.upper()}_H")


def prefix_problem(prefix: str) -> str | None:
    """Why ``prefix`` cannot be an export's prefix P (see the module docstring), or None."""
    problem = _problem(prefix)
    if problem is not None:
        return problem
    if prefix.endswith("_"):
        return "ends with _ (its names P_f ... would hold a double __)"
    if len(prefix) > MAX_PREFIX:
        return f"is longer than {MAX_PREFIX} characters"
    if prefix in CMAKE_TARGETS:
        return "is a target name CMake keeps for itself"
    taken = [name for name in header_macros(prefix) if _problem(name) is not None]
    return f"would define the macro {taken[0]}, which the standard headers define" if taken else None


def default_prefix(name: str) -> str:
    """The prefix of a model called ``name`` (see the module docstring): ``name`` itself when it is one."""
    if prefix_problem(spelled(name)) is None:
        return spelled(name)
    core = "_".join(re.findall(r"[A-Za-z0-9]+", str(name)))
    if not core:
        return "model"
    if core[0].isdigit():
        core = f"model_{core}"
    core = core[:MAX_PREFIX].rstrip("_")
    if prefix_problem(core) is None:
        return core
    return f"{core[:MAX_PREFIX - len('_model')].rstrip('_')}_model"


def field_names(parameters: Iterable[str], prefix: str) -> dict[str, str]:
    """The ``P_params`` field of each parameter, in the parameters' order (see the module docstring); two parameters
    with one field are an InputError naming both."""
    own = set(header_macros(prefix))
    fields = {}
    for name in parameters:
        plain = spelled(name)
        fields[name] = plain if _problem(plain) is None and plain not in own else _mangled(name, "p")
    _check(fields, own, "parameters", "P_params field", "rename one")
    return fields


def frame_functions(frames: Iterable[str], prefix: str) -> dict[str, str]:
    """The C function ``P_fk_<frame>`` of each frame (see the module docstring); two frames with one function are an
    InputError naming both."""
    functions = {}
    for frame in frames:
        part = spelled(frame)
        if not part or part.startswith("_") or "__" in part:
            part = _mangled(frame)
        functions[frame] = f"{prefix}_fk_{part}"
    _check(functions, set(), "frames", "C function", "choose one of them with frames= (--frames)")
    return functions


def _check(names: dict[str, str], own: set[str], what: str, kind: str, fix: str) -> None:
    """Every C name in ``names`` safe (and none of ``own``) and no two alike, else an InputError."""
    seen: dict[str, str] = {}
    for name, c_name in names.items():
        problem = _problem(c_name) or ("is a macro of the export's header" if c_name in own else None)
        if problem is not None:  # a mangled name is safe by construction: this guards the rule itself
            raise InputError(f"export: the {kind} {c_name} of {name!r} {problem}: rename it", key=what)
        if c_name in seen:
            raise InputError(f"export: the {what} {seen[c_name]!r} and {name!r} both become the {kind} {c_name}: "
                             f"{fix}", key=what)
        seen[c_name] = name
