"""``robodyn optimize PROBLEM.yaml --out traj.csv``: solve an optimal control problem file
(robodyn.load_problem, OptimalControlProblem.solve) and write the trajectory.

The CSV has the columns ``t``, the states, then the inputs (robodyn.OptimalTrajectory.to_csv). JSON keys are a
promise to scripts: ``cost``, ``violation``, ``iterations``, ``status``, ``converged``, ``seconds`` (the solve,
not loading or compiling) and ``method``. Bad input exits 2 with one line; a solve that does not converge exits 1
with the status, the last cost and the violation; nothing is written unless the solve converged.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from robodyn.base.errors import InputError
from robodyn.cli.args import add_json

__all__ = ["add_commands"]


def _progress(iteration: int, cost: float, violation: float) -> None:
    from robodyn.base.progress import announce

    announce(f"iteration {iteration}: cost {cost:.10g}, violation {violation:.3g}")


def _cmd_optimize(args: argparse.Namespace) -> int:
    from robodyn.base.atomic import check_output_path
    from robodyn.control.optimal.problem_file import load_problem

    if args.out is not None:
        if Path(args.out).suffix.lower() != ".csv":
            raise InputError(f"--out {args.out}: the trajectory is written as CSV: name a .csv file")
        check_output_path(args.out, "--out")
    problem = load_problem(args.problem, method=args.method)
    result = problem.solve(progress=_progress)  # ConvergenceError (exit 1) before anything is written
    if args.out is not None:
        result.to_csv(args.out)
    summary: dict[str, Any] = result.summary()
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"{problem.model.name}: {result.method} {result.status} in {result.iterations} iterations "
          f"({result.seconds:.3g} s): cost {result.cost:.10g}, violation {result.violation:.3g}"
          + (f"; wrote {args.out}" if args.out is not None else ""))
    return 0


def add_commands(commands: Any) -> None:
    """Add ``optimize`` to the ``robodyn`` subcommands."""
    from robodyn.control.optimal.solvers import SOLVERS

    optimize = commands.add_parser("optimize", help="solve an optimal control problem file (kind: optimal_control)")
    optimize.add_argument("problem", metavar="PROBLEM", help="the problem file (.yaml)")
    optimize.add_argument("--out", metavar="FILE.csv", help="write t, the states and the inputs at the knots")
    optimize.add_argument("--method", choices=tuple(SOLVERS), help="the solver (default: the file's method)")
    add_json(optimize)
    optimize.set_defaults(run=_cmd_optimize)
