"""``robodyn optimize PROBLEM.yaml --out traj.csv [--report page.html]``: solve an optimal control problem file
(robodyn.load_problem, OptimalControlProblem.solve) and write the trajectory and its report.

The CSV has the columns ``t``, the states, then the inputs (robodyn.OptimalTrajectory.to_csv); the report is the
page of robodyn.report.optimize, with the cost and violation of every iteration as the solver reported them to
the progress callback (recorded here, also drawn on a terminal). JSON keys are a promise to scripts: ``cost``,
``violation``, ``iterations``, ``status``, ``converged``, ``seconds`` (the solve, not loading or compiling) and
``method``. Bad input (output paths included: checked before the solve) exits 2 with one line; a solve that does
not converge exits 1 with the status, the last cost and the violation; nothing is written unless the solve
converged, and then the CSV and the report together (robodyn.base.atomic.write_files_atomic: both or neither).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robodyn.base.errors import InputError
from robodyn.cli.args import add_json

if TYPE_CHECKING:
    from robodyn.control.optimal.problem import OptimalControlProblem
    from robodyn.control.optimal.result import OptimalTrajectory

__all__ = ["add_commands"]


class _Recorder:
    """The progress callback: records each (iteration, cost, violation) for the report, and draws it on a terminal."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, float, float]] = []

    def __call__(self, iteration: int, cost: float, violation: float) -> None:
        from robodyn.base.progress import announce

        self.rows.append((iteration, cost, violation))
        announce(f"iteration {iteration}: cost {cost:.10g}, violation {violation:.3g}")


def _check_outputs(args: argparse.Namespace) -> None:
    """The output paths, refused before any work (suffix, then robodyn.base.atomic's checks)."""
    from robodyn.base.atomic import check_output_path

    if args.out is not None:
        if Path(args.out).suffix.lower() != ".csv":
            raise InputError(f"--out {args.out}: the trajectory is written as CSV: name a .csv file")
        check_output_path(args.out, "--out")
    if args.report is not None:
        if Path(args.report).suffix.lower() not in (".html", ".htm"):
            raise InputError(f"--report {args.report}: the report is one HTML page: name a .html file")
        check_output_path(args.report, "--report")


def _files(args: argparse.Namespace, problem: OptimalControlProblem, result: OptimalTrajectory,
           history: list[tuple[int, float, float]]) -> dict[str, str]:
    """What to write: the CSV and the report's page (with the problem file's text)."""
    files: dict[str, str] = {}
    if args.out is not None:
        files[args.out] = result.to_csv_text()
    if args.report is not None:
        from robodyn.base.textfile import MAX_TEXT_BYTES, read_text_limited
        from robodyn.report.optimize import optimization_page

        text = read_text_limited(Path(args.problem), "problem file", limit=MAX_TEXT_BYTES)
        files[args.report] = optimization_page(result, problem, history=history, text=text)
    return files


def _cmd_optimize(args: argparse.Namespace) -> int:
    from robodyn.base.atomic import write_files_atomic
    from robodyn.control.optimal.problem_file import load_problem

    _check_outputs(args)
    problem = load_problem(args.problem, method=args.method)
    progress = _Recorder()
    result = problem.solve(progress=progress)  # ConvergenceError (exit 1) before anything is written
    files = _files(args, problem, result, progress.rows)
    write_files_atomic(files)
    summary: dict[str, Any] = result.summary()
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"{problem.model.name}: {result.method} {result.status} in {result.iterations} iterations "
          f"({result.seconds:.3g} s): cost {result.cost:.10g}, violation {result.violation:.3g}"
          + (f"; wrote {', '.join(files)}" if files else ""))
    return 0


def add_commands(commands: Any) -> None:
    """Add ``optimize`` to the ``robodyn`` subcommands."""
    from robodyn.control.optimal.solvers import SOLVERS

    optimize = commands.add_parser("optimize", help="solve an optimal control problem file (kind: optimal_control)")
    optimize.add_argument("problem", metavar="PROBLEM", help="the problem file (.yaml)")
    optimize.add_argument("--out", metavar="FILE.csv", help="write t, the states and the inputs at the knots")
    optimize.add_argument("--method", choices=tuple(SOLVERS), help="the solver (default: the file's method)")
    optimize.add_argument("--report", metavar="FILE.html", help="write the report: the trajectory, the inputs "
                          "against their bounds, the convergence, the problem")
    add_json(optimize)
    optimize.set_defaults(run=_cmd_optimize)
