"""The parsed-model cache: a model file's numeric facts kept on disk, so a warm process needs no sympy.

Building a model from its file parses expressions and derives equations with sympy (importing sympy alone
takes about half a second). What the numeric path needs — names, default parameters, units, the generated
numba sources of the model contract (``kernel_rhs_source``, ``kernel_jacobian_source``,
``kernel_output_source``) and the facts ``simulate()`` chooses its method by — is small. The first load of
a file stores it as a JSON record in robodyn's private cache folder, keyed by the SHA-256 of the file's text
(with its name and robodyn's version); later loads build a :class:`CachedModel` from that record.

One mechanism for everything else: whatever the record does not hold (symbolic expressions, events given
as expressions, ``show``, linear forms, kinematics, derivation) is asked of the full model, built from the
file's text on first need (then sympy is imported) with the same parameter values, and answered by it
(:data:`DELEGATED` for the contract's methods, attribute look-up for a kind's own attributes).

The record is a trust boundary like every cache file (docs/dev/security.md): it is read through
:func:`robodyn.codegen.cache.read_private` (at most ``MAX_RECORD_BYTES``, 16 MB), parsed with a size and
nesting limit (:func:`robodyn.base.textfile.parse_json_limited`), holds data only (JSON, never a pickle), carries
the SHA-256 of its content, and is checked field by field; a record that fails any check is moved aside and
rebuilt from the file.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.digest import sha256
from robodyn.base.errors import RobodynWarning
from robodyn.base.names import is_qualified_name, is_valid_name
from robodyn.base.version import __version__
from robodyn.files import cached_diagram
from robodyn.files.deferred import DeferredTable
from robodyn.files.records import FORMAT, model_record_key, record_path
from robodyn.model.system import Model, Vector

if TYPE_CHECKING:
    from robodyn.model.protocol import TorqueRegressor

__all__ = ["DELEGATED", "FORMAT", "CachedModel", "cached_model", "load_cached", "record_path"]

#: Contract methods the record does not answer: asked of the full model (built from the file on first need). A
#: diagram's record also answers its linearization, ``manipulator`` (None) and its loops (robodyn.files
#: .cached_diagram); for other records those are the full model's too.
DELEGATED: Final = (
    "affine_form", "base_masses", "contact_points", "energy", "equation_terms", "explicit_form", "fixed_base",
    "kernel_parameter_jacobian_source", "kinematics", "latex_lines", "latex_text", "linear_model",
    "mechanical_matrices", "output_parameter_jacobian_raw", "parameter_jacobian_raw", "raw_function",
    "scalar_damping", "show_text", "symbolic_form", "with_outputs",
)

_models: dict[str, CachedModel] = {}  # key -> the model of this process (models are immutable)


class _Invalid(Exception):
    """A record that must not be used (damaged, edited, of another version)."""


# --- loading ------------------------------------------------------------------------------------------------
def load_cached(model: str | os.PathLike[str], *, same_numbers: bool = False, **options: Any) -> Model:
    """:func:`robodyn.load` for the numeric path: a model file or catalog model from the parsed-model cache.

    A YAML file or a file-backed catalog model gives a :class:`CachedModel` (built from the record when the
    cache is warm, else parsed and recorded); anything else (URDF robots, ``mbk``, options) is loaded by
    :func:`robodyn.load` as usual. With ``same_numbers``, only a record whose every number is the full model's own
    code (a diagram's: its composed functions) gives a CachedModel; for another model file (whose exact Jacobian the
    full model evaluates another way) it is the full model, for commands that print its numbers (``linearize``).
    """
    from robodyn.files.loading import load, model_text
    from robodyn.files.records import is_diagram

    found = None if options else model_text(model)
    if found is None or (same_numbers and not is_diagram(*found)):  # no record made for nothing
        return load(model, **options)
    loaded = cached_model(*found)
    if same_numbers and isinstance(loaded, CachedModel) and loaded.block_diagram() is None:
        return loaded.full_model()
    return loaded


def cached_model(text: str, source: str) -> Model:
    """The model of the model-file ``text`` (``source`` names it), from its record when there is a valid one."""
    key = model_record_key(text, source)
    if key is None:  # a diagram with a robot: not recorded
        return _parse(text, source)[0]
    model = _models.get(key)
    if model is not None:
        return model
    path = record_path(key)
    record = _read(path, key)
    full = None
    if record is not None:
        for message in record["warnings"]:
            warnings.warn(message, RobodynWarning, stacklevel=3)
    else:
        record = _light(text, source, key)  # a plain first-order file, without sympy
        if record is None:
            full, caught = _parse(text, source)
            record = _record(full, key, caught)
            if record is None:  # not a model of generated code: nothing to keep
                return full
        _write(path, record)
    model = _models[key] = CachedModel(record, _Source(text, source, full))
    return model


def _parse(text: str, source: str) -> tuple[Model, list[warnings.WarningMessage]]:
    """The full model of ``text``, and the warnings reading it gave (shown as usual, and kept for warm loads)."""
    from robodyn.files.loading import read_model_text

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        full = read_model_text(text, source)
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return full, caught


# --- the record ---------------------------------------------------------------------------------------------
def _header(key: str) -> dict[str, Any]:
    """The fields that tie a record to its format, robodyn's version and its file."""
    return {"format": FORMAT, "robodyn": __version__, "key": key}


def _light(text: str, source: str, key: str) -> dict[str, Any] | None:
    """The record of a plain first-order file made without sympy (robodyn.files.light.record), or None."""
    from robodyn.files.light.record import light_record

    fields = light_record(text, source)
    return None if fields is None else {**_header(key), **fields}


def _record(full: Model, key: str, caught: list[warnings.WarningMessage]) -> dict[str, Any] | None:
    """What the numeric path needs of ``full``, as JSON data (None for a model without generated code)."""
    diagram = cached_diagram.diagram_fields(full)  # a diagram: its key holds every file it names (records.py)
    if diagram is not None and not cached_diagram.recordable(full):
        return None  # sampled blocks, corners, a robot: the full diagram answers
    if (not (full.compilable and (full.self_contained or diagram is not None)) or full.sample_period is not None
            or full.chart() is not None or full.constraints() is not None or full.impacts() is not None):
        return None  # no generated code, the text alone does not determine it, discrete time,
        # a manifold (a floating base: integrated in its chart, which the full model holds), or constraints (whose
        # residuals, assembly and tangent map the full model computes), or impacts (likewise)
    rhs = full.kernel_rhs_source()
    if rhs is None:
        return None
    limits = full.position_limits()
    return {
        **_header(key),
        "name": full.name, "kind": full.kind, "order": full.order,
        "states": list(full.states), "inputs": list(full.inputs), "outputs": list(full.outputs),
        "parameters": [[k, float(v)] for k, v in full.parameters.items()],
        "derived_parameters": dict(full.derived_parameters), "declared_units": dict(full.declared_units),
        "units": full.units(), "position_limits": {k: list(v) for k, v in limits.items()},
        "jacobian_method": full.jacobian_method, "parameter_jacobian_method": full.parameter_jacobian_method,
        "outputs_are_states": bool(full.outputs_are_states),
        "linear_by_construction": full.linear_by_construction(),
        "sources": {"rhs": rhs, "jacobian": full.kernel_jacobian_source(), "output": full.kernel_output_source()},
        "warnings": [str(w.message) for w in caught if issubclass(w.category, RobodynWarning)],
        # the kind checks parameter overrides itself (a mass matrix that must stay positive definite, ...)
        "checks_overrides": type(full).with_parameters is not Model.with_parameters,
        **({} if diagram is None else {"diagram": diagram}),  # robodyn.files.cached_diagram
    }


def _digest(record: Mapping[str, Any]) -> str:
    return sha256(json.dumps(record, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


def _write(path: Path, record: dict[str, Any]) -> None:
    """Keep the record (a read-only or full cache: not kept, the model works and the next process parses again)."""
    from robodyn.codegen.cache import write_private

    write_private(path, json.dumps({"sha256": _digest(record), "record": record}, sort_keys=True).encode())


def _read(path: Path, key: str) -> dict[str, Any] | None:
    """The valid record at ``path``, or None (missing; damaged, oversized or untrusted ones are moved aside)."""
    from robodyn.codegen.cache import MAX_RECORD_BYTES, quarantine, read_trusted

    data = read_trusted(path, MAX_RECORD_BYTES)
    if data is None:
        return None
    try:
        record = _checked(data, key)
    except _Invalid as exc:
        quarantine(path, str(exc))
        return None
    return record


_STRINGS: Final = ("name", "kind", "robodyn", "key")


def _checked(data: bytes, key: str) -> dict[str, Any]:
    """The record in ``data`` after every check, or _Invalid saying which failed."""
    from robodyn.base.textfile import JsonLimitError, parse_json_limited
    from robodyn.codegen.cache import MAX_RECORD_BYTES

    try:  # bounded: no size or nesting of the file makes this raise anything else
        wrapper = parse_json_limited(data, limit=MAX_RECORD_BYTES)
    except JsonLimitError as exc:
        raise _Invalid(f"not a JSON record: {exc}") from None
    record = wrapper.get("record") if isinstance(wrapper, dict) else None
    if not isinstance(record, dict) or wrapper.get("sha256") != _digest(record):
        raise _Invalid("its content does not match its SHA-256")
    if record.get("format") != FORMAT or record.get("robodyn") != __version__ or record.get("key") != key:
        raise _Invalid("a record of another format, version or file")
    if not all(isinstance(record.get(k), str) for k in _STRINGS):
        raise _Invalid("a name field is not text")
    diagram = record.get("diagram")
    if "diagram" in record and not cached_diagram.checked_fields(diagram):
        raise _Invalid("bad diagram")
    named = is_valid_name if diagram is None else is_qualified_name  # a diagram's names are block.name
    for group in ("states", "inputs", "outputs"):
        names = record.get(group)
        if not isinstance(names, list) or not all(named(n) for n in names) or len(set(names)) != len(names):
            raise _Invalid(f"bad {group}")
    parameters = record.get("parameters")
    if not isinstance(parameters, list) or not all(
            isinstance(p, list) and len(p) == 2 and named(p[0]) and type(p[1]) is float
            and math.isfinite(p[1]) for p in parameters):
        raise _Invalid("bad parameters")
    for field in ("derived_parameters", "declared_units", "units"):  # name -> text (an expression, a unit)
        if not _text_by_name(record.get(field), named):
            raise _Invalid(f"bad {field}")
    limits = record.get("position_limits")
    if not isinstance(limits, dict) or not all(named(k) and _bounds(v) for k, v in limits.items()):
        raise _Invalid("bad position_limits")
    sources = record.get("sources")
    if not isinstance(sources, dict) or not isinstance(sources.get("rhs"), str) or not all(
            sources.get(k) is None or isinstance(sources.get(k), str) for k in ("jacobian", "output")):
        raise _Invalid("bad sources")
    if type(record.get("order")) is not int or type(record.get("outputs_are_states")) is not bool \
            or type(record.get("checks_overrides")) is not bool:
        raise _Invalid("bad structure facts")
    for field in ("jacobian_method", "parameter_jacobian_method", "linear_by_construction"):
        if record.get(field) is not None and not isinstance(record.get(field), str):
            raise _Invalid(f"bad {field}")
    if not isinstance(record.get("warnings"), list) or not all(isinstance(w, str) for w in record["warnings"]):
        raise _Invalid("bad warnings")
    return record


def _text_by_name(value: Any, named: Callable[[Any], bool]) -> bool:
    """Whether ``value`` maps names (``named`` says which are) to text."""
    return isinstance(value, dict) and all(named(k) and isinstance(v, str) for k, v in value.items())


def _bounds(value: Any) -> bool:
    """Whether ``value`` is a position limit pair ``[lower, upper]``, each a finite number or null."""
    return isinstance(value, list) and len(value) == 2 and all(
        v is None or (type(v) in (int, float) and math.isfinite(v)) for v in value)


# --- the model ----------------------------------------------------------------------------------------------
class _Source:
    """A model file's text and, once needed, the full model built from it (shared by parameter copies); for the
    record of a loop opened at ``port``, the full model is the file's diagram opened there."""

    def __init__(self, text: str, source: str, full: Model | None, port: str | None = None):
        self.text, self.source, self._full, self.port = text, source, full, port

    def model(self) -> Model:
        if self._full is None:
            from robodyn.files.loading import read_model_text

            with warnings.catch_warnings():  # shown once already, when the record was made or read
                warnings.simplefilter("ignore", RobodynWarning)
                full = read_model_text(self.text, self.source)
            self._full = full if self.port is None else _loop(full, self.port)[0]
        return self._full

    def opened(self, port: str) -> _Source:
        """The source of the loop of this file's diagram opened at ``port``."""
        return _Source(self.text, self.source, None, port)


class CachedModel(Model):
    """A model file's model built from its parsed-model record (:func:`cached_model`): no sympy needed.

    ``f_raw``, ``h_raw`` and ``jacobians_raw`` run the record's generated numba sources (the same code the
    compiled kernels run); the names, parameters, units and structure facts are the record's. Everything
    else is answered by the full model (:meth:`full_model`), built from the file's text on first need.
    """

    def __init__(self, record: Mapping[str, Any], source: _Source):
        self._record = record
        self._source = source
        self.name = record["name"]
        self.kind = record["kind"]
        self.states = tuple(record["states"])
        self.inputs = tuple(record["inputs"])
        self.outputs = tuple(record["outputs"])
        self.parameters = MappingProxyType({k: v for k, v in record["parameters"]})
        self.derived_parameters = MappingProxyType(dict(record["derived_parameters"]))
        self.declared_units = MappingProxyType(dict(record["declared_units"]))

    # --- the full model, for what the record does not hold ---------------------------------------------------
    def full_model(self) -> Model:
        """The model built from the file's text, with this model's parameter values (parsed once per process)."""
        base = self._source.model()
        if dict(base.parameters) == dict(self.parameters):
            return base
        held = self.__dict__.get("_full")
        if held is None or held[0] is not self.parameters:
            held = self.__dict__["_full"] = (self.parameters, base.with_parameters(dict(self.parameters)))
        return held[1]

    def __getattr__(self, name: str) -> Any:
        """A kind's own public attributes (``coordinates``, ``lagrangian``, ...) are the full model's."""
        if name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self.full_model(), name)

    def with_parameters(self, params: Mapping[str, float] | None = None, **values: float) -> CachedModel:
        """:meth:`Model.with_parameters`; a kind that checks overrides (a negative mass is bad input) has the
        full model check them (the file is parsed then), so the errors are the same."""
        merged = {**(params or {}), **values}
        if not merged:
            return self
        checked = self.full_model().with_parameters(merged) if self._record["checks_overrides"] else None
        clone = super().with_parameters(merged)
        if checked is not None:
            clone.__dict__["_full"] = (clone.parameters, checked)
        return clone

    # --- what the record holds ---------------------------------------------------------------------------------
    @property
    def _diagram(self) -> dict[str, Any] | None:
        """A diagram's own fields of the record (robodyn.files.cached_diagram), None for other models."""
        fields: dict[str, Any] | None = self._record.get("diagram")
        return fields

    @property
    def record_key(self) -> str:
        """The key of the record this model was built from (robodyn.files.records)."""
        return str(self._record["key"])

    @property
    def order(self) -> int:
        return int(self._record["order"])

    @property
    def jacobian_method(self) -> str | None:
        return self._record["jacobian_method"]

    @property
    def parameter_jacobian_method(self) -> str | None:
        """The full model's (its df/dp, dh/dp and ``jacp`` are the full model's: robodyn.integrate.paths.sensitivities
        differentiates the recorded straight-line ``rhs`` itself)."""
        return self._record["parameter_jacobian_method"]

    @property
    def outputs_are_states(self) -> bool:
        return bool(self._record["outputs_are_states"])

    @property
    def compilable(self) -> bool:
        return True

    @property
    def sample_period(self) -> float | None:
        return None  # discrete-time model files are not recorded (_record)

    @property
    def self_contained(self) -> bool:
        return True  # only such models are recorded

    def sampling(self) -> None:
        return None  # a diagram with sampled blocks is not recorded

    def chart(self) -> None:
        """None: a model on a manifold (a floating base) is never recorded (:func:`_record`)."""
        return None

    @property
    def geometry_file(self) -> None:
        """None: robot files (URDF), whose links carry shapes, are loaded whole, not recorded (:func:`load_cached`)."""
        return None

    def kernel_chart_source(self) -> None:
        return None

    def constraints(self) -> None:
        """None: a model with constraints is never recorded (:func:`_record`)."""
        return None

    def exported_functions(self) -> Any:
        return self.full_model().exported_functions()  # the tape is the full model's

    def torque_regressor(self) -> TorqueRegressor | None:
        return self.full_model().torque_regressor()  # the tape is the full model's

    def impacts(self) -> None:
        """None: a model with impacts is never recorded (:func:`_record`)."""
        return None

    def kernel_event_source(self, events: Sequence[Any]) -> str:
        # the events were parsed in the full model's table (a DeferredTable builds it): its source is the full model's
        return self.full_model().kernel_event_source(events)

    def robot_block(self) -> Any:
        """None but for a diagram with a robot block (the full diagram's, with its frames)."""
        return None if self._diagram is None else self.full_model().robot_block()

    def switching_expressions(self) -> tuple[Any, ...]:
        return ()  # only library blocks declare corners

    def output_expressions(self) -> list[Any] | None:
        return self.full_model().output_expressions()

    def switching_events(self) -> list[Any]:
        return []

    def rest_state(self, t: float, x: Any, u: Any, p: Any) -> None:
        """None, as the full model answers: no record is made of a model with sampled blocks (the estimators and
        controllers that know where they rest)."""
        return None

    def input_limits(self) -> dict[str, tuple[float, float]]:
        """{}, as the full model answers: input ranges come from robot files (an MJCF's ``ctrlrange``), which are
        loaded whole, never recorded (:func:`load_cached`)."""
        return {}

    def initial_state(self) -> Vector:
        """Zeros, as the full model answers: the kinds that start elsewhere (moving bases, MJCF robots) are never
        recorded (:func:`load_cached`, :func:`_record`)."""
        return np.zeros(self.n_states)

    def roles(self) -> tuple[()]:
        """(), as the full model answers (no sampled blocks: no estimators or predictive controllers)."""
        return ()

    def open_loop(self, port: str) -> Any:
        """A diagram's loop opened at ``port``, from its own record (made from the full diagram the first time);
        refused, as by any model that is not a diagram, for other records."""
        if self._diagram is None or not isinstance(port, str):
            return super().open_loop(port) if self._diagram is None else self.full_model().open_loop(port)
        opened = _opened(self, port)
        if opened is None:
            return self.full_model().open_loop(port)
        loop = opened._diagram
        assert loop is not None  # _opened gives the record of an opened loop
        injected, returned = loop["loop"]
        if dict(opened.parameters) != dict(self.parameters):
            opened = opened.with_parameters(dict(self.parameters))
        return opened, injected, returned

    def linearization_source(self) -> str | None:
        """A diagram's composed linearization, as its record keeps it (robodyn.files.cached_diagram); None for other
        models, as the full model answers."""
        fields = self._diagram
        return None if fields is None else str(fields["linearization"])

    def block_diagram(self) -> dict[str, Any] | None:
        """A diagram's drawing facts, from its record (None for other models)."""
        fields = self._diagram
        return None if fields is None else cached_diagram.drawing(fields)

    def manipulator(self) -> Any:
        """None for a diagram (as the diagram answers); the full model's for other records."""
        return None if self._diagram is not None else self.full_model().manipulator()

    def linear_by_construction(self) -> str | None:
        return self._record["linear_by_construction"]

    def units(self) -> dict[str, str]:
        return dict(self._record["units"])

    def position_limits(self) -> dict[str, tuple[float | None, float | None]]:
        return {k: (v[0], v[1]) for k, v in self._record["position_limits"].items()}

    def kernel_rhs_source(self) -> str:
        return str(self._record["sources"]["rhs"])

    def kernel_jacobian_source(self) -> str | None:
        return self._record["sources"]["jacobian"]

    def kernel_output_source(self) -> str | None:
        return self._record["sources"]["output"]

    def symbol_table(self) -> Any:
        """The symbol table, building the full model only when an event is parsed (robodyn.files.deferred); a
        diagram's is the full diagram's (its own symbols for block.name)."""
        return DeferredTable(self) if self._diagram is None else self.full_model().symbol_table()

    # --- numbers from the generated code -------------------------------------------------------------------------
    def _compiled(self, which: str) -> Callable[..., None] | None:
        """The compiled ``rhs``, ``jac`` or ``out_fn`` of the record's sources (robodyn.model.compiled)."""
        from robodyn.model.compiled import python_function

        return python_function(self, which)

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        out = np.empty(self.n_states)
        rhs = self._compiled("rhs")
        assert rhs is not None
        rhs(float(t), x, u, p, out)
        return out

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        if self.outputs_are_states:
            return x.copy()
        out_fn = self._compiled("output")
        if out_fn is None:
            return self.full_model().h_raw(t, x, u, p)
        out = np.empty(self.n_outputs)
        out_fn(float(t), x, u, p, out)
        return out

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        jac = self._compiled("jacobian")
        if jac is None:
            return self.full_model().jacobians_raw(t, x, u, p)
        n, m = self.n_states, self.n_inputs
        out = np.empty(n * n + n * m)
        jac(float(t), x, u, p, out)
        return out[: n * n].reshape(n, n), out[n * n:].reshape(n, m)

    def output_jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector
                             ) -> tuple[np.ndarray, np.ndarray] | None:
        if self._linearization() is not None:  # a diagram: C and D of its compiled linearization, as it gives them
            n, m, q = self.n_states, self.n_inputs, self.n_outputs
            flat = self.linearization_raw(t, x, u, p)[n * (n + m):]
            return flat[: q * n].reshape(q, n), flat[q * n:].reshape(q, m)
        if self.outputs_are_states:
            return super().output_jacobians_raw(t, x, u, p)
        return self.full_model().output_jacobians_raw(t, x, u, p)

    # --- the exact linearization: a diagram's compiled lin, the full model's for other records -----------------
    def _linearization(self) -> Callable[..., None] | None:
        """The compiled ``lin`` of a diagram's record (robodyn.model.compiled.linearization_function), or None."""
        fields = self._diagram
        if fields is None:
            return None
        memo = self.memo()
        if "record lin" not in memo:
            from robodyn.model.compiled import linearization_function

            memo["record lin"] = linearization_function(self, fields["linearization"])
        found: Callable[..., None] = memo["record lin"]
        return found

    def linearization_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        lin = self._linearization()
        if lin is None:
            return self.full_model().linearization_raw(t, x, u, p)
        out = np.empty((self.n_states + self.n_outputs) * (self.n_states + self.n_inputs))
        lin(float(t), x, u, p, out)
        return out

    def linearization_into(self, t: float, x: Vector, u: Vector, p: Vector, out: np.ndarray) -> None:
        if self._linearization() is None:
            self.full_model().linearization_into(t, x, u, p, out)
        else:
            super().linearization_into(t, x, u, p, out)

    def bound_linearization(self, t: float, p: Vector, out: np.ndarray) -> Callable[[Vector, Vector], float | None]:
        if self._linearization() is None:
            return self.full_model().bound_linearization(t, p, out)
        return super().bound_linearization(t, p, out)

    def linearization_call(self, t: float, p: Vector) -> tuple[Any, np.ndarray] | None:
        return None if self._linearization() is not None else self.full_model().linearization_call(t, p)


def _opened(model: CachedModel, port: str) -> CachedModel | None:
    """The record's model of ``model``'s diagram opened at ``port`` (made and kept the first time, from the full
    diagram at its file's parameter values), or None when the opened loop is not recorded."""
    from robodyn.codegen.cache import content_hash

    key = content_hash("robodyn open loop", model.record_key, port)
    found = _models.get(key)
    if found is not None:
        return found
    path = record_path(key)
    record = _read(path, key)
    source = model._source.opened(port)
    if record is None or (record.get("diagram") or {}).get("loop") is None:
        opened, injected, returned = _loop(model._source.model(), port)  # the names and errors: the diagram's
        record = _record(opened, key, [])
        if record is None or "diagram" not in record:
            return None
        record["diagram"]["loop"] = [injected, returned]
        _write(path, record)
        source = _Source(source.text, source.source, opened, port)
    found = _models[key] = CachedModel(record, source)
    return found


def _loop(full: Model, port: str) -> tuple[Model, str, str]:
    """``full.open_loop(port)``: a diagram's opened loop is a diagram (a Model)."""
    opened, injected, returned = full.open_loop(port)
    assert isinstance(opened, Model)
    return opened, injected, returned


def _delegate(name: str) -> Callable[..., Any]:
    def method(self: CachedModel, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.full_model(), name)(*args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"The full model's ``{name}`` (:meth:`CachedModel.full_model`)."
    return method


for _name in DELEGATED:
    setattr(CachedModel, _name, _delegate(_name))
