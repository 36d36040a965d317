"""Atomic writes: complete file or nothing."""

from __future__ import annotations

import pytest

from robodyn.atomic import write_bytes_atomic, write_text_atomic
from robodyn.errors import InputError


def test_writes_and_replaces(tmp_path):
    target = tmp_path / "deep" / "out.txt"
    write_text_atomic(target, "first")
    write_text_atomic(target, "second")
    assert target.read_text() == "second"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_failure_leaves_old_content_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "out.bin"
    write_bytes_atomic(target, b"old")

    def broken_replace(*_args, **_kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("robodyn.atomic.os.replace", broken_replace)
    with pytest.raises(OSError):
        write_bytes_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_unwritable_location_is_input_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="cannot write"):
        write_text_atomic(blocker / "sub" / "out.txt", "x")
