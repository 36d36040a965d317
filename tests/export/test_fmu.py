"""FMU export (robodyn.export.fmu) checked by FMPy, an independent importer, for FMI 2.0 and 3.0: its validation
accepts every unit; FMPy's CVode on the model-exchange unit reproduces robodyn's simulate; the co-simulation unit
reproduces robodyn's RK4 stepper; the directional derivatives equal robodyn's linearize; bad requests are one line
and write nothing."""

from __future__ import annotations

import re
import shutil
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.cli_run import one_line, run
from tests.pinocchio_reference import ROBOTS

import robodyn
from robodyn.base.errors import InputError
from robodyn.export.fmu import export_fmu

fmpy = pytest.importorskip("fmpy")
from fmpy import extract, read_model_description, simulate_fmu  # noqa: E402
from fmpy.fmi2 import FMU2Model, FMU2Slave  # noqa: E402
from fmpy.fmi3 import FMU3Model, FMU3Slave  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")

ROOT = Path(__file__).resolve().parents[2]


def _panda_arm() -> Path:
    """example-robot-data's panda.urdf with the finger joints fixed: the seven arm joints (as
    benchmarks/bench_control.py's Panda)."""
    assert ROBOTS is not None
    text = (ROBOTS / "panda_description/urdf/panda.urdf").read_text(encoding="utf-8")
    path = Path(tempfile.mkdtemp()) / "panda_arm.urdf"
    path.write_text(text.replace('type="prismatic"', 'type="fixed"'), encoding="utf-8")
    return path


def _model(name: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return robodyn.load(str(_panda_arm()) if name == "panda" else name)


MODELS = ["pendulum", "two_link_arm", pytest.param("panda", marks=[
    pytest.mark.slow, pytest.mark.skipif(ROBOTS is None, reason="no example-robot-data")])]


@pytest.fixture(scope="module", params=[pytest.param((model, fmi), marks=getattr(model, "marks", ()),
                                                      id=f"{getattr(model, 'values', [model])[0]}-fmi{fmi}")
                                         for model in MODELS for fmi in (2, 3)])
def units(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The model and its two units of one FMI version (model exchange, co-simulation with 2.5 ms RK4 substeps),
    each compiled once."""
    name, fmi = request.param
    name = getattr(name, "values", [name])[0]
    model = _model(name)
    folder = tmp_path_factory.mktemp("fmu")
    return {"model": model, "name": name, "fmi": fmi, "me": export_fmu(model, folder / "me.fmu", fmi=fmi),
            "cs": export_fmu(model, folder / "cs.fmu", kind="cs", step=2.5e-3, fmi=fmi)}


def _start(model: Any, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.5, 0.5, model.n_states), rng.uniform(-0.5, 0.5, model.n_inputs)


def _references(export: Any, group: str) -> list[int]:
    return [v.reference for v in export.variables if v.group == group]


def test_fmpy_validates_every_unit(units: dict[str, Any]) -> None:
    """FMPy's validation (the XML schema, names, the model structure, start values, causalities, units) finds no
    problem, and the archive holds the description, the binary for this platform and the sources."""
    for kind in ("me", "cs"):
        export = units[kind]
        assert validate_fmu(str(export.path)) == []
        names = set(zipfile.ZipFile(export.path).namelist())
        p = export.model_identifier
        platform = "x86_64-linux" if export.fmi == 3 else "linux64"
        assert {"modelDescription.xml", f"binaries/{platform}/{p}.so", f"sources/{p}.c",
                f"sources/{p}_fmi{export.fmi}.c", f"sources/{p}.h"} == names


def test_model_exchange_reproduces_robodyns_trajectory(units: dict[str, Any]) -> None:
    """FMPy's CVode (BDF) on the unit and robodyn's simulate, both at rtol 1e-12 (FMPy's absolute tolerance is rtol
    times the nominal 1; robodyn's atol the same), from a random state under a constant input (the Panda's: the
    torques that hold its start against gravity and a push of up to 0.5 N m, from speeds up to 0.2 rad/s), for 1 s:
    equal to 1e-8 absolute.
    Measured: 3e-9 for the Panda (its wrist reaches 34 rad/s), whose robodyn run agrees with DOP853 at rtol 1e-13 to
    3e-10: the difference is CVode's error, which falls with its rtol (1.6e-7 at 1e-10, 5e-10 at 1e-13)."""
    model, export = units["model"], units["me"]
    x0, u = _start(model, 1)
    if units["name"] == "panda":
        rng = np.random.default_rng(1)
        x0 = np.concatenate([rng.uniform(-0.5, 0.5, 7), rng.uniform(-0.2, 0.2, 7)])
        u = model.inverse_dynamics(x0[:7], np.zeros(7), np.zeros(7)) + rng.uniform(-0.5, 0.5, 7)
    names = {v.reference: v.name for v in export.variables}
    start = {names[r]: value for r, value in zip(_references(export, "state"), x0)}
    start |= {names[r]: value for r, value in zip(_references(export, "input"), u)}
    states = [names[r] for r in _references(export, "state")]
    result = simulate_fmu(str(export.path), start_values=start, relative_tolerance=1e-12, output_interval=0.01,
                          stop_time=1.0, output=states)
    reference = robodyn.simulate(model, 1.0, x0, u, rtol=1e-12, atol=1e-12, t_eval=result["time"], limits="ignore")
    theirs = np.column_stack([result[name] for name in states])
    assert np.abs(theirs - reference.x).max() <= 1e-8


class _Running:
    """One instance of a unit through FMPy's classes of its FMI version and kind, initialized, with the calls the
    tests make."""

    def __init__(self, export: Any) -> None:
        description = read_model_description(str(export.path))
        self.fmi3 = export.fmi == 3
        cls = {(False, "me"): FMU2Model, (False, "cs"): FMU2Slave, (True, "me"): FMU3Model,
               (True, "cs"): FMU3Slave}[self.fmi3, export.kind]
        self.unit = cls(guid=description.guid, unzipDirectory=extract(str(export.path)),
                        modelIdentifier=export.model_identifier, instanceName="robodyn")
        self.unit.instantiate()
        if not self.fmi3:
            self.unit.setupExperiment(startTime=0.0)
        self.unit.enterInitializationMode()
        self.unit.exitInitializationMode()

    def get(self, references: list[int]) -> np.ndarray:
        return np.array(self.unit.getFloat64(references) if self.fmi3 else self.unit.getReal(references))

    def set(self, references: list[int], values: Any) -> None:
        (self.unit.setFloat64 if self.fmi3 else self.unit.setReal)(references, [float(v) for v in values])

    def step(self, t: float, h: float) -> None:
        self.unit.doStep(currentCommunicationPoint=t, communicationStepSize=h)  # FMPy raises on an error status

    def directional(self, unknowns: list[int], knowns: list[int], seed: Any) -> np.ndarray:
        return np.array(self.unit.getDirectionalDerivative(unknowns, knowns, [float(v) for v in seed]))

    def derivatives(self, nx: int) -> np.ndarray:
        import ctypes

        values = (ctypes.c_double * nx)()
        (self.unit.getContinuousStateDerivatives if self.fmi3 else self.unit.getDerivatives)(values, nx)
        return np.array(values)

    def close(self) -> None:
        self.unit.terminate()
        self.unit.freeInstance()


def test_co_simulation_reproduces_robodyns_rk4(units: dict[str, Any]) -> None:
    """fmi2DoStep over 10 ms communication steps, each 4 RK4 substeps of 2.5 ms, equals robodyn's rk4 at dt = 2.5 ms
    at every communication point, to 1e-12 of the largest state (the same tableau on the same f: they agree to
    round-off), with parameters changed through fmi2SetReal; the outputs are the model's h."""
    model, export = units["model"], units["cs"]
    x0, u = _start(model, 2)
    params = model.parameter_vector(None) * np.random.default_rng(3).uniform(0.9, 1.1, len(model.parameters))
    unit = _Running(export)
    states = _references(export, "state")
    unit.set(states, x0)
    unit.set(_references(export, "input"), u)
    unit.set(_references(export, "parameter"), params)
    reached = [unit.get(states)]
    for k in range(20):
        unit.step(0.01 * k, 0.01)
        reached.append(unit.get(states))
    outputs = unit.get(_references(export, "output"))
    unit.close()
    reference = robodyn.simulate(model, 0.2, x0, u, method="rk4", dt=2.5e-3, params=params, limits="ignore")
    expected = reference.x[::4]
    assert expected.shape == (21, model.n_states)
    assert np.abs(np.array(reached) - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())
    y = model.h(0.2, np.array(reached[-1]), u, params)
    assert np.abs(outputs - y).max() <= 1e-12 * max(1.0, np.abs(y).max())


def test_directional_derivatives_are_robodyns_jacobians(units: dict[str, Any]) -> None:
    """fmi2GetDirectionalDerivative (fmi3GetDirectionalDerivative) through FMPy, seeded with each state and input in
    turn, gives the columns of [[A, B], [C, D]] of robodyn.linearize to 1e-12 of the largest entry, at two random
    points; the derivatives fmi2GetDerivatives (fmi3GetContinuousStateDerivatives) returns are f."""
    model, export = units["model"], units["me"]
    unit = _Running(export)
    states, inputs = _references(export, "state"), _references(export, "input")
    unknowns = _references(export, "derivative") + _references(export, "output")
    for seed in (4, 5):
        x, u = _start(model, seed)
        unit.set(states, x)
        unit.set(inputs, u)
        columns = [unit.directional(unknowns, states + inputs, seed_)
                   for seed_ in np.eye(len(states) + len(inputs))]
        mine = np.array(columns).T
        lin = robodyn.linearize(model, x, u)
        expected = np.block([[lin.A, lin.B], [lin.C, lin.D]])
        assert np.abs(mine - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())
        f = model.f(0.0, x, u)
        assert np.abs(unit.derivatives(model.n_states) - f).max() <= 1e-12 * max(1.0, np.abs(f).max())
    unit.close()


def test_a_continuous_diagram_becomes_one_unit(tmp_path: Path) -> None:
    """A continuous-time diagram (the arm with its motors) exports flattened: FMPy validates it and its derivatives
    are the diagram's f; a sampled diagram is refused naming why, and nothing is written."""
    model = _model(str(ROOT / "examples" / "arm_motors.yaml"))
    export = export_fmu(model, tmp_path / "arm_motors.fmu")
    assert validate_fmu(str(export.path)) == []
    assert [v.name for v in export.variables if v.group == "state"] == list(model.states)
    unit = _Running(export)
    x, u = _start(model, 6)
    unit.set(_references(export, "state"), x)
    unit.set(_references(export, "input"), u)
    f = model.f(0.0, x, u)
    assert np.abs(unit.derivatives(model.n_states) - f).max() <= 1e-12 * max(1.0, np.abs(f).max())
    unit.close()
    sampled = _model(str(ROOT / "examples" / "arm_motors_pd.yaml"))
    with pytest.raises(InputError, match=r"sampled blocks \(base period .*continuous-time dynamics only"):
        export_fmu(sampled, tmp_path / "pd.fmu")
    assert not (tmp_path / "pd.fmu").exists()


def test_the_same_model_gives_the_same_unit(tmp_path: Path) -> None:
    """The archive's bytes (fixed dates, the GUID a hash of the unit) are the same for two exports of one model, and
    another parameter default changes the GUID."""
    model = _model("pendulum")
    first = export_fmu(model, tmp_path / "a.fmu")
    second = export_fmu(model, tmp_path / "b.fmu")
    assert first.path.read_bytes() == second.path.read_bytes()
    assert export_fmu(model.with_parameters(m=2.0), tmp_path / "c.fmu").guid != first.guid
    assert re.fullmatch(r"\{[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}\}", first.guid)


@pytest.mark.parametrize(("extra", "message"), [
    (["--fmi", "4"], "--fmi '4': the FMI versions written are 2, 3"),
    (["--kind", "both"], "--kind 'both': choose me (model exchange) or cs (co-simulation)"),
    (["--step", "0"], "--step 0.0 is not > 0"),
    (["--step", "inf"], "--step"),
    (["--functions", "f"], "--functions: not an option of --lang fmu"),
    (["--prefix", "while"], "prefix 'while' is not a C identifier"),
    (["--out", "FOLDER"], "is a folder"),
])
def test_bad_fmu_requests_are_one_line_and_write_nothing(extra: list[str], message: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown FMI version or kind, a step that is not a positive number, a C export's option, a prefix that is
    not a safe C name, an output that is a folder: one line naming it, exit code 2, nothing written."""
    target = tmp_path / "out.fmu"
    arguments = ["--out", str(target), *(str(tmp_path) if a == "FOLDER" else a for a in extra)]
    code, _, err = run(capsys, "export", "pendulum", "--lang", "fmu", *arguments)
    assert code == 2 and message in one_line(err), err
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_the_cli_writes_a_unit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``robodyn export MODEL --lang fmu --kind cs`` writes a unit FMPy accepts and names its variables, ``--fmi 3``
    an FMI 3.0 unit; ``--lang c`` refuses the FMU's options."""
    code, out, err = run(capsys, "export", "pendulum", "--lang", "fmu", "--kind", "cs", "--step", "1e-3/2",
                         "--out", str(tmp_path / "p.fmu"))
    assert code == 0, err
    assert "FMI 2.0, co-simulation, RK4 substeps of at most 0.0005 s; modelIdentifier pendulum" in out
    assert "variables: theta, theta_dot, der(theta), der(theta_dot), tau, y.theta, y.theta_dot, m, g, l" in out
    assert validate_fmu(str(tmp_path / "p.fmu")) == []
    code, out, err = run(capsys, "export", "pendulum", "--lang", "fmu", "--fmi", "3", "--out", str(tmp_path / "3.fmu"))
    assert code == 0 and "(FMI 3.0, model exchange; modelIdentifier pendulum)" in out, err
    assert read_model_description(str(tmp_path / "3.fmu")).fmiVersion == "3.0"
    assert validate_fmu(str(tmp_path / "3.fmu")) == []
    code, out, err = run(capsys, "export", "pendulum", "--kind", "cs", "--out", str(tmp_path / "c"))
    assert code == 2 and "--kind: not an option of --lang c" in one_line(err)


def test_a_missing_compiler_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a C compiler on the PATH the export says so and what to do, in one line (exit 2); nothing is
    written."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    import robodyn.codegen.libraries as libraries

    libraries.c_compiler.cache_clear()
    try:
        code, _, err = run(capsys, "export", "pendulum", "--lang", "fmu", "--out", str(tmp_path / "p.fmu"))
    finally:
        libraries.c_compiler.cache_clear()
    assert code == 2 and "no C compiler found" in one_line(err)
    assert not (tmp_path / "p.fmu").exists()


_SWING = """<mujoco model="swing">
  <worldbody>
    <body name="cart" pos="0 0 1">
      <joint name="rail" type="slide" axis="1 0 0" ref="0.25"/>
      <geom type="box" size=".1 .1 .1" mass="2"/>
      <body name="arm">
        <joint name="hinge" axis="0 1 0" ref="0.4"/>
        <geom type="capsule" fromto="0 0 0 0 0 -.5" size=".02" mass=".3"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="hinge"/></actuator>
</mujoco>
"""


@pytest.mark.parametrize("fmi", [2, 3])
def test_a_unit_starts_at_the_models_initial_state(fmi: int, tmp_path: Path) -> None:
    """An MJCF robot's unit declares the model's initial state (its qpos0: the joints' ref) as the states' start
    values and an instance starts there; f there equals robodyn's."""
    path = tmp_path / "swing.xml"
    path.write_text(_SWING, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the geoms' contacts, which robodyn does not model
        model = robodyn.load(str(path))
    x0 = np.asarray(model.initial_state(), dtype=float)
    assert np.count_nonzero(x0) == 2  # the reader's qpos0 (ref): the test's premise
    export = export_fmu(model, tmp_path / "swing.fmu", fmi=fmi)
    description = read_model_description(str(export.path))
    starts = {v.name: float(v.start) for v in description.modelVariables if v.start is not None}
    names = [v.name for v in export.variables if v.group == "state"]
    assert [starts[name] for name in names] == [float(v) for v in x0]
    unit = _Running(export)
    reached = unit.get(_references(export, "state"))
    rates = unit.derivatives(model.n_states)
    unit.close()
    assert np.array_equal(reached, x0)
    expected = model.f(0.0, x0, np.zeros(model.n_inputs))
    assert np.abs(rates - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())  # the same C on the same f
