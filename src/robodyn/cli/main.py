"""The ``robodyn`` command: argument parsing and printing only; the work is done by the public API.

Errors never show a traceback: a :class:`~robodyn.errors.RobodynError` becomes one line on stderr and
exit code 2 (bad input) or 1 (numerical failure). Set ``ROBODYN_DEBUG=1`` to see tracebacks.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn

from robodyn import __version__
from robodyn.cli.constraints import add_commands as add_constraint_commands
from robodyn.cli.export import add_commands as add_export_commands
from robodyn.cli.kinematics import add_commands as add_kinematics_commands
from robodyn.cli.models import add_commands as add_model_commands
from robodyn.cli.report import add_commands as add_report_commands
from robodyn.cli.sweep import add_commands as add_sweep_commands
from robodyn.errors import RobodynError

__all__ = ["PROG", "build_parser", "main"]

PROG = "robodyn"


class _Parser(argparse.ArgumentParser):
    """argparse with errors as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (see '{self.prog} --help')", 2)


def _fail(message: str, code: int) -> NoReturn:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    raise SystemExit(code)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = _Parser(prog=PROG, description="Robot and mechanical dynamics: equations, simulation, linearization.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--quiet", dest="no_progress", action="store_true",
                        help="no progress bars (they are shown on a terminal only)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    add_report_commands(commands)
    add_model_commands(commands)
    add_kinematics_commands(commands)
    add_constraint_commands(commands)
    add_export_commands(commands)
    add_sweep_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 success, 1 numerical failure, 2 bad input)."""
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings(), contextlib.ExitStack() as stack:
            if args.no_progress or getattr(args, "quiet", False):  # for this command only (main may run again)
                from robodyn.progress import quiet

                stack.enter_context(quiet())
            if not os.environ.get("ROBODYN_DEBUG"):  # numpy's, scipy's and lambdify's warnings: the CLI's
                warnings.simplefilter("ignore")  # stderr is one line, and failures are reported as errors
            code: int = args.run(args)
        return code
    except RobodynError as exc:
        if os.environ.get("ROBODYN_DEBUG"):
            raise
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug in robodyn: still one line, with what to do
        if os.environ.get("ROBODYN_DEBUG"):
            raise
        _fail(f"internal error {type(exc).__name__}: {exc} (rerun with ROBODYN_DEBUG=1 and report it)", 1)
