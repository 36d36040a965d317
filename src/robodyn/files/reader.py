"""The model-file reader: a parsed YAML document -> a model, validated, expressions parsed with sympy.

:mod:`robodyn.files.loading` is the entry point (``load``, ``load_file``, ``read_model_text``); this module
holds the reader and the builders of each kind and is imported only when a model is really built from
its text (a warm parsed-model cache, :mod:`robodyn.files.cached`, does without it and without sympy).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import sympy

from robodyn.base.errors import InputError, ModelFileError
from robodyn.base.names import did_you_mean
from robodyn.files.loading import KINDS, REQUIRED_KEYS, describe_value
from robodyn.files.yamlio import Document, Path
from robodyn.model.expr import parse_expression, symbol
from robodyn.model.kinds.lagrange import LagrangianSystem
from robodyn.model.kinds.mechanical import MechanicalSystem, velocity_name
from robodyn.model.kinds.symbolic import SymbolicSystem
from robodyn.model.quantities import parse_number
from robodyn.model.system import Model, check_names

__all__ = ["DocumentReader", "model_from_document"]


class DocumentReader:
    """Validates one document and parses its expressions, with positions for messages."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.data: dict[str, Any] = doc.data
        self.symbols: dict[str, sympy.Symbol] = {}
        #: derived parameters (name -> expression of the free parameters), set by :meth:`parameters`
        self.derived: dict[str, sympy.Expr] = {}

    def fail(self, path: Path, message: str) -> ModelFileError:
        return ModelFileError(f"{self.doc.where(path)}: {message}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
        value = self.data.get(key, default)
        if value is not default and not isinstance(value, kind):
            expected = {list: "a list", dict: "a mapping", str: "text"}.get(kind, "a value")  # type: ignore[call-overload]
            raise self.fail((key,), f"must be {expected}, got {describe_value(value)}")
        return value

    def names(self, key: str, *, required: bool = False) -> list[str]:
        value = self.get(key, list)
        if value is None:
            if required:
                raise self.fail((key,), f"missing: list the {key}, e.g. {key}: [q]")
            return []
        for i, name in enumerate(value):
            if not isinstance(name, str):
                raise self.fail((key, i), f"{describe_value(name)} is not a name: use letters, digits and _")
        if required and not value:
            raise self.fail((key,), f"needs at least one entry in {key}")
        return value

    def parameters(self) -> dict[str, float]:
        """The free parameters' defaults, in file order; derived parameters go to :attr:`derived`.

        A value is a number, a constant expression (``2*pi``) or an expression of other parameters
        (``I: m*l**2``): the latter is a derived parameter, resolved in dependency order into an expression
        of the free parameters only.
        """
        table = self.get("parameters", dict) or {}
        names = {name: symbol(name) for name in table if isinstance(name, str)}
        result: dict[str, float] = {}
        formulas: dict[str, sympy.Expr] = {}
        for name, value in table.items():
            where = self.doc.where(("parameters", name))
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise ModelFileError(f"{where}: parameter value must be a number, got {describe_value(value)} "
                                     "(or an expression of other parameters such as m*l**2)")
            if isinstance(value, float) and not math.isfinite(value):
                raise ModelFileError(f"{where}: parameter value {value} is not finite: give a finite number")
            if not isinstance(value, str):
                result[name] = float(value)
                continue
            try:
                expr = parse_expression(value, names, where=where, allow_time=False)
                if expr.free_symbols:
                    formulas[name] = expr
                else:
                    result[name] = parse_number(value, where=where)
            except InputError as exc:
                raise ModelFileError(f"{exc} (a parameter value is a number such as 0.5 or 2*pi, or an "
                                     "expression of other parameters such as m*l**2)") from None
        self.derived = self._resolve(formulas, result)
        return result

    def _resolve(self, formulas: dict[str, sympy.Expr], free: dict[str, float]) -> dict[str, sympy.Expr]:
        """Derived parameters as expressions of the free ones, in dependency order; a cycle is refused, and
        so is a value that is not finite with the defaults."""
        resolved: dict[str, sympy.Expr] = {}

        def visit(name: str, chain: list[str]) -> sympy.Expr:
            if name in resolved:
                return resolved[name]
            if name in chain:
                cycle = " -> ".join([*chain[chain.index(name):], name])
                raise self.fail(("parameters", chain[-1]), f"the parameters {cycle} are defined in a cycle: "
                                                           "give one of them a number")
            needed = sorted(s.name for s in formulas[name].free_symbols if s.name in formulas)
            replacements = {symbol(d): visit(d, [*chain, name]) for d in needed}
            resolved[name] = formulas[name].xreplace(replacements)
            return resolved[name]

        defaults = {symbol(k): sympy.Float(v) for k, v in free.items()}
        for name in formulas:
            value = complex(sympy.N(visit(name, []).xreplace(defaults), 17))
            if value.imag != 0 or not math.isfinite(value.real):
                raise self.fail(("parameters", name), f"{name} = {sympy.sstr(resolved[name])} is not a finite real "
                                                      "number with the default values: change them")
        return {name: resolved[name] for name in formulas}

    def check_names(self, groups: dict[str, Sequence[str]], keys: dict[str, str]) -> None:
        """Names must be valid, unreserved and unique; messages point at the list entry."""

        def locate(group: str, index: int) -> str:
            key = keys.get(group, group)
            entry: Path = (key, index) if key in ("states", "inputs", "coordinates") else (key,)
            if key in ("parameters", "outputs"):
                entry = (key, list(self.data[key])[index])
            return self.doc.where(entry)

        if "parameters" in groups:  # derived parameters are names too: check them all, in file order
            groups = {**groups, "parameters": [str(name) for name in self.get("parameters", dict) or {}]}
        check_names(groups, locate=locate)
        self.symbols = {name: symbol(name) for names in groups.values() for name in names}

    def expression(self, path: Path, value: Any, allowed: Sequence[str], allow_time: bool = True) -> Any:
        if value is None or isinstance(value, bool | list | dict):
            raise self.fail(path, f"expected an expression, got {describe_value(value)}")
        table: dict[str, sympy.Expr] = {name: self.symbols[name] for name in allowed}
        if any(name in table for name in self.data.get("parameters") or {}):
            table.update(self.derived)  # where parameters may appear, derived ones stand for their expressions
        return parse_expression(value, table, where=self.doc.where(path), allow_time=allow_time)

    def expressions(self, key: str, names: Sequence[str], allowed: Sequence[str], *,
                    required: bool, what: str) -> dict[str, Any]:
        table = self.get(key, dict)
        if table is None:
            if required:
                raise self.fail((key,), f"missing: give {what} as a mapping name: expression")
            return {}
        for name in table:
            if name not in names:
                raise self.fail((key, name), f"{name!r} is not one of the {what.split()[-1]}: "
                                             f"{', '.join(names)}{did_you_mean(name, names)}")
        if required:
            missing = [n for n in names if n not in table]
            if missing:
                raise self.fail((key,), f"no {what} for {', '.join(missing)}: add '{missing[0]}: <expression>'")
        return {name: self.expression((key, name), table[name], allowed) for name in table}

    def matrix(self, key: str, rows: int, cols: int, allowed: Sequence[str]) -> list[list[Any]] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, list) and rows == cols == 1:
            value = [[value]]
        if not isinstance(value, list) or len(value) != rows:
            raise self.fail((key,), f"must be a {rows}x{cols} matrix (a list of {rows} rows), "
                                    f"got {describe_value(value)}")
        result = []
        for i, row in enumerate(value):
            if not isinstance(row, list) or len(row) != cols:
                raise self.fail((key, i), f"row {i} must be a list of {cols} entries, got {describe_value(row)}")
            result.append([self.expression((key, i, j), e, allowed, allow_time=False)
                           for j, e in enumerate(row)])
        return result


def _first_order(r: DocumentReader, name: str, params: dict[str, float], inputs: list[str]) -> Model:
    states = r.names("states", required=True)
    outputs = r.get("outputs", dict) or {}
    r.check_names({"states": states, "inputs": inputs, "parameters": list(params), "outputs": list(outputs)},
                  {})
    everything = [*states, *inputs, *params]
    dynamics = r.expressions("dynamics", states, everything, required=True, what="dynamics of the states")
    outs = r.expressions("outputs", list(outputs), everything, required=False, what="outputs")
    return SymbolicSystem(states, inputs, dynamics, parameters=params, outputs=outs or None, name=name)


def _discrete(r: DocumentReader, name: str, params: dict[str, float], inputs: list[str]) -> Model:
    """``kind: discrete``: the update map x[k+1] of each state at the period ``sample``
    (robodyn.model.kinds.discrete)."""
    from robodyn.model.kinds.discrete import DiscreteSystem, check_period

    states = r.names("states")
    outputs = r.get("outputs", dict) or {}
    if not states and not outputs:
        raise r.fail(("states",), "a discrete model needs states (with their update) or outputs")
    r.check_names({"states": states, "inputs": inputs, "parameters": list(params), "outputs": list(outputs)}, {})
    everything = [*states, *inputs, *params]
    key = _one_of(r, ("update", "dynamics"), "the next value of each state, update: {x: expression}",
                  required=bool(states))
    update = r.expressions(key or "update", states, everything, required=bool(states), what="updates of the states")
    outs = r.expressions("outputs", list(outputs), everything, required=False, what="outputs")
    period_key = _one_of(r, ("sample", "dt"), "the sample period in s, sample: 0.01", required=True)
    assert period_key is not None
    try:
        period = check_period(r.data.get(period_key), period_key)
    except InputError as exc:
        raise r.fail((period_key,), str(exc).removeprefix(f"{period_key}: ")) from None
    return DiscreteSystem(states, inputs, update or {}, sample=period, parameters=params, outputs=outs or None,
                          name=name)


def _one_of(r: DocumentReader, keys: tuple[str, str], what: str, *, required: bool) -> str | None:
    """The one of two synonymous keys the document gives (``update`` or ``dynamics``), refusing both or none."""
    given = [k for k in keys if k in r.data]
    if len(given) > 1:
        raise r.fail((given[1],), f"give {keys[0]} or {keys[1]}, not both")
    if not given and required:
        raise r.fail((), f"missing key {keys[0]!r}: {what}")
    return given[0] if given else None


def _second_order_names(r: DocumentReader, params: dict[str, float], inputs: list[str]) -> tuple[list[str], list[str]]:
    coordinates = r.names("coordinates", required=True)
    velocities = [velocity_name(c) for c in coordinates]
    outputs = r.get("outputs", dict) or {}
    r.check_names({"coordinates": coordinates, "velocities (generated <coordinate>_dot)": velocities,
                   "inputs": inputs, "parameters": list(params), "outputs": list(outputs)},
                  {"velocities (generated <coordinate>_dot)": "coordinates"})
    return coordinates, velocities


def _mechanical(r: DocumentReader, name: str, params: dict[str, float], inputs: list[str]) -> Model:
    coordinates, velocities = _second_order_names(r, params, inputs)
    n, m = len(coordinates), len(inputs)
    p = list(params)
    mass = r.matrix("mass", n, n, p)
    if mass is None:
        raise r.fail(("mass",), f"missing: give the {n}x{n} mass matrix")
    damping, stiffness = r.matrix("damping", n, n, p), r.matrix("stiffness", n, n, p)
    forcing = r.matrix("input_matrix", n, m, p)
    if forcing is None and m != n:
        raise r.fail(("inputs",), f"{m} input(s) for {n} coordinate(s): give input_matrix ({n}x{m}) "
                                  "or one input per coordinate")
    outs = r.expressions("outputs", list(r.get("outputs", dict) or {}), [*coordinates, *velocities, *inputs, *p],
                         required=False, what="outputs")
    return MechanicalSystem(coordinates, inputs, mass, damping, stiffness, forcing,
                            parameters=params, outputs=outs or None, name=name)


def _lagrangian(r: DocumentReader, name: str, params: dict[str, float], inputs: list[str]) -> Model:
    coordinates, velocities = _second_order_names(r, params, inputs)
    p = list(params)
    kinetic = r.expression(("kinetic",), r.data["kinetic"], [*coordinates, *velocities, *p], allow_time=False)
    potential = r.expression(("potential",), r.data.get("potential", 0), [*coordinates, *p], allow_time=False)
    everything = [*coordinates, *velocities, *inputs, *p]
    forces = r.expressions("forces", coordinates, everything, required=False, what="forces on the coordinates")
    outs = r.expressions("outputs", list(r.get("outputs", dict) or {}), everything, required=False,
                         what="outputs")
    points = {}
    for point, value in (r.get("points", dict) or {}).items():
        if not isinstance(value, list) or len(value) not in (2, 3):
            raise r.fail(("points", point), "must be [x, y] or [x, y, z]: expressions in the coordinates")
        points[point] = [r.expression(("points", point, i), v, [*coordinates, *p], allow_time=False)
                         for i, v in enumerate(value)]
    return LagrangianSystem(coordinates, inputs, kinetic, potential, forces, parameters=params,
                            outputs=outs or None, name=name, points=points or None)


def _chain(r: DocumentReader, name: str, params: dict[str, float], inputs: list[str]) -> Model:
    from robodyn.files.chain import chain_from_reader  # deferred: chain imports the model classes

    return chain_from_reader(r, name, params, inputs)


_BUILDERS: dict[str, Callable[[DocumentReader, str, dict[str, float], list[str]], Model]] = {
    "first_order": _first_order,
    "discrete": _discrete,
    "mechanical": _mechanical,
    "lagrangian": _lagrangian,
    "chain": _chain,
}


def model_from_document(doc: Document, default_name: str = "model") -> Model:
    """Build a model from a parsed YAML document, validating every key.

    Raises
    ------
    ModelFileError
        Naming the file, the line and the key path, and what to change.
    """
    if not isinstance(doc.data, dict):
        raise ModelFileError(f"{doc.where(())}: a model file must be a mapping of keys (name, kind, ...)")
    r = DocumentReader(doc)
    kind = r.data.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        kinds = ", ".join(KINDS)
        if kind is None:
            raise r.fail((), f"missing 'kind': one of {kinds}")
        if kind == "optimal_control":  # robodyn.control.optimal.problem_file reads these: a problem holds a model
            raise r.fail(("kind",), "this is an optimal control problem, not a model: read it with "
                                    "robodyn.load_problem(path) or `robodyn optimize`")
        raise r.fail(("kind",), f"unknown kind {kind!r}: one of {kinds}{did_you_mean(str(kind), list(KINDS))}")
    for key in r.data:
        if key not in KINDS[kind]:
            allowed = ", ".join(sorted(KINDS[kind]))
            raise r.fail((key,), f"unknown key {key!r} for kind {kind} (allowed: {allowed})"
                                 f"{did_you_mean(key, sorted(KINDS[kind]))}")
    for key in REQUIRED_KEYS[kind]:
        if key not in r.data:
            raise r.fail((), f"missing key {key!r} (required for kind {kind})")
    name = r.get("name", str, default_name) or default_name
    r.get("description", str)
    try:
        if kind == "diagram":  # blocks, not equations: its inputs and outputs are mappings to block ports
            from robodyn.files.diagram import diagram_from_reader

            return diagram_from_reader(r, name)
        params = r.parameters()
        inputs = r.names("inputs")
        model = _BUILDERS[kind](r, name, params, inputs)
    except InputError as exc:
        message = str(exc)
        if message.startswith(doc.source):  # already located by the reader
            raise ModelFileError(message, key=exc.key) from None
        # a check inside the model classes: point at the key it concerns, when it says which
        where = doc.where((exc.key,)) if exc.key in r.data else doc.source
        raise ModelFileError(f"{where}: {message}", key=exc.key) from None
    if r.derived:
        # the file's kinds are instances with a __dict__ (the base class declares empty slots only)
        object.__setattr__(model, "derived_parameters",
                           MappingProxyType({k: sympy.sstr(e) for k, e in r.derived.items()}))
    units = _units(r, model)
    if units:
        object.__setattr__(model, "declared_units", MappingProxyType(units))
    return model


def _units(r: DocumentReader, model: Model) -> dict[str, str]:
    """``units: {name: unit}`` for states, inputs, outputs and parameters: short printable text (plots label axes
    with it, tables and ``show`` print it beside values)."""
    table = r.get("units", dict) or {}
    known = {*model.states, *model.inputs, *model.outputs, *model.parameters, *model.derived_parameters}
    for name, unit in table.items():
        if name not in known:
            raise r.fail(("units", name), f"{name!r} is not a state, input, output or parameter of the model "
                                          f"({', '.join(sorted(known))}){did_you_mean(str(name), sorted(known))}")
        if not isinstance(unit, str) or not unit.strip() or len(unit) > 40 or not unit.isprintable():
            raise r.fail(("units", name), f"the unit must be short text such as 'rad/s' or 'N m', got {unit!r}")
    return {str(k): v.strip() for k, v in table.items()}
