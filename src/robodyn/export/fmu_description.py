"""The ``modelDescription.xml`` of an exported FMU (FMI 2.0 and 3.0) and the variables it declares.

The unit's variables, in this order (their value references, robodyn.export.fmi2_c.value_references): the states
(``local``, ``continuous``, start the model's initial state: an MJCF robot's qpos0), their derivatives
``der(state)`` (``calculated``), the inputs (``input``, start 0), the outputs (``output``, ``calculated``) and the
parameters (``parameter``, ``tunable``, start the model's value). Names are the model's own, in the ``flat``
naming convention; an output, derivative, input or parameter
whose name is already taken gets its group's tag before it (``y.theta`` for an output ``theta`` beside the state
``theta``). Units are the model's (``model.units()``), each declared in ``UnitDefinitions``. The model structure
lists each derivative's and output's dependencies on the states and inputs: the leaves its value reads on the
model's tape (:func:`tape_dependencies`, a superset of the true dependencies: a product with a zero stays).

References: FMI 2.0.4 specification, sections 2.2 (modelDescription.xml) and 3.2 / 4.2 (model exchange,
co-simulation); FMI 3.0.2 specification, section 2.4.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from robodyn.base.errors import InputError
from robodyn.base.version import __version__
from robodyn.rigid.tape import BINARY, UNARY

__all__ = ["FmuVariable", "Unit", "fmu_variables", "model_description", "state_starts", "tape_dependencies"]

_X_ARGUMENTS: Final = (1, 4)  # the exported f and h read x as leaf arguments 1 and 4 (robodyn.export.c)
_U_ARGUMENT: Final = 2


@dataclass(frozen=True, slots=True)
class FmuVariable:
    """One variable of the unit: its ``name``, value ``reference``, ``causality`` (local, input, output,
    parameter), ``group`` (state, derivative, input, output, parameter), ``start`` (None when calculated),
    ``unit`` (or None) and, for a derivative, the 1-based index of its state among the variables."""

    name: str
    reference: int
    causality: str
    group: str
    start: float | None = None
    unit: str | None = None
    derivative_of: int | None = None


@dataclass(frozen=True, slots=True)
class Unit:
    """What the description needs to know about the unit: its identifier, kind and version, the model's name, the
    GUID (FMI 3's instantiation token), the RK4 substep of co-simulation, the source files, and each derivative's
    and output's dependencies (1-based indices of states and inputs among the variables)."""

    identifier: str
    fmi: int
    co_simulation: bool
    model_name: str
    guid: str
    step: float
    sources: tuple[str, ...]
    dependencies: Mapping[int, tuple[int, ...]]


def _check_name(name: str, what: str) -> str:
    bad = [char for char in name if ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 or 0xD800 <= ord(char) < 0xE000
           or ord(char) in (0xFFFE, 0xFFFF)]
    if not name or bad:
        raise InputError(f"FMU export: the {what} name {name!r} is empty or holds control characters, which an FMU's "
                         "names (modelDescription.xml, flat naming) cannot hold: rename it")
    return name


def _unique(name: str, tag: str, taken: set[str]) -> str:
    candidate, k = name, 1
    while candidate in taken:
        candidate = f"{tag}.{name}" if k == 1 else f"{tag}.{name}#{k}"
        k += 1
    taken.add(candidate)
    return candidate


def state_starts(model: Any) -> list[float]:
    """The states' start values: the model's initial state (an MJCF robot's qpos0), checked finite."""
    starts = [float(v) for v in np.asarray(model.initial_state(), dtype=float).reshape(-1)]
    if len(starts) != model.n_states or not all(math.isfinite(v) for v in starts):
        raise InputError(f"FMU export: the initial state of {model.name!r} is not {model.n_states} finite numbers: "
                         "give the model finite initial values")
    return starts


def fmu_variables(model: Any) -> tuple[FmuVariable, ...]:
    """The unit's variables for ``model`` (the module docstring: order, names, starts, units)."""
    units = model.units()
    groups = {"state": list(model.states), "input": list(model.inputs), "parameter": list(model.parameters),
              "output": list(model.outputs)}
    for group, names in groups.items():
        for name in names:
            _check_name(str(name), group)
    taken: set[str] = set()
    states = [_unique(name, "x", taken) for name in model.states]
    inputs = [_unique(name, "u", taken) for name in model.inputs]
    parameters = [_unique(name, "p", taken) for name in model.parameters]
    derivatives = [_unique(f"der({name})", "der", taken) for name in model.states]
    outputs = [_unique(name, "y", taken) for name in model.outputs]
    nx = len(states)
    variables: list[FmuVariable] = []

    def add(name: str, causality: str, group: str, start: float | None, source: str | None,
            derivative_of: int | None = None) -> None:
        unit = None if source is None else units.get(source)
        variables.append(FmuVariable(name, len(variables), causality, group, start, unit or None, derivative_of))

    for name, source, start in zip(states, model.states, state_starts(model)):
        add(name, "local", "state", start, source)
    for k, name in enumerate(derivatives):
        add(name, "local", "derivative", None, None, k + 1)
    for name, source in zip(inputs, model.inputs):
        add(name, "input", "input", 0.0, source)
    for name, source in zip(outputs, model.outputs):
        add(name, "output", "output", None, source)
    for (source, value), name in zip(model.parameters.items(), parameters):
        add(name, "parameter", "parameter", float(value), source)
    assert len(variables) == 2 * nx + len(inputs) + len(outputs) + len(parameters)
    return tuple(variables)


def tape_dependencies(tape: Any, outputs: Sequence[Any], nx: int) -> list[tuple[int, ...]]:
    """For each output node, the states (0 .. nx-1) and inputs (nx + j) its value reads on ``tape``, sorted: one
    forward pass over the tape, each node's leaves a bit set (exact structurally; a zero that arithmetic makes
    is not seen, so the sets may only be too large)."""
    last = max((o.index for o in outputs), default=-1)
    reads: list[int] = [0] * (last + 1)
    for index in range(last + 1):
        op, a, b = tape.nodes[index]
        if op == "leaf":
            reads[index] = 1 << b if a in _X_ARGUMENTS else 1 << (nx + b) if a == _U_ARGUMENT else 0
        elif op in BINARY:
            reads[index] = reads[a] | reads[b]
        elif op in UNARY:
            reads[index] = reads[a]
    result = []
    for o in outputs:
        bits = reads[o.index]
        result.append(tuple(k for k in range(bits.bit_length()) if bits >> k & 1))
    return result


def _number(value: float) -> str:
    return repr(float(value))


def _scalar_2(parent: ET.Element, variable: FmuVariable) -> None:
    element = ET.SubElement(parent, "ScalarVariable", name=variable.name, valueReference=str(variable.reference),
                            causality=variable.causality,
                            variability="tunable" if variable.group == "parameter" else "continuous")
    if variable.group == "state":
        element.set("initial", "exact")
    real = ET.SubElement(element, "Real")
    if variable.start is not None:
        real.set("start", _number(variable.start))
    if variable.unit is not None:
        real.set("unit", variable.unit)
    if variable.derivative_of is not None:
        real.set("derivative", str(variable.derivative_of))


def _scalar_3(parent: ET.Element, variable: FmuVariable) -> None:
    element = ET.SubElement(parent, "Float64", name=variable.name, valueReference=str(variable.reference),
                            causality=variable.causality,
                            variability="tunable" if variable.group == "parameter" else "continuous")
    if variable.group == "state":
        element.set("initial", "exact")
    if variable.start is not None:
        element.set("start", _number(variable.start))
    if variable.unit is not None:
        element.set("unit", variable.unit)
    if variable.derivative_of is not None:
        element.set("derivative", str(variable.derivative_of - 1))  # FMI 3: the state's value reference


def _structure(root: ET.Element, variables: Sequence[FmuVariable], unit: Unit) -> None:
    """ModelStructure: outputs, derivatives (in the states' order) and initial unknowns with their dependencies
    (FMI 2: indices of the variables; FMI 3: value references)."""
    structure = ET.SubElement(root, "ModelStructure")
    fmi3 = unit.fmi == 3

    def key(variable: FmuVariable) -> str:
        return str(variable.reference) if fmi3 else str(variable.reference + 1)

    def depends(index: int) -> str:
        listed = unit.dependencies[index]
        return " ".join(str(k - 1) if fmi3 else str(k) for k in listed)

    outputs = [v for v in variables if v.group == "output"]
    derivatives = [v for v in variables if v.group == "derivative"]
    if fmi3:
        for tag, members in (("Output", outputs), ("ContinuousStateDerivative", derivatives),
                             ("InitialUnknown", outputs + derivatives)):
            for v in sorted(members, key=lambda v: v.reference) if tag == "InitialUnknown" else members:
                attributes = {"valueReference": key(v)}
                if tag != "InitialUnknown":
                    attributes["dependencies"] = depends(v.reference + 1)
                ET.SubElement(structure, tag, attributes)
        return
    for tag, members in (("Outputs", outputs), ("Derivatives", derivatives),
                         ("InitialUnknowns", sorted(derivatives + outputs, key=lambda v: v.reference))):
        group = ET.SubElement(structure, tag)
        for v in members:
            attributes = {"index": key(v)}
            if tag != "InitialUnknowns":  # initial unknowns: dependencies omitted, on every known (parameters too)
                attributes["dependencies"] = depends(v.reference + 1)
            ET.SubElement(group, "Unknown", attributes)


def model_description(variables: Sequence[FmuVariable], unit: Unit) -> bytes:
    """The ``modelDescription.xml`` of ``unit`` (FMI 2.0 or 3.0) as UTF-8 bytes, the same for the same unit."""
    fmi3 = unit.fmi == 3
    kind_name = "co-simulation" if unit.co_simulation else "model exchange"
    root = ET.Element("fmiModelDescription", {
        "fmiVersion": "3.0" if fmi3 else "2.0", "modelName": unit.model_name,
        ("instantiationToken" if fmi3 else "guid"): unit.guid,
        "description": f"robodyn model {unit.model_name} ({kind_name})",
        "generationTool": f"robodyn {__version__}", "variableNamingConvention": "flat"})
    if not fmi3:
        root.set("numberOfEventIndicators", "0")
    state = "FMUState" if fmi3 else "FMUstate"  # FMI 3 capitalizes the S
    kind = ET.SubElement(root, "CoSimulation" if unit.co_simulation else "ModelExchange", {
        "modelIdentifier": unit.identifier, f"canGetAndSet{state}": "false", f"canSerialize{state}": "false",
        "providesDirectionalDerivatives" if fmi3 else "providesDirectionalDerivative": "true"})
    if unit.co_simulation:
        kind.set("canHandleVariableCommunicationStepSize", "true")
        if not fmi3:
            kind.set("canInterpolateInputs", "false")
    else:
        kind.set("needsCompletedIntegratorStep" if fmi3 else "completedIntegratorStepNotNeeded",
                 "false" if fmi3 else "true")
    if not fmi3:
        files = ET.SubElement(kind, "SourceFiles")
        for name in unit.sources:
            ET.SubElement(files, "File", name=name)
    units = sorted({v.unit for v in variables if v.unit is not None})
    if units:
        definitions = ET.SubElement(root, "UnitDefinitions")
        for name in units:
            ET.SubElement(definitions, "Unit", name=name)
    categories = ET.SubElement(root, "LogCategories")
    ET.SubElement(categories, "Category", name="logStatusError", description="the unit's errors")
    experiment = ET.SubElement(root, "DefaultExperiment", startTime="0.0")
    if unit.co_simulation:
        experiment.set("stepSize", _number(unit.step))
    listed = ET.SubElement(root, "ModelVariables")
    if fmi3:
        ET.SubElement(listed, "Float64", name="time", valueReference=str(len(variables)), causality="independent",
                      variability="continuous", description="simulation time")
    for variable in variables:
        (_scalar_3 if fmi3 else _scalar_2)(listed, variable)
    _structure(root, variables, unit)
    ET.indent(root)
    return ET.tostring(root, encoding="UTF-8", xml_declaration=True) + b"\n"
