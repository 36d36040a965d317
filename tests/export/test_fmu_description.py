"""The FMU's variables and modelDescription.xml (robodyn.export.fmu_description): names made unique, units declared,
the model structure's dependencies against the Jacobians' nonzeros, text from the model escaped, control characters
refused; checked by FMPy's reader and validation where a unit is built."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError
from robodyn.export.fmu import export_fmu
from robodyn.export.fmu_description import Unit, fmu_variables, model_description, tape_dependencies

HOSTILE = 'a */ <b> & "c" \'d\' \u00e9 ]]> <!--'


def _unit(model: Any, fmi: int = 2, co_simulation: bool = False) -> tuple[tuple[Any, ...], Unit]:
    variables = fmu_variables(model)
    exported = model.exported_functions()
    reads = tape_dependencies(exported.tape, [*exported.functions["f"], *exported.functions["h"]], model.n_states)
    unknowns = [v for v in variables if v.group == "derivative"] + [v for v in variables if v.group == "output"]
    nx = model.n_states
    dependencies = {v.reference + 1: tuple(k + 1 if k < nx else 2 * nx + k - nx + 1 for k in leaves)
                    for v, leaves in zip(unknowns, reads)}
    return variables, Unit("m", fmi, co_simulation, model.name, "{0}", 1e-3, ("m.c",), dependencies)


def test_variables_are_grouped_and_named_uniquely() -> None:
    """States, derivatives, inputs, outputs, parameters in that order with consecutive value references; an output
    named as a state gets ``y.``; starts are 0 for states and inputs, the defaults for parameters; units are the
    model's."""
    model = robodyn.load("pendulum")
    variables = fmu_variables(model)
    assert [v.name for v in variables] == ["theta", "theta_dot", "der(theta)", "der(theta_dot)", "tau", "y.theta",
                                           "y.theta_dot", "m", "g", "l"]
    assert [v.reference for v in variables] == list(range(10))
    assert [v.start for v in variables] == [0.0, 0.0, None, None, 0.0, None, None, 1.0, 9.81, 1.0]
    assert [v.derivative_of for v in variables[2:4]] == [1, 2]
    assert [v.unit for v in variables] == ["rad", "rad/s", None, None, "N m", "rad", "rad/s", "kg", "m/s^2", "m"]


def test_dependencies_are_the_jacobians_nonzeros() -> None:
    """Each derivative's and output's dependencies (the leaves its value reads on the tape) cover every nonzero of
    robodyn's exact A, B, C, D at random points, and for the two-link arm they are exactly those nonzeros (q' reads
    only q_dot; q'' reads q, q_dot and both torques)."""
    model = robodyn.load("two_link_arm")
    exported = model.exported_functions()
    assert exported is not None
    reads = tape_dependencies(exported.tape, [*exported.functions["f"], *exported.functions["h"]], model.n_states)
    rng = np.random.default_rng(0)
    pattern = np.zeros((8, 6), dtype=bool)
    for _ in range(3):
        lin = robodyn.linearize(model, rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 2))
        pattern |= np.block([[lin.A, lin.B], [lin.C, lin.D]]) != 0
    listed = np.zeros_like(pattern)
    for row, leaves in enumerate(reads):
        listed[row, list(leaves)] = True
    assert (pattern <= listed).all() and (pattern == listed).all()
    assert reads[:2] == [(2,), (3,)]


def test_model_structure_lists_outputs_derivatives_and_initial_unknowns() -> None:
    """FMI 2: Outputs and Derivatives with 1-based indices and dependencies, InitialUnknowns sorted by index."""
    model = robodyn.load("pendulum")
    variables, unit = _unit(model)
    root = ET.fromstring(model_description(variables, unit))
    structure = root.find("ModelStructure")
    assert structure is not None
    assert [(u.get("index"), u.get("dependencies")) for u in structure.iter("Unknown")][:4] == [
        ("6", "1"), ("7", "2"), ("3", "2"), ("4", "1 5")]
    assert [u.get("index") for u in structure.find("InitialUnknowns") or []] == ["3", "4", "6", "7"]
    assert root.get("fmiVersion") == "2.0" and root.get("numberOfEventIndicators") == "0"
    exchange = root.find("ModelExchange")
    assert exchange is not None and exchange.get("providesDirectionalDerivative") == "true"
    assert {u.get("name") for u in root.iter("Unit")} == {"rad", "rad/s", "N m", "kg", "m/s^2", "m"}


def test_text_from_the_model_is_escaped() -> None:
    """A model's name and its inputs' and outputs' names with quotes, ``<``, ``&``, a CDATA end and a comment start
    read back as given from the XML (ElementTree escapes attributes)."""
    plant = robodyn.load("joint")
    gain = robodyn.SymbolicSystem([], ["err"], {}, outputs={"v": "-kp*err"}, parameters={"kp": 4.0})
    loop = robodyn.Diagram({"plant": plant, "gain": gain}, ["plant.q -> gain.err"], inputs={HOSTILE: "plant.u"},
                           outputs={HOSTILE + " out": "gain.v"}, name=HOSTILE)
    variables, unit = _unit(loop)
    root = ET.fromstring(model_description(variables, unit))
    assert root.get("modelName") == HOSTILE
    names = [v.get("name") for v in root.iter("ScalarVariable")]
    assert HOSTILE in names and HOSTILE + " out" in names


@pytest.mark.parametrize("name", ["a\nb", "tab\there", "cr\r", "nul\x00"])
def test_control_characters_in_names_are_refused(name: str) -> None:
    """FMI's flat names cannot hold a newline, carriage return or tab, and XML cannot hold NUL: refused naming the
    name."""
    plant = robodyn.load("joint")
    loop = robodyn.Diagram({"plant": plant}, [], inputs={name: "plant.u"}, outputs={"q": "plant.q"})
    with pytest.raises(InputError, match=r"the input name .* control characters"):
        fmu_variables(loop)


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_a_hostile_model_builds_and_validates(tmp_path: Path) -> None:
    """The same hostile names through a whole export, with parameters whose C fields are mangled (``NAN``, ``new``):
    FMPy reads the unit back with the names as given and validates it."""
    fmpy = pytest.importorskip("fmpy")
    from fmpy.validation import validate_fmu

    plant = robodyn.SymbolicSystem(["x"], ["u"], {"x": "-NAN*x + new*u"}, parameters={"NAN": 3.0, "new": 2.0},
                                   name=HOSTILE)
    export = export_fmu(plant, tmp_path / "h.fmu")
    assert validate_fmu(str(export.path)) == []
    description = fmpy.read_model_description(str(export.path))
    assert description.modelName == HOSTILE
    assert [v.name for v in description.modelVariables] == ["x", "der(x)", "u", "y.x", "NAN", "new"]
    loop = robodyn.Diagram({"plant": plant}, [], inputs={HOSTILE: "plant.u"}, outputs={HOSTILE + " out": "plant.x"},
                           name="loop")
    export = export_fmu(loop, tmp_path / "loop.fmu")
    assert validate_fmu(str(export.path)) == []
    names = [v.name for v in fmpy.read_model_description(str(export.path)).modelVariables]
    assert names == ["plant.x", "der(plant.x)", HOSTILE, HOSTILE + " out", "plant.NAN", "plant.new"]
