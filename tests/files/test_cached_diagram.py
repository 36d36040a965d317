"""A diagram's parsed-model record (robodyn.files.cached_diagram): keyed by every file its blocks name, it answers
f, h, the Jacobians, the linearization and its opened loops bit for bit as the diagram does, without sympy; an edited
block file at any depth makes a new record; a damaged or edited record is refused and made again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.diagrams.diagram import Diagram
from robodyn.files import cached
from robodyn.files.cached import CachedModel, load_cached, record_path
from robodyn.files.loading import model_text
from robodyn.files.records import model_record_key

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CONTROLLER = """name: lag_pi
kind: first_order
states: [xc]
inputs: [r, y]
parameters: {a: 2.0, kp: 10.0, ki: 5.0}
dynamics:
  xc: -a*xc + r - y
outputs: {u: kp*(r - y) + ki*xc}
"""
INNER = """name: inner_loop
kind: diagram
blocks:
  plant: joint
  pi: {model: ../controllers/pi.yaml, parameters: {kp: 20}}
connect: [pi.u -> plant.u, plant.q -> pi.y]
inputs: {r: pi.r}
outputs: {q: plant.q}
"""
OUTER = """name: outer
kind: diagram
blocks:
  loop: loops/inner.yaml
  motor: {model: dc_motor, parameters: {R: 2.0, L: 0.5e-3}}
  pid: {model: pid, parameters: {kp: 3, ki: 1, kd: 0.1}}
connect: [pid.u -> motor.v, motor.tau -> loop.r, loop.q -> pid.y, loop.q -> motor.omega]
inputs: {w: pid.r}
outputs: {q: loop.q, i: motor.i}
"""


@pytest.fixture(autouse=True)
def _fresh_process_table():
    """Each test starts like a new process: no models kept in memory (the records on disk stay)."""
    cached._models.clear()
    yield
    cached._models.clear()


@pytest.fixture()
def nested(tmp_path):
    """A diagram whose block is a diagram file whose block is a model file, in three folders."""
    (tmp_path / "controllers").mkdir()
    (tmp_path / "loops").mkdir()
    (tmp_path / "controllers" / "pi.yaml").write_text(CONTROLLER, encoding="utf-8")
    (tmp_path / "loops" / "inner.yaml").write_text(INNER, encoding="utf-8")
    (tmp_path / "outer.yaml").write_text(OUTER, encoding="utf-8")
    return tmp_path / "outer.yaml"


def _warm(path) -> tuple[CachedModel, Diagram]:
    """The diagram from its record (made first when missing) and the full diagram of the same file."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        load_cached(str(path))
        cached._models.clear()
        model = load_cached(str(path))
        full = robodyn.load(str(path))
    assert isinstance(model, CachedModel) and model._source._full is None  # from the record, not parsed
    assert isinstance(full, Diagram)
    return model, full


def _points(model, count=3):
    rng = np.random.default_rng(7)
    p = model.parameter_vector()
    return [(0.25, rng.normal(size=model.n_states), rng.normal(size=model.n_inputs), p) for _ in range(count)]


@pytest.mark.parametrize("name", ["motor_joint_pid.yaml", "pendulum_lqr_diagram.yaml", "joint_pi.yaml", "nested"])
def test_a_diagrams_record_gives_its_numbers_bit_for_bit(name, nested):
    model, full = _warm(nested if name == "nested" else EXAMPLES / name)
    assert (model.states, model.inputs, model.outputs) == (full.states, full.inputs, full.outputs)
    assert dict(model.parameters) == dict(full.parameters) and model.units() == full.units()
    assert model.block_diagram() == full.block_diagram()
    for point in _points(full):
        assert np.array_equal(model.f_raw(*point), full.f_raw(*point))
        assert np.array_equal(model.h_raw(*point), full.h_raw(*point))
        for ours, theirs in zip(model.jacobians_raw(*point), full.jacobians_raw(*point)):
            assert np.array_equal(ours, theirs)
        for ours, theirs in zip(model.output_jacobians_raw(*point), full.output_jacobians_raw(*point)):
            assert np.array_equal(ours, theirs)
        assert np.array_equal(model.linearization_raw(*point), full.linearization_raw(*point))
    assert model._source._full is None  # none of it parsed the file


def test_the_diagrams_jacobians_are_its_compiled_codes_and_equal_the_chain_rule(nested):
    """The diagram answers f's Jacobian from its compiled forward-mode code (as the record does): checked against
    the chain rule through the blocks' own symbolic Jacobians, an independent derivation (1e-12: both exact, they
    differ by rounding of a few operations on O(100) entries)."""
    full = robodyn.load(str(nested))
    for point in _points(full):
        A, B, dy = full._derivatives(*point)
        C, D = full._output_rows(dy)
        for ours, theirs in zip((*full.jacobians_raw(*point), *full.output_jacobians_raw(*point)), (A, B, C, D)):
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("port", ["pid.u", "motor.tau", "loop.q"])
def test_an_opened_loop_from_its_record_equals_the_diagrams(nested, port):
    model, full = _warm(nested)
    x, u = np.full(model.n_states, 0.1), np.array([0.3])
    ours = robodyn.linearize(model, x, u, open=port)
    theirs = robodyn.linearize(full, x, u, open=port)
    for name in ("A", "B", "C", "D", "x_op", "u_op"):
        assert np.array_equal(getattr(ours, name), getattr(theirs, name)), name
    assert (ours.states, ours.inputs, ours.outputs, ours.name) == (theirs.states, theirs.inputs, theirs.outputs,
                                                                   theirs.name)
    cached._models.clear()
    again = robodyn.linearize(load_cached(str(nested)), x, u, open=port)  # the opened loop's own record, read back
    assert np.array_equal(again.A, theirs.A) and np.array_equal(again.C, theirs.C)
    heavier = robodyn.linearize(model.with_parameters({"motor.R": 3.0}), x, u, open=port)
    assert np.array_equal(heavier.A, robodyn.linearize(full.with_parameters({"motor.R": 3.0}), x, u, open=port).A)
    with pytest.raises(robodyn.UnknownNameError):
        robodyn.linearize(model, x, u, open="pid.nosuch")


@pytest.mark.parametrize("edited, old, new", [("controllers/pi.yaml", "a: 2.0", "a: 2.5"),
                                              ("loops/inner.yaml", "kp: 20", "kp: 25"),
                                              ("outer.yaml", "R: 2.0", "R: 2.5")])
def test_an_edited_file_at_any_depth_makes_a_new_record(nested, edited, old, new):
    text, source = model_text(str(nested))
    key = model_record_key(text, source)
    _, full = _warm(nested)
    before = robodyn.linearize(full, np.zeros(full.n_states), [0.0]).A
    path = nested.parent / edited
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    text, source = model_text(str(nested))
    assert model_record_key(text, source) != key
    cached._models.clear()
    model = load_cached(str(nested))
    after = robodyn.linearize(model, np.zeros(model.n_states), [0.0]).A
    assert not np.array_equal(after, before)
    assert np.array_equal(after, robodyn.linearize(robodyn.load(str(nested)), np.zeros(model.n_states), [0.0]).A)


def test_a_block_file_named_twice_is_read_once_and_a_missing_one_is_the_readers_error(tmp_path):
    (tmp_path / "pi.yaml").write_text(CONTROLLER, encoding="utf-8")
    twice = OUTER.replace("loops/inner.yaml", "pi.yaml").replace(
        "connect: [pid.u -> motor.v, motor.tau -> loop.r, loop.q -> pid.y, loop.q -> motor.omega]",
        "connect: []\ndefaults: {loop: 0, motor: 0, pid: 0}")
    (tmp_path / "twice.yaml").write_text(twice, encoding="utf-8")
    assert model_record_key(*model_text(str(tmp_path / "twice.yaml"))) is not None
    (tmp_path / "missing.yaml").write_text(OUTER, encoding="utf-8")  # loops/inner.yaml is not there
    with pytest.raises(robodyn.ModelFileError, match=r"inner\.yaml"):
        load_cached(str(tmp_path / "missing.yaml"))


def test_a_diagram_the_record_cannot_answer_is_the_full_diagram(tmp_path):
    saturated = tmp_path / "saturated.yaml"  # corners: simulate stops at them (the full diagram's events)
    saturated.write_text("name: saturated\nkind: diagram\nblocks:\n  plant: joint\n"
                         "  limit: {model: saturation, parameters: {lower: -1, upper: 1}}\n"
                         "connect: [limit.y -> plant.u]\ninputs: {u: limit.u}\n", encoding="utf-8")
    assert isinstance(load_cached(str(saturated)), Diagram)
    sampled = tmp_path / "sampled.yaml"
    sampled.write_text(OUTER.replace("kd: 0.1}", "kd: 0.1}, sample: 0.01").replace("loops/inner.yaml", "joint")
                       .replace("loop.r", "loop.u"), encoding="utf-8")
    assert isinstance(load_cached(str(sampled)), Diagram)
    joint = load_cached("joint", same_numbers=True)  # a record whose Jacobian is computed otherwise: the full model
    assert not isinstance(joint, CachedModel)


def test_a_robot_blocks_file_is_in_its_diagrams_key(tmp_path):
    robot = tmp_path / "arm.urdf"
    robot.write_text((EXAMPLES / "two_link_arm.urdf").read_text(encoding="utf-8"), encoding="utf-8")
    diagram = tmp_path / "robot.yaml"
    diagram.write_text("name: robot\nkind: diagram\nblocks:\n  arm: arm.urdf\ndefaults: {arm: 0}\n",
                       encoding="utf-8")
    key = model_record_key(*model_text(str(diagram)))
    robot.write_text(robot.read_text(encoding="utf-8").replace('mass value="', 'mass value="1', 1), encoding="utf-8")
    assert model_record_key(*model_text(str(diagram))) != key


@pytest.mark.parametrize("edit", ["digest", "wire", "loop", "linearization"])
def test_a_damaged_or_edited_diagram_record_is_moved_aside_and_made_again(nested, edit):
    model, full = _warm(nested)
    path = record_path(model.record_key)
    if edit == "loop":  # the opened loop's record
        robodyn.linearize(model, np.zeros(model.n_states), [0.0], open="pid.u")
        path = record_path(cached._models[next(k for k in cached._models if k != model.record_key)].record_key)
    wrapper = json.loads(path.read_text(encoding="utf-8"))
    record = wrapper["record"]
    if edit == "digest":
        record["parameters"][0][1] *= 2  # an edited value: the digest no longer matches
    elif edit == "wire":
        record["diagram"]["block_diagram"]["wires"][0][0] = "pid; import os"
        wrapper["sha256"] = cached._digest(record)
    elif edit == "loop":
        record["diagram"]["loop"] = ["pid.u_injected", "x = 1"]
        wrapper["sha256"] = cached._digest(record)
    else:
        record["diagram"]["linearization"] = None
        wrapper["sha256"] = cached._digest(record)
    path.write_text(json.dumps(wrapper), encoding="utf-8")
    cached._models.clear()
    again = load_cached(str(nested))
    if edit == "loop":
        again = robodyn.linearize(again, np.zeros(model.n_states), [0.0], open="pid.u")
        expected = robodyn.linearize(full, np.zeros(full.n_states), [0.0], open="pid.u")
        assert np.array_equal(again.A, expected.A)
    else:
        assert isinstance(again, CachedModel) and again._source._full is not None  # rebuilt from the file
    assert list(path.parent.glob(f"{path.name}.broken-*"))  # moved aside (robodyn.codegen.cache.quarantine)
    assert path.exists()  # made again


_SCRIPT = ("import sys, json\nfrom robodyn.cli import main\ncode = main(sys.argv[1:])\n"
           "print(json.dumps({m: m in sys.modules for m in ('sympy', 'scipy', 'control')}), file=sys.stderr)")


def test_a_second_linearize_of_a_diagram_imports_no_sympy_scipy_or_python_control(nested):
    argv = ["linearize", str(nested), "--open", "pid.u", "--json"]
    env = {**os.environ, "ROBODYN_QUIET": "1"}
    runs = [subprocess.run([sys.executable, "-c", _SCRIPT, *argv], capture_output=True, text=True, env=env,
                           timeout=900, check=True) for _ in range(2)]
    assert json.loads(runs[1].stderr.splitlines()[-1]) == {"sympy": False, "scipy": False, "control": False}
    assert runs[0].stdout == runs[1].stdout
    data = json.loads(runs[1].stdout)
    full = robodyn.load(str(nested))
    expected = robodyn.linearize(full, np.zeros(full.n_states), "hold", open="pid.u")
    assert data["A"] == expected.A.tolist() and data["C"] == expected.C.tolist()
    assert data["margins"] == expected.margins().to_dict()


def test_parameters_set_on_a_diagram_reach_the_loop_it_opens(nested):
    """``--param`` with ``--open``: the loop is the diagram's with its values (written in the file: the reference)."""
    full = robodyn.load(str(nested))
    x, u = np.full(full.n_states, 0.1), np.array([0.3])
    set_here = robodyn.linearize(full.with_parameters({"motor.R": 3.0}), x, u, open="pid.u")
    nested.write_text(OUTER.replace("R: 2.0", "R: 3.0"), encoding="utf-8")
    written = robodyn.linearize(robodyn.load(str(nested)), x, u, open="pid.u")
    assert np.array_equal(set_here.A, written.A) and np.array_equal(set_here.C, written.C)
