"""The registry of optimal control solvers: a method name -> the solver, ``solver(problem, **options) ->
SolverOutcome`` (robodyn.control.optimal.protocol).

An entry is either the solver itself or its place as ``"module.path:function"``, imported on first use, so that
``import robodyn`` imports no solver and a solver that is not installed fails with a message naming it. Adding a
solver is one entry of :data:`SOLVERS`. A solver takes the problem (a TranscribableProblem) and keyword options;
among them ``progress``, when given, is a callable ``progress(iteration, cost, violation)`` it calls after each
iteration (the command line draws it on a terminal).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from robodyn.base.errors import InputError
from robodyn.base.names import did_you_mean

__all__ = ["SOLVERS", "Solver", "solver"]

Solver = Callable[..., Any]  # (problem, **options) -> SolverOutcome

#: name -> the solver, or "module:function" imported on first use.
SOLVERS: dict[str, Solver | str] = {
    "ddp": "robodyn.control.optimal.ddp:solve_registered_ddp",
    "fddp": "robodyn.control.optimal.ddp:solve_registered_fddp",
    "collocation": "robodyn.control.optimal.collocation:solve_registered_collocation",
}


def solver(name: str) -> Solver:
    """The solver registered as ``name`` (InputError for an unknown name or a solver that cannot be imported)."""
    if not isinstance(name, str) or name not in SOLVERS:
        raise InputError(f"unknown method {name!r}: use one of {', '.join(SOLVERS)}"
                         f"{did_you_mean(str(name), list(SOLVERS))}")
    entry = SOLVERS[name]
    if not isinstance(entry, str):
        return entry
    module_name, _, function = entry.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise InputError(f"the solver {name!r} is not available: its module {module_name} cannot be imported "
                         f"({exc}): choose another method ({', '.join(n for n in SOLVERS if n != name)})") from None
    found = getattr(module, function, None)
    if not callable(found):
        raise InputError(f"the solver {name!r} is not available: {module_name} has no function {function!r}")
    return found
