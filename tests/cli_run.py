"""Running the ``robodyn`` command in the test process: the exit code and what it printed, and the check of the
CLI's contract for errors (one line on stderr, no traceback, no internal error)."""

from __future__ import annotations

import pytest

from robodyn.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``robodyn ARGV...``: (exit code, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    """``err`` after checking it is one ``robodyn: error: ...`` line, neither a traceback nor an internal error."""
    assert err.count("\n") == 1 and err.startswith("robodyn: error: "), err
    assert "internal error" not in err and "Traceback" not in err, err
    return err
