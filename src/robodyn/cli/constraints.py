"""``robodyn assemble``: consistent initial conditions of a mechanism with closed loops (robodyn.assemble).

JSON keys are a promise to scripts: ``coordinates`` ({coordinate: value}, every coordinate), ``velocities``
({velocity: value}), ``residual`` (the largest |phi| and |J q' - c'| left, m or rad and per second),
``independent`` (the coordinates the point is free in, by the constraint Jacobian there) and ``dimension`` (the
degrees of freedom, n - k).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from robodyn.base.errors import InputError
from robodyn.cli.args import add_json, add_model, assignments, load_model
from robodyn.model.quantities import parse_number

__all__ = ["add_commands"]


def _cmd_assemble(args: argparse.Namespace) -> int:
    import robodyn

    model = load_model(args)
    fix = assignments(args.fix, "--fix", model.units())
    guess = assignments(args.guess, "--guess", model.units())
    unknown = [name for name in guess if name not in model.states]
    if unknown:
        raise InputError(f"--guess: {unknown[0]!r} is not a state of {model.name!r} ({', '.join(model.states)})")
    t = 0.0 if args.t is None else parse_number(args.t, where="--t")
    state = robodyn.assemble(model, guess, fix, t=t)
    constraints = model.constraints()
    assert constraints is not None  # robodyn.assemble refuses a model without
    n = constraints.n
    x = np.array(list(state.values()))
    p = model.parameter_vector()
    residual = max((abs(v) for v in constraints.residuals(t, x, p).values()), default=0.0)
    split = constraints.split(t, x, p)
    result: dict[str, Any] = {
        "coordinates": dict(list(state.items())[:n]), "velocities": dict(list(state.items())[n:]),
        "residual": residual, "independent": [constraints.coordinates[i] for i in split.independent],
        "dimension": constraints.dimension,
    }
    if args.json:
        print(json.dumps(result))
        return 0
    freedom = "degree" if constraints.dimension == 1 else "degrees"
    print(f"{model.name}: assembled, residual {residual:.3g} ({constraints.dimension} {freedom} of freedom: "
          f"{', '.join(result['independent']) or 'none'})")
    for name, value in state.items():
        print(f"  {name} = {value:.12g}")
    return 0


def add_commands(commands: Any) -> None:
    """Add ``assemble`` to the ``robodyn`` subcommands."""
    assemble = commands.add_parser("assemble", help="close a mechanism's loops: consistent coordinates and "
                                                    "velocities")
    add_model(assemble)
    assemble.add_argument("--fix", action="append", metavar="NAME=VALUE,...",
                          help="coordinates and velocities held, e.g. --fix crank=1.0,crank_dot=2")
    assemble.add_argument("--guess", action="append", metavar="NAME=VALUE,...",
                          help="where the search starts (others 0): picks the assembly branch")
    assemble.add_argument("--t", metavar="T", help="the time, for points held on paths (default 0)")
    add_json(assemble)
    assemble.set_defaults(run=_cmd_assemble)
