"""Reading YAML safely, with the line of every value (robodyn.files.yamlio)."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import time

import pytest

from robodyn.base.errors import InputError, ModelFileError
from robodyn.files import yamlio
from robodyn.files.yamlio import Document, read_yaml


def test_plain_document_is_read_with_lines():
    doc = read_yaml("name: joint\nkind: first_order\nstates: [q, qd]\n", "joint.yaml")
    assert isinstance(doc, Document)
    assert doc.data == {"name": "joint", "kind": "first_order", "states": ["q", "qd"]}
    assert doc.source == "joint.yaml"
    assert doc.lines[("kind",)] == 2
    assert doc.lines[("states", 1)] == 3


@pytest.mark.parametrize(
    ("text", "line", "first", "key"),
    [
        ("a: 1\nb: 2\na: 3\n", 3, 1, "a"),
        ("dynamics:\n  q: 1\n  qd: 2\n  q: 3\n", 4, 2, "q"),
        ("x: {k: 1, k: 2}\n", 1, 1, "k"),
        ("outer:\n  inner:\n    z: 1\n\n\n    z: 2\n", 6, 3, "z"),
        ("1: a\n'1': b\n", 2, 1, "1"),
    ],
)
def test_duplicate_keys_are_rejected_with_both_lines(text, line, first, key):
    with pytest.raises(ModelFileError, match=rf"^m\.yaml:{line}: duplicate key '{key}' \(first on line {first}\)"):
        read_yaml(text, "m.yaml")


def test_yaml_1_1_boolean_words_stay_text():
    text = "y: n\non: off\nyes: no\nY: N\nOn: OFF\nlist: [y, n, on, off, yes, no, Yes, NO, Y, N]\n"
    data = read_yaml(text, "m.yaml").data
    assert data == {
        "y": "n", "on": "off", "yes": "no", "Y": "N", "On": "OFF",
        "list": ["y", "n", "on", "off", "yes", "no", "Yes", "NO", "Y", "N"],
    }
    assert all(isinstance(key, str) for key in data)


def test_true_and_false_are_booleans():
    data = read_yaml("a: true\nb: false\nc: [True, FALSE]\n", "m.yaml").data
    assert data == {"a": True, "b": False, "c": [True, False]}
    assert data["a"] is True and data["b"] is False


def test_numbers_null_and_text():
    data = read_yaml("i: 3\nf: 0.25\ng: -1.5e+3\nn: ~\ns: (u - b*qd)/J\nq: '3'\nh: 1e-3\n", "m.yaml").data
    # YAML 1.1 floats need a dot: 1e-3 stays text (model files parse it later as an expression)
    assert data == {"i": 3, "f": 0.25, "g": -1500.0, "n": None, "s": "(u - b*qd)/J", "q": "3", "h": "1e-3"}
    assert isinstance(data["i"], int) and isinstance(data["f"], float) and isinstance(data["q"], str)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",
        "a: &x [1, 2]\nb: *x\n",
        "a: &x {k: 1}\nb: *x\n",
        "a: &x 1\nb: [*x, *x]\n",
    ],
)
def test_aliases_are_rejected(text):
    with pytest.raises(ModelFileError, match=r"^m\.yaml:\d+: YAML anchors and aliases are not supported"):
        read_yaml(text, "m.yaml")


def _billion_laughs(levels: int = 9) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    names = "abcdefghijklmnopqrstuvwxyz"
    for prev, name in itertools.pairwise(names[:levels]):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_fails_fast():
    start = time.perf_counter()
    with pytest.raises(ModelFileError, match=r"^lol\.yaml:\d+: YAML anchors and aliases are not supported"):
        read_yaml(_billion_laughs(), "lol.yaml")
    assert time.perf_counter() - start < 1.0


def test_billion_laughs_without_a_top_level_mapping_fails_fast():
    text = "- &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"- &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcdefgh", "bcdefghi")
    )
    start = time.perf_counter()
    with pytest.raises(ModelFileError, match="aliases are not supported"):
        read_yaml(text, "lol.yaml")
    assert time.perf_counter() - start < 1.0


def test_merge_keys_are_rejected():
    text = "base: {a: 1}\nx:\n  <<: {a: 2}\n  b: 3\n"
    with pytest.raises(ModelFileError, match=r"^m\.yaml:3: YAML merge keys \('<<'\) are not supported"):
        read_yaml(text, "m.yaml")


@pytest.fixture
def no_execution(monkeypatch):
    calls: list[str] = []

    def trap(name):
        def trapped(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"{name} called while reading YAML")

        return trapped

    monkeypatch.setattr(os, "system", trap("os.system"))
    monkeypatch.setattr(subprocess, "Popen", trap("subprocess.Popen"))
    return calls


TAGGED = [
    "a: !!python/object/apply:os.system ['touch {file}']\n",
    "!!python/object/apply:os.system ['touch {file}']\n",
    "a: !!python/object/apply:os.system {{args: ['touch {file}']}}\n",
    "a: !!python/object/new:subprocess.Popen [['touch', '{file}']]\n",
    "a: !!python/name:os.system\n",
    "a: !!python/object:builtins.object {{}}\n",
    "a: !custom [1, 2]\n",
    "a: !custom {{k: 1}}\n",
    "a: !custom 1\n",
    "a: !!binary aGVsbG8=\n",
    "a: !!set {{x: null}}\n",
    "a: !!omap [{{x: 1}}]\n",
    "a: 2001-12-14\n",
]


@pytest.mark.parametrize("template", TAGGED)
def test_tags_never_execute(template, no_execution, tmp_path):
    target = tmp_path / "pwned"
    try:
        read_yaml(template.format(file=target), "m.yaml")
    except ModelFileError:
        pass
    assert not target.exists()
    assert no_execution == []


@pytest.mark.parametrize(
    "template",
    [
        "a: !!python/name:os.system\n",
        "a: !custom 1\n",
        "a: !!binary aGVsbG8=\n",
        "a: 2001-12-14\n",
        "a: !!python/str hi\n",
    ],
)
def test_scalar_tags_are_rejected(template, no_execution):
    with pytest.raises(ModelFileError, match=r"^m\.yaml:1: unsupported YAML type '.+': use numbers, text, lists"):
        read_yaml(template, "m.yaml")


@pytest.mark.parametrize(
    "text",
    [
        "a: !!python/object/apply:os.system ['echo hi']\n",
        "!!python/object/apply:os.system ['echo hi']\n",
        "a: !!python/object/apply:os.system {args: ['echo hi']}\n",
        "a: !custom [1, 2]\n",
        "a: !!set {x: null}\n",
        "a: !!omap [{x: 1}]\n",
    ],
)
def test_collection_tags_are_rejected(text, no_execution):
    with pytest.raises(ModelFileError, match=r"^m\.yaml:1: unsupported YAML (type|tag) '!"):
        read_yaml(text, "m.yaml")
    assert no_execution == []


@pytest.mark.parametrize("text", ["a: 1\n---\nb: 2\n", "---\na: 1\n---\na: 1\n", "a: 1\n...\n---\nb: 2\n"])
def test_multiple_documents_are_rejected(text):
    with pytest.raises(ModelFileError, match=r"^m\.yaml: file holds 2 YAML documents: keep one model per file"):
        read_yaml(text, "m.yaml")


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "\n# a\n\n# b\n"])
def test_empty_file_is_rejected(text):
    with pytest.raises(ModelFileError, match=r"^m\.yaml: file is empty"):
        read_yaml(text, "m.yaml")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: 1\nb: [1, 2\nc: 3\n", 3),
        ("a: 1\n  b: 2\n", 2),
        ("a:\n\t- 1\n", 2),
        ("a: 1\nb: 'open\n", 3),
        ("a: {x: 1\n", 2),
    ],
)
def test_invalid_yaml_reports_a_line(text, line):
    with pytest.raises(ModelFileError, match=rf"^m\.yaml:{line}: invalid YAML: \S"):
        read_yaml(text, "m.yaml")


def test_non_scalar_keys_are_rejected():
    with pytest.raises(ModelFileError, match=r"^m\.yaml:1: keys must be plain names"):
        read_yaml("? [a, b]\n: 1\n", "m.yaml")


def test_oversized_text_is_rejected_without_parsing():
    text = "a: " + "x" * 1_000_001 + "\n"
    start = time.perf_counter()
    with pytest.raises(ModelFileError, match=r"^big\.yaml: file larger than 1000000 bytes"):
        read_yaml(text, "big.yaml")
    assert time.perf_counter() - start < 1.0


def test_too_many_values_are_rejected(monkeypatch):
    assert yamlio.MAX_NODES == 100_000
    monkeypatch.setattr(yamlio, "MAX_NODES", 50)
    read_yaml("a: [" + ", ".join(["1"] * 48) + "]\n", "m.yaml")  # 50 values with the mapping and the list
    text = "a:\n  - [" + ", ".join(["1"] * 48) + "]\n"
    with pytest.raises(ModelFileError, match=r"^m\.yaml:2: document has more than 50 values"):
        read_yaml(text, "m.yaml")


def test_errors_are_input_errors():
    assert issubclass(ModelFileError, InputError)
    with pytest.raises(InputError):
        read_yaml("a: 1\na: 2\n", "m.yaml")


JOINT = """\
name: joint
kind: first_order
parameters: {J: 0.01, b: 0.1, k: 1.0}
states: [q, qd]
inputs: [u]
dynamics:
  q: qd
  qd: (u - b*qd - k*q)/J
mass:
  - [J, 0]
  - [0, J]
"""


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (("dynamics", "qd"), "joint.yaml:8: dynamics.qd"),
        (("dynamics", "q"), "joint.yaml:7: dynamics.q"),
        (("parameters", "b"), "joint.yaml:3: parameters.b"),
        (("states", 1), "joint.yaml:4: states[1]"),
        (("kind",), "joint.yaml:2: kind"),
        (("mass", 1, 1), "joint.yaml:11: mass[1][1]"),
        (("mass", 1), "joint.yaml:11: mass[1]"),
        (("dynamics", "nope"), "joint.yaml:6: dynamics.nope"),  # nearest known line: the key dynamics
        ((), "joint.yaml:1"),
    ],
)
def test_where_gives_file_line_and_key_path(path, expected):
    doc = read_yaml(JOINT, "joint.yaml")
    assert doc.where(path) == expected


def test_where_without_any_known_line_names_the_file():
    doc = Document("catalog:mbk", {"a": 1})
    assert doc.where(()) == "catalog:mbk"
    assert doc.where(("mass", 0, 1)) == "catalog:mbk: mass[0][1]"


def test_block_scalar_text_is_kept():
    text = "kinetic: >\n  m*x_dot**2/2\n  + m*y_dot**2/2\n"
    data = read_yaml(text, "m.yaml").data
    assert re.fullmatch(r"m\*x_dot\*\*2/2\s+\+ m\*y_dot\*\*2/2\s*", data["kinetic"])


@pytest.mark.parametrize("text", ["010", "-0755", "1:30", "1:30:00.5"])
def test_yaml11_octal_and_base60_numbers_stay_text(text):
    """YAML 1.1 reads 010 as 8 and 1:30 as 90; a model file never means that, so the text is kept
    (and then refused as a parameter value by the expression parser)."""
    assert read_yaml(f"k: {text}\n", "m.yaml").data == {"k": text}


def test_block_value_points_at_its_key_line():
    doc = read_yaml("kind: first_order\ndynamics:\n  x: 1\n", "m.yaml")
    assert doc.where(("dynamics",)) == "m.yaml:2: dynamics"
    assert doc.where(("dynamics", "x")) == "m.yaml:3: dynamics.x"
