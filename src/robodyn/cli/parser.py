"""The ``robodyn`` command's argument parser: argparse, with errors as one line and exit code 2, and only the named
command's subparser built (:func:`build_parser`). Imported when a command line is parsed, not by the quick path of
``robodyn simulate`` (robodyn.cli.quick), which needs no parser.
"""

from __future__ import annotations

import argparse
import importlib
import os
from typing import Any, NoReturn

from robodyn.base.version import __version__
from robodyn.cli.commands import COMMANDS, PROG, fail

__all__ = ["build_parser"]


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
        fail(f"{message} (see '{self.prog} --help')", 2)


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
