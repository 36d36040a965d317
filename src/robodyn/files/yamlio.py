"""Reading YAML safely, keeping the line of every value.

PyYAML's loaders silently keep the last of two duplicate keys, turn ``y``, ``n``, ``on`` and ``off``
into booleans (YAML 1.1), and expand aliases without limit. Model files need none of that: this module
composes the document into nodes with :func:`yaml.compose` (safe: no Python objects are built) and
converts the nodes itself —

- duplicate keys are an error naming both lines;
- only ``true``/``false`` are booleans; other words stay text, and so do YAML 1.1's octal (``010``) and
  base-60 (``1:30``) numbers, which a model file would not mean;
- aliases are refused (they make "billion laughs" documents possible);
- every value's line is recorded under its key path, so later errors can name ``file:line: key.path``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import yaml
import yaml.constructor

from robodyn.base.errors import ModelFileError
from robodyn.base.textfile import MAX_TEXT_BYTES

__all__ = ["Document", "Path", "read_yaml"]

MAX_FILE_BYTES: Final = MAX_TEXT_BYTES  # A model file is text written by hand; larger input is refused.
MAX_NODES: Final = 100_000
_MAX_DIGITS: Final = 309  # An integer with more digits is beyond double precision (1.8e308).
MAX_NESTING: Final = 50  # Lists and mappings nested deeper than this are refused (a model file needs ~4).

Path = tuple[str | int, ...]

_BOOLEANS: Final = {"true": True, "false": False}
_COLLECTION_TAGS: Final = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}
_LEGACY_NUMBER: Final = re.compile(r"[-+]?(0[0-7_]+|[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?)\Z")
_constructor = yaml.constructor.SafeConstructor()


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed YAML document: plain Python data plus the line of each key path."""

    source: str
    data: Any
    lines: dict[Path, int] = field(default_factory=dict)

    def where(self, path: Path) -> str:
        """``"file.yaml:7: dynamics.qd"`` for a key path (the nearest line known)."""
        line = None
        for end in range(len(path), -1, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                break
        location = f"{self.source}:{line}" if line is not None else self.source
        return f"{location}: {format_path(path)}" if path else location


def format_path(path: Path) -> str:
    """``("dynamics", "qd")`` -> ``dynamics.qd``; ``("mass", 0, 1)`` -> ``mass[0][1]``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


class _Converter:
    def __init__(self, source: str):
        self.source = source
        self.lines: dict[Path, int] = {}
        self.count = 0
        self.seen: set[int] = set()

    def fail(self, node: yaml.Node, message: str) -> ModelFileError:
        return ModelFileError(f"{self.source}:{node.start_mark.line + 1}: {message}")

    def convert(self, node: yaml.Node, path: Path) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(node, f"document has more than {MAX_NODES} values")
        if len(path) > MAX_NESTING:
            raise self.fail(node, f"lists and mappings nested deeper than {MAX_NESTING} levels: is it a model file?")
        if id(node) in self.seen:
            raise self.fail(node, "YAML anchors and aliases are not supported: write the value out")
        self.seen.add(id(node))
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode) and node.tag not in _COLLECTION_TAGS:
            raise self.fail(node, f"unsupported YAML tag {_short(node.tag)!r}: use plain lists and mappings")
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, (*path, i)) for i, item in enumerate(node.value)]
        assert isinstance(node, yaml.ScalarNode)
        return self.scalar(node)

    def mapping(self, node: yaml.MappingNode, path: Path) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.fail(key_node, "keys must be plain names, not lists or mappings")
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise self.fail(key_node, "YAML merge keys ('<<') are not supported: write the keys out")
            key = str(key_node.value)
            if key in result:
                raise self.fail(key_node, f"duplicate key {key!r} (first on line {first_line[key]}): keep one")
            first_line[key] = key_node.start_mark.line + 1
            result[key] = self.convert(value_node, (*path, key))
            self.lines[(*path, key)] = first_line[key]  # a block value starts below its key: point at the key
        return result

    def scalar(self, node: yaml.ScalarNode) -> Any:
        tag = node.tag
        if tag == "tag:yaml.org,2002:bool":
            return _BOOLEANS.get(node.value.lower(), node.value)
        if tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float") and _LEGACY_NUMBER.match(node.value):
            return node.value  # YAML 1.1 octal (010 = 8) and base 60 (1:30 = 90) surprise: keep the text
        if tag == "tag:yaml.org,2002:int":
            digits = sum(c.isdigit() for c in node.value)
            if digits > _MAX_DIGITS:
                raise self.fail(node, f"an integer of {digits} digits: numbers must fit in double precision "
                                      "(write 1e300, not 1000...0)")
            return _constructor.construct_yaml_int(node)
        if tag == "tag:yaml.org,2002:float":
            return _constructor.construct_yaml_float(node)
        if tag == "tag:yaml.org,2002:null":
            return None
        if tag == "tag:yaml.org,2002:str":
            return node.value
        raise self.fail(node, f"unsupported YAML type {_short(tag)!r}: use numbers, text, lists and mappings")


def _short(tag: str) -> str:
    """``tag:yaml.org,2002:set`` -> ``!!set`` (as it was written)."""
    return tag.replace("tag:yaml.org,2002:", "!!")


def read_yaml(text: str, source: str) -> Document:
    """Parse YAML text into a :class:`Document` (data and line numbers).

    Raises
    ------
    ModelFileError
        Invalid YAML, duplicate keys, aliases, tags, more than one document, or text over 1 MB.
    """
    if len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
        raise ModelFileError(f"{source}: file larger than {MAX_FILE_BYTES} bytes: is it a model file?")
    try:
        nodes = list(_compose_all(text))
    except RecursionError:
        raise ModelFileError(f"{source}: lists and mappings nested too deeply (more than {MAX_NESTING} levels): "
                             "is it a model file?") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ModelFileError(f"{source}{line}: invalid YAML: {problem}") from None
    if not nodes:
        raise ModelFileError(f"{source}: file is empty: a model file needs at least 'kind' and its equations")
    if len(nodes) > 1:
        raise ModelFileError(f"{source}: file holds {len(nodes)} YAML documents: keep one model per file")
    converter = _Converter(source)
    data = converter.convert(nodes[0], ())
    return Document(source, data, converter.lines)


def _compose_all(text: str) -> Iterator[yaml.Node]:
    loader = yaml.SafeLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                yield node
    finally:
        loader.dispose()
