"""Reading an MJCF file: the XML with its lines, ``<include>`` expanded, and the ``<default>`` classes.

The XML is parsed by :mod:`xml.parsers.expat` with a document type declaration refused (so no entity is ever defined
or expanded and no other file is read by the parser); each file is read within :data:`MAX_MJCF_BYTES` from a regular
file, nesting is limited to :data:`MAX_DEPTH` elements and a model to :data:`MAX_ELEMENTS`. ``<include file=...>``
names a file inside the main model's folder (as MuJoCo resolves it), whose ``<mujoco>`` children replace the include
element; a file that includes itself (directly or not) or one outside the folder is refused, naming the line.

Default classes follow MuJoCo's rules: the top ``<default>`` is the class ``main``; a nested ``<default class=...>``
starts from its parent's values; an element takes its own ``class``, else the ``childclass`` of its nearest body that
has one, else ``main``; its own attributes override the class's. The actuator shortcuts (``<motor>``, ``<general>``,
...) share one set of actuator defaults per class.

Reference: MuJoCo XML reference, mujoco.readthedocs.io/en/stable/XMLreference.html (include, default).
"""

from __future__ import annotations

import os
import xml.parsers.expat as expat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from robodyn.base.errors import ModelFileError
from robodyn.base.textfile import read_text_limited
from robodyn.mechanisms.mjcf.schema import ACTUATORS, ATTRIBUTES

__all__ = ["MAX_DEPTH", "MAX_ELEMENTS", "MAX_INCLUDES", "MAX_MJCF_BYTES", "Classes", "Node", "check_attributes",
           "class_table", "default_key", "is_mjcf_text", "read_mjcf"]

MAX_MJCF_BYTES: Final = 10_000_000  # One file: the largest published models (dog, Menagerie humanoids) are < 1 MB.
MAX_DEPTH: Final = 128  # Nested elements: a body tree 100 deep is already far beyond any robot.
MAX_ELEMENTS: Final = 500_000  # Elements of a model with its includes: the dog model has ~2,000.
MAX_INCLUDES: Final = 200  # <include> elements expanded for one model.


@dataclass(slots=True)
class Node:
    """One XML element: its tag, attributes, children, and where it is written (file and line)."""

    tag: str
    attrib: dict[str, str]
    file: str
    line: int
    children: list[Node] = field(default_factory=list)

    @property
    def where(self) -> str:
        """``file:line`` of the element, for messages."""
        return f"{self.file}:{self.line}"

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.attrib.get(key, default)

    def iter(self, tag: str) -> Iterator[Node]:
        """This element and its descendants with ``tag``, in document order."""
        if self.tag == tag:
            yield self
        for child in self.children:
            yield from child.iter(tag)


def is_mjcf_text(text: str) -> bool:
    """Whether XML text's root element is ``<mujoco>`` (comments and a declaration may come first)."""
    start = 0
    while True:
        start = text.find("<", start)
        if start < 0:
            return False
        if text.startswith("<!DOCTYPE", start):  # skipped: the reader refuses it, naming it
            bracket, close = text.find("[", start), text.find(">", start)
            end = text.find("]>", start) + 1 if 0 <= bracket < close else close
            if end <= 0:
                return False
            start = end + 1
            continue
        if text.startswith(("<?", "<!--"), start):
            end = text.find("?>" if text.startswith("<?", start) else "-->", start)
            if end < 0:
                return False
            start = end + 2
            continue
        rest = text[start + 1:start + 8]
        return rest.startswith("mujoco") and (len(rest) == 6 or not (rest[6].isalnum() or rest[6] in "_-.:"))


def _parse(text: str, where: str) -> Node:
    """The root element of XML ``text`` (``where`` names the file); DTDs refused, depth and size limited."""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise ModelFileError(f"{where}: declares a DTD or entities: robodyn does not expand them; remove the "
                             "<!DOCTYPE ...> block")
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack: list[Node] = []
    roots: list[Node] = []
    count = [0]

    def start(tag: str, attrib: dict[str, str]) -> None:
        node = Node(tag, dict(attrib), where, parser.CurrentLineNumber)
        count[0] += 1
        if len(stack) >= MAX_DEPTH or count[0] > MAX_ELEMENTS:
            what = f"nests elements deeper than {MAX_DEPTH}" if len(stack) >= MAX_DEPTH else \
                f"has more than {MAX_ELEMENTS} elements"
            raise ModelFileError(f"{where}:{node.line}: the file {what}: robodyn reads no model this large")
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)

    def refuse(*_: object) -> None:
        raise ModelFileError(f"{where}:{parser.CurrentLineNumber}: declares a DTD or entities: robodyn does not "
                             "expand them; remove the <!DOCTYPE ...> block")

    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: stack.pop()
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise ModelFileError(f"{where}:{exc.lineno}:{exc.offset}: malformed XML: {expat.ErrorString(exc.code)}"
                             ) from None
    return roots[0]


def read_mjcf(path: str | os.PathLike[str]) -> Node:
    """The ``<mujoco>`` element of an MJCF file with every ``<include>`` expanded (see the module docstring)."""
    file = Path(path)
    root = _read(file, str(file))
    if root.tag != "mujoco":
        raise ModelFileError(f"{file}: the root element is <{root.tag}>, expected <mujoco>: not an MJCF file")
    folder = file.resolve().parent
    _expand(root, folder, (str(file.resolve()),), [0])
    return root


def _read(file: Path, shown: str) -> Node:
    return _parse(read_text_limited(file, "MJCF file", limit=MAX_MJCF_BYTES, error=ModelFileError), shown)


def _expand(node: Node, folder: Path, stack: tuple[str, ...], count: list[int]) -> None:
    """Replace each ``<include>`` below ``node`` by the children of the file's ``<mujoco>`` (in place)."""
    expanded: list[Node] = []
    for child in node.children:
        if child.tag != "include":
            _expand(child, folder, stack, count)
            expanded.append(child)
            continue
        count[0] += 1
        name = child.get("file")
        unknown = sorted(set(child.attrib) - {"file"})
        if not name or unknown or child.children:
            raise ModelFileError(f"{child.where}: <include> takes one attribute, file=\"<a file in the model's "
                                 "folder>\", and no content")
        if count[0] > MAX_INCLUDES:
            raise ModelFileError(f"{child.where}: more than {MAX_INCLUDES} includes: robodyn reads no model this large")
        target = (folder / name).resolve()
        if not target.is_relative_to(folder):
            raise ModelFileError(f"{child.where}: <include file={name!r}> leaves the model's folder {folder}: "
                                 "copy the file into it")
        if str(target) in stack:
            raise ModelFileError(f"{child.where}: <include file={name!r}> includes a file that includes it (a "
                                 "loop): remove one of the includes")
        included = _read(target, os.path.relpath(target, folder))
        if included.tag != "mujoco":
            raise ModelFileError(f"{included.where}: an included file's root element is <{included.tag}>, "
                                 "expected <mujoco>")
        _expand(included, folder, (*stack, str(target)), count)
        expanded += included.children
    node.children = expanded


def default_key(tag: str) -> str:
    """The default set an element takes its class's values from (the actuator shortcuts share one)."""
    return "actuator" if tag in ACTUATORS else tag


Classes = Mapping[str, Mapping[str, Mapping[str, str]]]  # class -> default key -> attribute -> value


def class_table(root: Node) -> dict[str, dict[str, dict[str, str]]]:
    """The default classes of a model: class name -> element key (:func:`default_key`) -> attribute -> value,
    each class with its parents' values filled in (``main``: the top ``<default>`` elements, merged)."""
    classes: dict[str, dict[str, dict[str, str]]] = {"main": {}}
    lines: dict[str, str] = {}

    def visit(node: Node, name: str, inherited: dict[str, dict[str, str]]) -> None:
        values = {key: dict(attrs) for key, attrs in inherited.items()}
        for child in node.children:
            if child.tag != "default":
                key = default_key(child.tag)
                values[key] = {**values.get(key, {}), **child.attrib}
        classes[name] = values
        for child in node.children:
            if child.tag == "default":
                label = child.get("class")
                if not label:
                    raise ModelFileError(f"{child.where}: a nested <default> needs class=\"<name>\"")
                if label in classes:
                    raise ModelFileError(f"{child.where}: default class {label!r} is defined twice (first at "
                                         f"{lines.get(label, 'the top <default>')}): give each class its own name")
                lines[label] = child.where
                visit(child, label, values)

    tops = [node for node in root.children if node.tag == "default"]
    for top in tops:  # several top <default> sections (the main file's and its includes') add to class main
        if top.get("class") not in (None, "main"):
            raise ModelFileError(f"{top.where}: the top <default> is class 'main': remove class="
                                 f"{top.get('class')!r} or nest it in the top <default>")
        visit(top, "main", classes["main"])
    return classes


def check_attributes(node: Node, key: str | None = None) -> None:
    """ModelFileError naming ``node``'s attributes that MuJoCo's element ``key`` (default: its tag) does not take."""
    allowed = ATTRIBUTES[key or node.tag]
    unknown = sorted(set(node.attrib) - allowed)
    if unknown:
        raise ModelFileError(f"{node.where}: <{node.tag}> has unknown attribute{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(unknown)}: MuJoCo's <{node.tag}> takes {', '.join(sorted(allowed))}")
