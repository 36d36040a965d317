"""robodyn.textfile: bounded reads of text files and bounded parses of the JSON robodyn reads back."""

from __future__ import annotations

import pytest

from robodyn.textfile import JsonLimitError, parse_json_limited


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
