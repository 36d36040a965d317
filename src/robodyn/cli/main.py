"""The ``robodyn`` command: argument parsing and printing only; the work is done by the public API.

Errors never show a traceback: a :class:`~robodyn.base.errors.RobodynError` becomes one line on stderr and
exit code 2 (bad input) or 1 (numerical failure). Set ``ROBODYN_DEBUG=1`` to see tracebacks.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from robodyn.base.errors import RobodynError
from robodyn.cli.commands import COMMANDS, PROG, fail

if TYPE_CHECKING:
    import argparse

__all__ = ["COMMANDS", "PROG", "build_parser", "fail", "main"]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand, or with ``command``'s only when it is one of them
    (robodyn.cli.parser: argparse is imported when a command line is parsed)."""
    from robodyn.cli.parser import build_parser as build

    return build(command)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 success, 1 numerical failure, 2 bad input)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    # BLAS on one thread (read when numpy loads; docs/cli.md): a command's matrices are small, and OpenBLAS's thread
    # hand-offs cost more than their arithmetic on a small machine (a QR of 150 x 62: up to 20 ms against 0.14 ms)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if argv[:1] == ["simulate"]:  # a warm run repeated from its image, without numpy (robodyn.cli.quick)
        from robodyn.cli.quick import quick_simulate

        try:
            quick = quick_simulate(argv[1:])
        except KeyboardInterrupt:
            fail("interrupted", 130)
        if quick is not None:
            return quick
    args = build_parser(next((word for word in argv if not word.startswith("-")), None)).parse_args(argv)
    try:
        with warnings.catch_warnings(), contextlib.ExitStack() as stack:
            if args.no_progress or getattr(args, "quiet", False):  # for this command only (main may run again)
                from robodyn.base.progress import quiet

                stack.enter_context(quiet())
            if not os.environ.get("ROBODYN_DEBUG"):  # numpy's, scipy's and lambdify's warnings: the CLI's
                warnings.simplefilter("ignore")  # stderr is one line, and failures are reported as errors
            code: int = args.run(args)
        return code
    except RobodynError as exc:
        if os.environ.get("ROBODYN_DEBUG"):
            raise
        fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug in robodyn: still one line, with what to do
        if os.environ.get("ROBODYN_DEBUG"):
            raise
        fail(f"internal error {type(exc).__name__}: {exc} (rerun with ROBODYN_DEBUG=1 and report it)", 1)
