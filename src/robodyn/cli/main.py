"""The ``robodyn`` command: argument parsing and printing only; the work is done by the public API.

Errors never show a traceback: a :class:`~robodyn.errors.RobodynError` becomes one line on stderr and
exit code 2 (bad input) or 1 (numerical failure). Set ``ROBODYN_DEBUG=1`` to see tracebacks.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any, Final, NoReturn

from robodyn import __version__
from robodyn.errors import RobodynError

__all__ = ["COMMANDS", "PROG", "build_parser", "main"]

PROG = "robodyn"


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, sized to the terminal without importing :mod:`shutil` (and the compression
    modules it imports): every parser makes formatters while it is built, and most runs never print help."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:
            try:
                width = int(os.environ.get("COLUMNS", "")) or os.get_terminal_size().columns
            except (ValueError, OSError):
                width = 80
            width -= 2
        super().__init__(prog, indent_increment, max_help_position, width)


class _Parser(argparse.ArgumentParser):
    """argparse with errors as one line and exit code 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (see '{self.prog} --help')", 2)


class _Unused:
    """What :class:`_OneCommand` gives for a command it leaves out: takes every call and is never parsed."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self


class _OneCommand:
    """The subcommand parsers of :func:`build_parser` for a command line that names ``command``: a module's
    ``add_commands`` adds all of its commands, and only that one's parser is built (building the ten parsers of
    ``robodyn.cli.models`` took longer than the command's own work in a warm ``robodyn simulate``)."""

    def __init__(self, commands: Any, command: str):
        self._commands, self._command = commands, command

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        return self._commands.add_parser(name, **kwargs) if name == self._command else _Unused()


def _fail(message: str, code: int) -> NoReturn:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    raise SystemExit(code)


#: The subcommands each module of ``robodyn.cli`` adds (its ``add_commands``), in the order ``--help`` lists them: a
#: command line names its command, so only that module is imported and asked (tests check this table).
COMMANDS: Final = (
    ("report", ("demo", "analyze")),
    ("simulate", ("simulate",)),
    ("models", ("show", "classify", "modes", "existence", "equilibrium", "linearize", "validity", "convert",
                "verify")),
    ("kinematics", ("fk", "ik", "animate")),
    ("constraints", ("assemble",)),
    ("export", ("export",)),
    ("identify", ("identify",)),
    ("sweep", ("sweep",)),
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand, or with ``command``'s only when it is one of them."""
    parser = _Parser(prog=PROG, description="Robot and mechanical dynamics: equations, simulation, linearization.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--quiet", dest="no_progress", action="store_true",
                        help="no progress bars (they are shown on a terminal only)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    known = any(command in names for _, names in COMMANDS)
    for module, names in COMMANDS:
        if not known:
            importlib.import_module(f"robodyn.cli.{module}").add_commands(commands)
        elif command is not None and command in names:
            importlib.import_module(f"robodyn.cli.{module}").add_commands(_OneCommand(commands, command))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 success, 1 numerical failure, 2 bad input)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(next((word for word in argv if not word.startswith("-")), None)).parse_args(argv)
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
