"""robodyn.base.textfile: bounded reads of text files and bounded parses of the JSON robodyn reads back."""

from __future__ import annotations

import pytest

from robodyn.base.textfile import JsonLimitError, parse_json_limited


def test_parse_json_limited_reads_what_robodyn_writes():
    assert parse_json_limited(b'{"a": [1, {"b": 2.5}], "c": null}') == {"a": [1, {"b": 2.5}], "c": None}
    assert parse_json_limited('[[[1]]]', depth=3) == [[[1]]]


@pytest.mark.parametrize(("data", "reason"), [
    (b"[" * 100_000, "nested more than"),  # the C parser's recursion limit: caught, not RecursionError
    (b"[" * 40 + b"]" * 40, "nested more than 32"),  # parses, but deeper than any record robodyn writes
    (b"[1, NaN]", "NaN is not a JSON number"),
    (b'{"r": Infinity}', "Infinity is not a JSON number"),
    (b"\xff\xfe", "not UTF-8"),
    (b"not json", "not JSON"),
    (b"", "not JSON"),
])
def test_parse_json_limited_refuses_with_the_reason(data, reason):
    with pytest.raises(JsonLimitError, match=reason):
        parse_json_limited(data)


def test_parse_json_limited_checks_the_size_before_parsing():
    with pytest.raises(JsonLimitError, match="more than the limit of 10"):
        parse_json_limited(b"[" + b"1," * 10 + b"1]", limit=10)
    with pytest.raises(JsonLimitError, match="nested more than 2"):
        parse_json_limited(b'{"a": {"b": []}}', depth=2)


def test_read_regular_refuses_links_fifos_folders_and_large_files(tmp_path):
    import os

    from robodyn.base.textfile import UnusableFile, read_regular

    good = tmp_path / "good"
    good.write_bytes(b"12345")
    assert read_regular(good, 5) == b"12345" and read_regular(tmp_path / "missing", 5) is None
    (tmp_path / "link").symlink_to(good)
    os.mkfifo(tmp_path / "fifo")  # opened without blocking, refused on its descriptor
    (tmp_path / "folder").mkdir()
    for name, reason in [("link", "symbolic link"), ("fifo", "a FIFO"), ("folder", "a folder")]:
        with pytest.raises(UnusableFile, match=reason):
            read_regular(tmp_path / name, 100)
    with pytest.raises(UnusableFile, match="5 bytes, larger than the limit of 4"):
        read_regular(good, 4)
    with pytest.raises(UnusableFile, match="not mine"):
        read_regular(good, 100, lambda info: "not mine")
