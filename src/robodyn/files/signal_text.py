"""Text forms of input signals: ``--input u=SIGNAL`` values and CSV tables.

The text is never given to ``eval``, ``exec``, ``sympify`` or ``parse_expr``. ``table(...)`` calls are
cut out first (a path is not an expression) and replaced by placeholder names; the rest is parsed by
:func:`ast.parse` and walked with a whitelist. Sub-expressions without a signal in them are constants
and go to :func:`robodyn.model.quantities.parse_number` (numbers, ``pi``, ``e``, ``+ - * / **``, ``sqrt`` ...).

Grammar (whitespace is free)::

    signal   := number | call | signal (+|-) signal | number * signal | signal * number
              | signal / number | -signal | (signal)
    call     := step(t0, before, after)
              | ramp(t0, slope[, initial])
              | sine(amplitude, frequency[, phase[, offset]])      frequency in Hz, phase in rad
              | pulse(t0, width, amplitude[, base[, period]])
              | table(PATH[, linear | zoh][, column=NAME])         PATH may be quoted
              | white_noise(std, sample, seed[, mean])              held per sample, seeded (WhiteNoise)
"""

from __future__ import annotations

import ast
import difflib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from robodyn.base.errors import ExpressionError, InputError, UnknownNameError
from robodyn.base.names import MAX_DEPTH, MAX_LENGTH
from robodyn.model.quantities import parse_number
from robodyn.signals.core import Constant, Pulse, Ramp, Signal, Sine, Step, Table
from robodyn.signals.noise import WhiteNoise
from robodyn.signals.tables import read_table_csv

__all__ = ["SIGNAL_FUNCTIONS", "parse_input_assignments", "parse_signal", "read_table_csv"]


def _pulse(t0: float, width: float, amplitude: float, base: float = 0.0, period: float | None = None) -> Signal:
    return Pulse(t0, width, amplitude, base, period)


def _white_noise(std: float, sample: float, seed: float, mean: float = 0.0) -> Signal:
    return WhiteNoise(std, sample, seed, mean)  # the seed read as a number: WhiteNoise refuses one not whole


# name -> (constructor, fewest and most arguments, the form shown in error messages)
SIGNAL_FUNCTIONS: Final[Mapping[str, tuple[Callable[..., Signal], int, int, str]]] = {
    "step": (Step, 3, 3, "step(t0, before, after)"),
    "ramp": (Ramp, 2, 3, "ramp(t0, slope[, initial])"),
    "sine": (Sine, 2, 4, "sine(amplitude, frequency[, phase[, offset]])"),
    "pulse": (_pulse, 3, 5, "pulse(t0, width, amplitude[, base[, period]])"),
    "white_noise": (_white_noise, 3, 4, "white_noise(std, sample, seed[, mean])"),
}
TABLE_FORM: Final = "table(path.csv[, linear|zoh][, column=NAME])"

_NODE_WORDS: Final[Mapping[type, str]] = {
    ast.Attribute: "attribute access",
    ast.Subscript: "subscripts",
    ast.Compare: "comparisons",
    ast.BoolOp: "boolean operators",
    ast.IfExp: "conditional expressions",
    ast.Lambda: "lambda functions",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.NamedExpr: "assignment expressions",
}
_TABLE_CALL: Final = re.compile(r"\btable\s*\(")
_PLACEHOLDER: Final = "_table{}_"


@dataclass(frozen=True, slots=True)
class _TableCall:
    text: str  # the original "table(...)" text, for messages
    path: Path
    interpolation: str
    column: str | None


def _cut_tables(text: str, where: str, base_dir: str | os.PathLike[str] | None) -> tuple[str, dict[str, _TableCall]]:
    """Replace every ``table(...)`` by a placeholder name; return the new text and the calls."""
    pieces: list[str] = []
    calls: dict[str, _TableCall] = {}
    position = 0
    while (match := _TABLE_CALL.search(text, position)) is not None:
        start = match.end()
        first = start + len(text[start:]) - len(text[start:].lstrip())  # the first non-blank character
        if text[first : first + 1] in ("'", '"'):  # a quoted path may contain ')'
            closing = text.find(text[first], first + 1)
            end = text.find(")", closing + 1) if closing >= 0 else -1
        else:
            end = text.find(")", start)
        if end < 0:
            raise ExpressionError(f"{where}: unclosed table( in {text!r}: write {TABLE_FORM}")
        call = _table_call(text[match.start() : end + 1], text[start:end], where, base_dir)
        name = _PLACEHOLDER.format(len(calls))
        calls[name] = call
        pieces += [text[position : match.start()], name]
        position = end + 1
    pieces.append(text[position:])
    return "".join(pieces), calls


def _table_call(original: str, inside: str, where: str, base_dir: str | os.PathLike[str] | None) -> _TableCall:
    stripped = inside.strip()
    if stripped[:1] in ("'", '"'):
        closing = stripped.find(stripped[0], 1)
        path_text, rest = stripped[1:closing], stripped[closing + 1 :].strip()
        if rest and not rest.startswith(","):
            raise ExpressionError(f"{where}: expected ',' after the quoted path in {original!r}: write {TABLE_FORM}")
        options = [part.strip() for part in rest[1:].split(",")] if rest else []
    else:
        path_text, *options = (part.strip() for part in stripped.split(","))
    if not path_text:
        raise ExpressionError(f"{where}: table() needs a file path in {original!r}: write {TABLE_FORM}")
    interpolation, column = "zoh", None
    for option in options:
        key, sep, value = (s.strip() for s in option.partition("="))
        if not sep and option in ("linear", "zoh"):
            interpolation = option
        elif sep and key == "column" and value:
            column = value.strip("'\"")
        else:
            raise ExpressionError(
                f"{where}: unknown table() option {option!r} in {original!r} "
                f"(a path with commas must be quoted): write {TABLE_FORM}"
            )
    try:
        path = Path(path_text).expanduser()
    except RuntimeError:  # "~" with HOME unset and no passwd entry
        raise ExpressionError(f"{where}: cannot expand '~' in {path_text!r}: the home folder is unknown (HOME is "
                              "not set): write the full path") from None
    if not path.is_absolute():
        path = Path(base_dir if base_dir is not None else Path.cwd()) / path
    return _TableCall(original, path, interpolation, column)


class _Walker:
    """Build a Signal from the parsed tree, allowing only the grammar of the module docstring."""

    def __init__(self, source: str, text: str, where: str, tables: Mapping[str, _TableCall]):
        self.source = source  # the text parsed (with placeholders)
        self.text = text  # the user's text, for messages
        self.where = where
        self.tables = tables

    def fail(self, node: ast.AST, problem: str) -> ExpressionError:
        token = ast.get_source_segment(self.source, node) or ""
        for name, call in self.tables.items():
            token = token.replace(name, call.text)
        return ExpressionError(f"{self.where}: {problem}: {token!r} in {self.text!r}")

    def has_signal(self, node: ast.AST) -> bool:
        return any(
            isinstance(sub, ast.Name) and (sub.id in SIGNAL_FUNCTIONS or sub.id in self.tables)
            for sub in ast.walk(node)
        )

    def number(self, node: ast.AST, where: str) -> float:
        segment = ast.get_source_segment(self.source, node)
        if segment is None:  # pragma: no cover - every expression node has a position
            raise self.fail(node, "cannot locate this part")
        return parse_number(segment, where=where)

    def visit(self, node: ast.AST, depth: int = 0) -> Signal | float:
        if depth > MAX_DEPTH:
            raise ExpressionError(f"{self.where}: expression nested deeper than {MAX_DEPTH} levels")
        if not self.has_signal(node):
            return self.number(node, self.where)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            operand = self.visit(node.operand, depth + 1)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            return self.binary(node, depth)
        if isinstance(node, ast.Call):
            return self.call(node)
        word = _NODE_WORDS.get(type(node), f"'{type(node).__name__}' syntax")
        raise self.fail(node, f"{word} not allowed (only + - * / of signals and numbers)")

    def name(self, node: ast.Name) -> Signal:
        if node.id in self.tables:
            call = self.tables[node.id]
            try:
                return Table.from_csv(call.path, call.column, call.interpolation)
            except InputError as exc:
                raise type(exc)(f"{self.where}: {exc}") from None
        _, _, _, form = SIGNAL_FUNCTIONS[node.id]
        raise self.fail(node, f"function used without calling it: write {form}")

    def binary(self, node: ast.BinOp, depth: int) -> Signal | float:
        # a + b - c + ... is a left-nested tree: walk its spine iteratively, so that a long sum of signals does
        # not count as nesting depth (as in robodyn.model.expr)
        spine: list[ast.BinOp] = []
        current: ast.expr = node
        while isinstance(current, ast.BinOp) and isinstance(current.op, ast.Add | ast.Sub | ast.Mult | ast.Div):
            spine.append(current)
            current = current.left
        if not spine:
            raise self.fail(node, "operator not allowed with signals (only + - * /)")
        value = self.visit(current, depth + 1)
        for link in reversed(spine):
            value = self.single(link, value, depth)
        return value

    def single(self, node: ast.BinOp, left: Signal | float, depth: int) -> Signal | float:
        """One operation of a chain, on its already translated left operand."""
        right = self.visit(node.right, depth + 1)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            if isinstance(left, Signal) and isinstance(right, Signal):
                raise self.fail(node, "a product of two signals is not allowed: multiply a signal by a number")
            return left * right
        if isinstance(right, Signal):
            raise self.fail(node, "division by a signal is not allowed: divide a signal by a number")
        if right == 0.0:
            raise self.fail(node, "division by zero")
        return left / right

    def call(self, node: ast.Call) -> Signal:
        if not isinstance(node.func, ast.Name):
            raise self.fail(node.func, "only calls of named functions are allowed")
        name = node.func.id
        if name not in SIGNAL_FUNCTIONS:
            allowed = ", ".join([*SIGNAL_FUNCTIONS, "table"])
            raise self.fail(node, f"{name}() of a signal is not allowed (signal functions: {allowed})")
        build, least, most, form = SIGNAL_FUNCTIONS[name]
        if node.keywords:
            raise self.fail(node, f"keyword arguments are not allowed: write {form}")
        if not least <= len(node.args) <= most:
            count = f"{least}" if least == most else f"{least} to {most}"
            raise self.fail(node, f"{name}() takes {count} arguments {form[len(name) :]}, got {len(node.args)}")
        args = []
        for index, arg in enumerate(node.args, start=1):
            if self.has_signal(arg) or isinstance(arg, ast.Starred):
                raise self.fail(arg, f"argument {index} of {name}() must be a number: write {form}")
            args.append(self.number(arg, f"{self.where}: {name}() argument {index}"))
        try:
            return build(*args)
        except InputError as exc:
            raise self.fail(node, f"{exc}") from None


def parse_signal(text: str, *, where: str, base_dir: str | os.PathLike[str] | None = None) -> Signal:
    """Parse the text form of a signal, e.g. ``"step(0, 0, 1) + 0.5*sine(1, 2)"``.

    Parameters
    ----------
    text
        The signal (grammar in the module docstring). A plain number gives a :class:`Constant`.
    where
        Where the text comes from (``"--input u"``); it starts every error message.
    base_dir
        Folder that relative table paths are relative to (default: the current folder).

    Raises
    ------
    ExpressionError
        Text outside the grammar, with the offending token and the expected form.
    InputError
        A table file that cannot be read or is malformed (the message names the file and line).
    """
    if not isinstance(text, str):
        raise ExpressionError(f"{where}: expected the text of a signal, got {text!r}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"{where}: signal longer than {MAX_LENGTH} characters")
    source = " ".join(text.split())
    if not source:
        raise ExpressionError(f"{where}: empty signal: write a number or e.g. step(0, 0, 1)")
    source, tables = _cut_tables(source, where, base_dir)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"{where}: invalid syntax in {text!r}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ExpressionError(f"{where}: cannot parse {text[:80]!r}: {exc}") from None
    try:
        result = _Walker(source, text, where, tables).visit(tree.body)
    except RecursionError:
        raise ExpressionError(f"{where}: signal too deeply nested") from None
    return result if isinstance(result, Signal) else Constant(result)


def parse_input_assignments(
    items: Sequence[str],
    input_names: Sequence[str],
    where: str = "--input",
    base_dir: str | os.PathLike[str] | None = None,
) -> dict[str, Signal]:
    """Parse repeated ``NAME=SIGNAL`` options (``["u=step(0, 0, 1)", "f=0.5"]``) into ``{name: Signal}``."""
    names = list(input_names)
    result: dict[str, Signal] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ExpressionError(f"{where}: expected NAME=SIGNAL, got {item!r} (e.g. u=step(0, 0, 1))")
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            known = ", ".join(names) if names else "none"
            raise UnknownNameError(f"{where}: unknown input {name!r} (the model's inputs: {known}){hint}")
        if name in result:
            raise ExpressionError(f"{where}: input {name!r} is given twice: give each input once")
        result[name] = parse_signal(text, where=f"{where} {name}", base_dir=base_dir)
    return result
