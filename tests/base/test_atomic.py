"""Atomic writes: complete file or nothing."""

from __future__ import annotations

import errno
import os
import stat

import pytest

from robodyn.base.atomic import write_bytes_atomic, write_text_atomic
from robodyn.base.errors import InputError


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

    monkeypatch.setattr("robodyn.base.atomic.os.replace", broken_replace)
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
    from robodyn.base.atomic import path_component

    assert path_component(name) == component
    assert "/" not in component and component not in (".", "..")


def test_check_output_folder_refuses_what_cannot_hold_outputs(tmp_path):
    from robodyn.base.atomic import check_output_folder

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
    from robodyn.base.atomic import check_output_path

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

    from robodyn.base import atomic

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
    from robodyn.base.atomic import rename_aside

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


# --- a set of files as one operation; modes, owners and links kept (issue 45, items 4 and 5) -------------------
def _old_files(folder, names):
    """``names`` written into ``folder`` with distinct old contents: {path: bytes}."""
    found = {}
    for name in names:
        path = folder / name
        path.write_bytes(f"old {name}\n".encode())
        found[path] = path.read_bytes()
    return found


def _only(folder, names):
    """The folder holds exactly ``names``: no temporary file (.x.tmp), no backup (.x.old) is left behind."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)


def test_a_folder_in_one_targets_place_refuses_the_set_before_anything_is_written(tmp_path):
    """Defect: export wrote P.h, then failed on P.c (a folder): a new header beside an old source."""
    from robodyn.base.atomic import write_files_atomic

    old = _old_files(tmp_path, ["P.h"])
    (tmp_path / "P.c").mkdir()
    with pytest.raises(InputError, match=r"P\.c is a folder"):
        write_files_atomic({tmp_path / "P.h": "new header", tmp_path / "P.c": "new source",
                            tmp_path / "Makefile": "new"}, "export: cannot write")
    assert {p: p.read_bytes() for p in old} == old
    _only(tmp_path, ["P.h", "P.c"])


def test_a_full_disk_fails_before_any_target_is_replaced(tmp_path, monkeypatch):
    """The second file's write runs out of space: the first (already written to its temporary file) is not
    renamed into place, both old files are byte-identical and the temporary files are gone."""
    from robodyn.base import atomic

    old = _old_files(tmp_path, ["a.csv", "b.png"])
    real_write = atomic.os.write
    calls = []

    def full(fd, data):
        calls.append(fd)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(atomic.os, "write", full)
    with pytest.raises(InputError) as caught:
        atomic.write_files_atomic({tmp_path / "a.csv": "t,x\n0,1\n", tmp_path / "b.png": b"\x89PNG new"})
    assert str(caught.value) == f"cannot write {tmp_path / 'b.png'}: No space left on device: free some space or " \
                                "write elsewhere"
    assert {p: p.read_bytes() for p in old} == old
    _only(tmp_path, ["a.csv", "b.png"])


def test_a_rename_that_fails_puts_back_the_files_already_replaced(tmp_path, monkeypatch):
    from robodyn.base import atomic

    old = _old_files(tmp_path, ["one", "two", "three"])
    real_replace = atomic.os.replace
    renamed = []

    def flaky(source, target):
        if str(target).endswith("three") and str(source).endswith(".tmp"):
            raise OSError(errno.EIO, "Input/output error")
        renamed.append(target)
        return real_replace(source, target)

    monkeypatch.setattr(atomic.os, "replace", flaky)
    with pytest.raises(InputError, match=r"three: Input/output error"):
        atomic.write_files_atomic({path: b"new" for path in old})
    assert len(renamed) >= 2  # two were replaced, then put back
    assert {p: p.read_bytes() for p in old} == old
    _only(tmp_path, ["one", "two", "three"])


def test_a_read_only_target_is_refused_and_kept(tmp_path):
    """Defect: identify --write-model replaced a 0444 model file."""
    from robodyn.base.atomic import check_output_path, write_files_atomic

    target = tmp_path / "model.yaml"
    target.write_text("old")
    target.chmod(0o444)
    message = f"--write-model {target} is read-only: make it writable (chmod u+w) or write elsewhere"
    for call in (lambda: check_output_path(target, "--write-model"),
                 lambda: write_files_atomic({target: "new"}, "--write-model")):
        with pytest.raises(InputError) as caught:
            call()
        assert str(caught.value) == message
    assert target.read_text() == "old" and stat.S_IMODE(target.stat().st_mode) == 0o444


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755, 0o604])
def test_a_replaced_file_keeps_its_permissions(tmp_path, mode):
    """Defect: a 0600 model file became 0644."""
    target = tmp_path / "model.yaml"
    target.write_text("old")
    target.chmod(mode)
    write_text_atomic(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == mode


def test_a_new_file_gets_the_umask_as_open_would(tmp_path):
    previous = os.umask(0o077)
    try:
        write_text_atomic(tmp_path / "private.csv", "x")
        with open(tmp_path / "reference.csv", "w") as handle:  # what open() makes under the same umask
            handle.write("x")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "private.csv").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "reference.csv").stat().st_mode) == 0o600


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_a_replaced_file_keeps_its_owner_and_group(tmp_path):
    target = tmp_path / "shared.yaml"
    target.write_text("old")
    os.chown(target, 65534, 65534)
    write_text_atomic(target, "new")
    info = target.stat()
    assert (info.st_uid, info.st_gid, target.read_text()) == (65534, 65534, "new")


def test_a_link_is_written_through_and_stays_a_link(tmp_path):
    """Defect: a symlinked model file was replaced by a regular file; the linked model kept its old values."""
    elsewhere = tmp_path / "models"
    elsewhere.mkdir()
    real = elsewhere / "arm.yaml"
    real.write_text("old")
    real.chmod(0o600)
    work = tmp_path / "work"
    work.mkdir()
    link = work / "arm.yaml"
    link.symlink_to(os.path.relpath(real, work))
    write_text_atomic(link, "new")
    assert link.is_symlink() and os.readlink(link) == os.path.relpath(real, work)
    assert real.read_text() == "new" and stat.S_IMODE(real.stat().st_mode) == 0o600
    _only(work, ["arm.yaml"])
    _only(elsewhere, ["arm.yaml"])  # the temporary file was made beside the target, and renamed


def test_two_names_for_one_file_are_refused(tmp_path):
    from robodyn.base.atomic import write_files_atomic

    real = tmp_path / "a.csv"
    real.write_text("old")
    (tmp_path / "b.csv").symlink_to(real)
    with pytest.raises(InputError, match=r"are the same file"):
        write_files_atomic({real: "1", tmp_path / "b.csv": "2"})
    assert real.read_text() == "old"


def test_a_writer_function_gets_a_temporary_path_with_the_targets_suffix(tmp_path):
    from robodyn.base.atomic import write_files_atomic

    seen = []

    def writer(path):
        seen.append(path)
        with open(path, "wb") as handle:
            handle.write(b"GIF89a")

    write_files_atomic({tmp_path / "swing.gif": writer})
    assert seen[0].endswith(".gif") and os.path.dirname(seen[0]) == str(tmp_path)
    assert (tmp_path / "swing.gif").read_bytes() == b"GIF89a"
    _only(tmp_path, ["swing.gif"])

    def broken(path):
        raise RuntimeError("the renderer failed")

    with pytest.raises(RuntimeError):
        write_files_atomic({tmp_path / "swing.gif": broken})
    assert (tmp_path / "swing.gif").read_bytes() == b"GIF89a"
    _only(tmp_path, ["swing.gif"])


def test_robodyns_own_files_replace_a_link_instead_of_following_it(tmp_path):
    """The cache (mode given) never writes through a link planted in its folder."""
    victim = tmp_path / "victim"
    victim.write_text("kept")
    planted = tmp_path / "entry.json"
    planted.symlink_to(victim)
    write_bytes_atomic(planted, b"{}", mode=0o644)
    assert not planted.is_symlink() and planted.read_bytes() == b"{}" and victim.read_text() == "kept"
    assert stat.S_IMODE(planted.stat().st_mode) == 0o644
