"""Progress bars (robodyn.base.progress): on a terminal's stderr only, and never when asked for quiet."""

from __future__ import annotations

import io
import sys

import pytest

from robodyn.base import progress as bars


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_is_drawn_on_a_terminal_and_nothing_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.delenv("ROBODYN_QUIET", raising=False)
    with bars.progress(3, "work") as advance:
        for _ in range(3):
            advance()
    assert terminal.getvalue()  # rich drew (and, transient, cleared) the bar
    plain = io.StringIO()  # a file or a pipe: not a terminal
    monkeypatch.setattr(sys, "stderr", plain)
    with bars.progress(3, "work") as advance:
        advance(3)
    assert plain.getvalue() == ""


def test_quiet_turns_the_bars_off(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with bars.quiet(), bars.progress(3, "work") as advance:
        advance(3)
    monkeypatch.setenv("ROBODYN_QUIET", "1")
    with bars.progress(3, "work") as advance:
        advance(3)
    assert terminal.getvalue() == ""


def test_an_announcement_is_one_line_on_a_terminal_and_nothing_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ROBODYN_QUIET", raising=False)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bars.announce("compiling the kernels once")
    assert terminal.getvalue() == "robodyn: compiling the kernels once\n"
    with bars.quiet():
        bars.announce("not shown")
    assert terminal.getvalue().count("\n") == 1
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stderr", plain)
    bars.announce("not shown either")
    assert plain.getvalue() == ""
