"""Atomic writes: complete file or nothing."""

from __future__ import annotations

import errno

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
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr("robodyn.atomic.os.replace", broken_replace)
    with pytest.raises(InputError, match=r"out\.bin: Input/output error"):  # robodyn's error, naming the file
        write_bytes_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_unwritable_location_is_input_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="cannot write"):
        write_text_atomic(blocker / "sub" / "out.txt", "x")


# --- output paths derived from names, and checked before any work (issue 22) -------------------------------
@pytest.mark.parametrize(("name", "component"), [
    ("..", "model"), ("../../x", "x"), ("/etc/passwd", "etc_passwd"), (".hidden", "hidden"), ("", "model"),
    ("pendulum", "pendulum"), ("arm v2 (test)", "arm_v2_test_"), ("-rf", "rf"), ("a/../b", "a_.._b"),
    ("x" * 500, "x" * 100),
])
def test_path_component_is_one_safe_name(name, component):
    from robodyn.atomic import path_component

    assert path_component(name) == component
    assert "/" not in component and component not in (".", "..")


def test_check_output_folder_refuses_what_cannot_hold_outputs(tmp_path):
    from robodyn.atomic import check_output_folder

    afile = tmp_path / "file"
    afile.write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for path, reason in [(afile, "is a file"), (afile / "sub", "is not a folder"), ("/dev/null", "device"),
                         ("/proc/robodyn-x", "cannot write in /proc"), (tmp_path / "dangling", "link to nothing"),
                         ("", "empty")]:
        with pytest.raises(InputError, match=reason):
            check_output_folder(path, "--out")
    assert check_output_folder(tmp_path / "new" / "deeper", "--out") == tmp_path / "new" / "deeper"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "file"]  # the probe left nothing


def test_check_output_path_refuses_devices_and_dangling_links(tmp_path):
    from robodyn.atomic import check_output_path

    (tmp_path / "dangling.csv").symlink_to(tmp_path / "nowhere.csv")
    for path, reason in [("/dev/null", "device"), (tmp_path / "dangling.csv", "link to nothing"),
                         ("/proc/x.csv", "cannot write in /proc"), ("", "empty")]:
        with pytest.raises(InputError, match=reason):
            check_output_path(path, "--out")
    with pytest.raises(InputError, match="device"):  # never replaced by a regular file, even as root
        write_text_atomic("/dev/null", "x")


def test_a_taken_temporary_name_is_skipped_and_nothing_is_left(tmp_path, monkeypatch):
    """The temporary file is created exclusively (O_EXCL): a name that exists is never reused or overwritten."""
    import os

    from robodyn import atomic

    names = iter([b"\x00" * 6, b"\x00" * 6, b"\x01" * 6])
    monkeypatch.setattr(atomic.os, "urandom", lambda k: next(names))
    taken = tmp_path / f".out.csv.{'00' * 6}.tmp"
    taken.write_text("someone else's")
    atomic.write_text_atomic(tmp_path / "out.csv", "t,x\n")
    assert (tmp_path / "out.csv").read_text() == "t,x\n"
    assert taken.read_text() == "someone else's"
    assert sorted(os.listdir(tmp_path)) == sorted([taken.name, "out.csv"])


def test_rename_aside_keeps_an_earlier_broken_copy_and_moves_a_link_itself(tmp_path):
    """Two damaged entries in the same second: the second gets .1, neither is overwritten; a link is renamed, its
    target untouched; a path that is gone gives None."""
    from robodyn.atomic import rename_aside

    first = tmp_path / "entry"
    first.write_text("one")
    moved = rename_aside(first)
    first.write_text("two")
    again = rename_aside(first)
    assert moved is not None and again is not None and moved != again
    assert {moved.read_text(), again.read_text()} == {"one", "two"} and not first.exists()
    target = tmp_path / "target"
    target.write_text("kept")
    link = tmp_path / "link"
    link.symlink_to(target)
    aside = rename_aside(link)
    assert aside is not None and aside.is_symlink() and target.read_text() == "kept"
    assert rename_aside(tmp_path / "missing") is None
