"""YAML model files and robodyn.load: validation with file:line: key.path, the three kinds, the catalog."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from tests.example_files import MODEL_FILES

import robodyn
from robodyn.base.errors import InputError, ModelFileError, UnknownNameError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

FIRST_ORDER = """\
name: joint
kind: first_order
parameters: {J: 0.01, b: 0.1, k: 1.0}
states: [q, qd]
inputs: [u]
dynamics: {q: qd, qd: (u - b*qd - k*q)/J}
outputs: {angle: q}
"""

MECHANICAL = """\
name: joint
kind: mechanical
coordinates: [q]
parameters: {J: 0.01, b: 0.1, k: 1.0}
inputs: [u]
mass: [[J]]
damping: [[b]]
stiffness: [[k]]
"""

LAGRANGIAN = """\
name: pendulum
kind: lagrangian
coordinates: [theta]
parameters: {m: 1.0, g: 9.81, l: 1.0, I: 1.0}
inputs: [tau]
kinetic: I*theta_dot**2/2
potential: -m*g*l*cos(theta)
forces: {theta: tau}
"""


def write(tmp_path: Path, text: str, name: str = "model.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- errors: file, line, key path --------------------------------------------------------------------------

# (id, text, line or None, key path or None, fragment of the message)
ERRORS = [
    ("unknown kind", "name: a\nkind: fist_order\nstates: [x]\n", 2, "kind",
     "unknown kind 'fist_order': one of first_order, discrete, mechanical, lagrangian, chain, diagram; "
     "did you mean 'first_order'?"),
    ("kind not text", "kind: 3\nstates: [x]\n", 1, "kind", "unknown kind 3"),
    ("missing kind", "name: a\nstates: [x]\ndynamics: {x: 1}\n", 1, None,
     "missing 'kind': one of first_order, discrete, mechanical, lagrangian, chain"),
    ("unknown top-level key", "kind: first_order\nstates: [x]\ndynamic: {x: 1}\n", 3, "dynamic",
     "unknown key 'dynamic' for kind first_order (allowed: description, dynamics, inputs, kind, name, outputs, "
     "parameters, states, units); did you mean 'dynamics'?"),
    ("key of another kind", "kind: first_order\nstates: [x]\ndynamics: {x: 1}\nmass: [[1]]\n", 4, "mass",
     "unknown key 'mass' for kind first_order"),
    ("first_order without states", "kind: first_order\ndynamics: {x: 1}\n", 1, None,
     "missing key 'states' (required for kind first_order)"),
    ("first_order without dynamics", "kind: first_order\nstates: [x]\n", 1, None,
     "missing key 'dynamics' (required for kind first_order)"),
    ("mechanical without coordinates", "kind: mechanical\nmass: [[1]]\n", 1, None,
     "missing key 'coordinates' (required for kind mechanical)"),
    ("mechanical without mass", "kind: mechanical\ncoordinates: [q]\ninputs: [u]\n", 1, None,
     "missing key 'mass' (required for kind mechanical)"),
    ("lagrangian without coordinates", "kind: lagrangian\nkinetic: 1\n", 1, None,
     "missing key 'coordinates' (required for kind lagrangian)"),
    ("lagrangian without kinetic", "kind: lagrangian\ncoordinates: [q]\n", 1, None,
     "missing key 'kinetic' (required for kind lagrangian)"),
    ("dynamics for an unknown state", "kind: first_order\nstates: [x]\ndynamics:\n  x: 1\n  y: 2\n", 5,
     "dynamics.y", "'y' is not one of the states: x"),
    ("dynamics for a near-miss state", "kind: first_order\nstates: [theta]\ndynamics:\n  thet: 1\n", 4,
     "dynamics.thet", "did you mean 'theta'?"),
    ("missing dynamics for a state", "kind: first_order\nstates: [x, y]\ndynamics: {x: 1}\n", 3, "dynamics",
     "no dynamics of the states for y: add 'y: <expression>'"),
    ("state also an input", "kind: first_order\nstates: [x]\ninputs: [x]\ndynamics: {x: 1}\n", 3, "inputs[0]",
     "name 'x' is used both in states and in inputs: names must be unique"),
    ("parameter equal to a state", "kind: first_order\nstates: [x]\nparameters:\n  x: 1\ndynamics: {x: 1}\n", 4,
     "parameters.x", "name 'x' is used both in states and in parameters"),
    ("state listed twice", "kind: first_order\nstates: [x, x]\ndynamics: {x: 1}\n", 2, "states[1]",
     "name 'x' is used twice"),
    ("output named like a state", "kind: first_order\nstates: [x]\ndynamics: {x: 1}\noutputs:\n  x: x\n", 5,
     "outputs.x", "name 'x' is used both in states and in outputs"),
    ("state named sin", "kind: first_order\nstates: [sin]\ndynamics: {sin: 1}\n", 2, "states[0]",
     "'sin' shadows the built-in function or constant 'sin'"),
    ("state named pi", "kind: first_order\nstates: [pi]\ndynamics: {pi: 1}\n", 2, "states[0]",
     "'pi' shadows the built-in function or constant 'pi'"),
    ("parameter named e", "kind: first_order\nstates: [x]\nparameters: {e: 1}\ndynamics: {x: 1}\n", 3,
     "parameters.e", "'e' shadows the built-in function or constant 'e'"),
    ("input named t", "kind: first_order\nstates: [x]\ninputs: [t]\ndynamics: {x: 1}\n", 3, "inputs[0]",
     "'t' shadows the built-in function or constant 't'"),
    ("coordinate named max", "kind: mechanical\ncoordinates: [max]\ninputs: [u]\nmass: [[1]]\n", 2,
     "coordinates[0]", "'max' shadows"),
    ("state named 2x", "kind: first_order\nstates: [2x]\ndynamics: {2x: 1}\n", 2, "states[0]",
     "'2x' is not a valid name: use letters, digits and _"),
    ("state named lambda", "kind: first_order\nstates: [lambda]\ndynamics: {lambda: 1}\n", 2, "states[0]",
     "'lambda' is not a valid name"),
    ("state that is a number", "kind: first_order\nstates: [x, 1]\ndynamics: {x: 1}\n", 2, "states[1]",
     "1 is not a name"),
    ("states not a list", "kind: first_order\nstates: x\ndynamics: {x: 1}\n", 2, "states",
     "must be a list, got 'x'"),
    ("no states", "kind: first_order\nstates: []\ndynamics: {}\n", 2, "states", "needs at least one entry"),
    ("parameter abc", "kind: first_order\nstates: [x]\nparameters:\n  J: abc\ndynamics: {x: J}\n", 4,
     "parameters.J", "'abc'"),
    ("parameter list", "kind: first_order\nstates: [x]\nparameters:\n  J: [1]\ndynamics: {x: J}\n", 4,
     "parameters.J", "parameter value must be a number, got a list of 1"),
    ("parameter true", "kind: first_order\nstates: [x]\nparameters:\n  J: true\ndynamics: {x: J}\n", 4,
     "parameters.J", "parameter value must be a number, got True"),
    ("parameter empty", "kind: first_order\nstates: [x]\nparameters:\n  J:\ndynamics: {x: J}\n", 4,
     "parameters.J", "parameter value must be a number, got nothing"),
    ("parameter .nan", "kind: first_order\nstates: [x]\nparameters:\n  J: .nan\ndynamics: {x: J}\n", 4,
     "parameters.J", "is not finite"),
    ("parameter .inf", "kind: first_order\nstates: [x]\nparameters:\n  J: .inf\ndynamics: {x: J}\n", 4,
     "parameters.J", "is not finite"),
    ("parameter -.inf", "kind: first_order\nstates: [x]\nparameters:\n  J: -.inf\ndynamics: {x: J}\n", 4,
     "parameters.J", "is not finite"),
    ("parameter 1e999", "kind: first_order\nstates: [x]\nparameters:\n  J: 1e999\ndynamics: {x: J}\n", 4,
     "parameters.J", "number is not finite: '1e999'"),
    ("parameter using a state", "kind: first_order\nstates: [x]\nparameters:\n  a: 1\n  J: 2*x\n"
     "dynamics: {x: J}\n", 5, "parameters.J", "unknown name"),  # parameters may use parameters only
    ("parameters not a mapping", "kind: first_order\nstates: [x]\nparameters: [a]\ndynamics: {x: 1}\n", 3,
     "parameters", "must be a mapping"),
    ("dynamics not an expression", "kind: first_order\nstates: [x]\ndynamics:\n  x: [1]\n", 4, "dynamics.x",
     "expected an expression, got a list of 1"),
    ("dynamics empty", "kind: first_order\nstates: [x]\ndynamics:\n  x:\n", 4, "dynamics.x",
     "expected an expression, got nothing"),
    ("dynamics unknown name", "kind: first_order\nstates: [x]\ndynamics:\n  x: -k*x\n", 4, "dynamics.x",
     "unknown name (known: x, e, pi, t): 'k' at column 2"),
    ("output unknown name", "kind: first_order\nstates: [x]\ndynamics: {x: 1}\noutputs:\n  y: z\n", 5,
     "outputs.y", "unknown name"),
    ("name not text", "kind: first_order\nname: 3\nstates: [x]\ndynamics: {x: 1}\n", 2, "name",
     "must be text, got 3"),
    ("mass 1x2 for one coordinate", "kind: mechanical\ncoordinates: [q]\nparameters: {J: 1}\ninputs: [u]\n"
     "mass: [[J, 0]]\n", 5, "mass[0]", "row 0 must be a list of 1 entries, got a list of 2"),
    ("mass with 2 rows for one coordinate", "kind: mechanical\ncoordinates: [q]\nparameters: {J: 1}\n"
     "inputs: [u]\nmass: [[J], [J]]\n", 5, "mass", "must be a 1x1 matrix (a list of 1 rows), got a list of 2"),
    ("damping of the wrong size", "kind: mechanical\ncoordinates: [q, r]\nparameters: {J: 1}\ninputs: [u, v]\n"
     "mass: [[J, 0], [0, J]]\ndamping: [[1, 0]]\n", 6, "damping", "must be a 2x2 matrix"),
    ("state in the mass matrix", "kind: mechanical\ncoordinates: [q]\nparameters: {J: 1}\ninputs: [u]\n"
     "mass: [[J + q]]\n", 5, "mass[0][0]", "unknown name (known: J, e, pi): 'q' at column 5"),
    ("velocity in the stiffness matrix", "kind: mechanical\ncoordinates: [q]\nparameters: {J: 1}\ninputs: [u]\n"
     "mass: [[J]]\nstiffness: [[q_dot]]\n", 6, "stiffness[0][0]", "'q_dot'"),
    ("input in the damping matrix", "kind: mechanical\ncoordinates: [q]\nparameters: {J: 1}\ninputs: [u]\n"
     "mass: [[J]]\ndamping: [[u]]\n", 6, "damping[0][0]", "'u'"),
    ("time in the mass matrix", "kind: mechanical\ncoordinates: [q]\nparameters: {J: 1}\ninputs: [u]\n"
     "mass: [[J + t]]\n", 5, "mass[0][0]", "'t'"),
    ("2 inputs for 1 coordinate", "kind: mechanical\ncoordinates: [q]\nparameters: {J: 1}\ninputs: [u, v]\n"
     "mass: [[J]]\n", 4, "inputs", "2 input(s) for 1 coordinate(s): give input_matrix (1x2)"),
    ("input matrix of the wrong size", "kind: mechanical\ncoordinates: [q]\nparameters: {J: 1}\n"
     "inputs: [u, v]\nmass: [[J]]\ninput_matrix: [[1]]\n", 6, "input_matrix[0]",
     "row 0 must be a list of 2 entries"),
    ("force on an unknown coordinate", "kind: lagrangian\ncoordinates: [q]\nparameters: {m: 1}\ninputs: [u]\n"
     "kinetic: m*q_dot**2/2\nforces:\n  p: u\n", 7, "forces.p", "'p' is not one of the coordinates: q"),
    ("velocity in the potential", "kind: lagrangian\ncoordinates: [q]\nparameters: {m: 1}\n"
     "kinetic: m*q_dot**2/2\npotential: q_dot\n", 5, "potential", "'q_dot'"),
    ("velocity name taken by a parameter", "kind: lagrangian\ncoordinates: [q]\nparameters: {m: 1, q_dot: 2}\n"
     "kinetic: m*q_dot**2/2\n", 3, "parameters.q_dot",
     "name 'q_dot' is used both in velocities (generated <coordinate>_dot) and in parameters"),
    ("velocity name taken by a coordinate", "kind: mechanical\ncoordinates: [x, x_dot]\nparameters: {J: 1}\n"
     "inputs: [u, v]\nmass: [[J, 0], [0, J]]\n", 2, "coordinates[0]", "name 'x_dot' is used both in coordinates"),
    ("injection in dynamics", "kind: first_order\nstates: [x]\ndynamics:\n  x: eval('1')\n", 4, "dynamics.x",
     "unknown function (allowed: sin"),
    ("not a mapping", "- kind\n- first_order\n", 1, None, "a model file must be a mapping of keys"),
]


@pytest.mark.parametrize(("text", "line", "key", "fragment"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_name_file_line_and_key_path(tmp_path, text, line, key, fragment):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as info:
        robodyn.load(path)
    message = str(info.value)
    location = f"{path}:{line}" + (f": {key}: " if key else ": ")
    assert location in message
    assert fragment in message


@pytest.mark.parametrize(
    ("text", "line", "key", "fragment"), [e[1:] for e in ERRORS[:6]], ids=[e[0] for e in ERRORS[:6]]
)
def test_read_model_text_uses_the_source_in_messages(text, line, key, fragment):
    with pytest.raises(ModelFileError, match=re.escape(f"arm.yaml:{line}: ")):
        robodyn.read_model_text(text, "arm.yaml")


def test_injection_in_dynamics_never_runs(tmp_path):
    target = tmp_path / "PWNED"
    text = f"kind: first_order\nstates: [x]\ndynamics:\n  x: __import__('os').system('touch {target}')\n"
    path = write(tmp_path, text)
    with pytest.raises(InputError) as info:
        robodyn.load(path)
    message = str(info.value)
    assert f"{path}:4: dynamics.x: " in message
    assert "__import__('os').system" in message
    assert not target.exists()


def test_injection_in_a_parameter_never_runs(tmp_path):
    target = tmp_path / "PWNED"
    text = f"kind: first_order\nstates: [x]\nparameters:\n  J: open('{target}', 'w')\ndynamics: {{x: J}}\n"
    path = write(tmp_path, text)
    with pytest.raises(ModelFileError, match=re.escape(f"{path}:4: parameters.J: ") + r".*'open'"):
        robodyn.load(path)
    assert not target.exists()


def test_non_positive_definite_mass_with_default_parameters(tmp_path):
    text = "kind: mechanical\ncoordinates: [q]\nparameters: {J: -1}\ninputs: [u]\nmass: [[J]]\n"
    path = write(tmp_path, text)
    with pytest.raises(ModelFileError, match=re.escape(str(path)) + r".*mass matrix \[\[-1\.0\]\] is not positive"):
        robodyn.load(path)


def test_zero_mass_is_rejected(tmp_path):
    path = write(tmp_path, "kind: mechanical\ncoordinates: [q]\ninputs: [u]\nmass: [[0]]\n")
    with pytest.raises(ModelFileError, match="not positive definite"):
        robodyn.load(path)


def test_asymmetric_mass_is_rejected(tmp_path):
    text = "kind: mechanical\ncoordinates: [q, r]\ninputs: [u, v]\nmass: [[1, 0.5], [0, 1]]\n"
    with pytest.raises(ModelFileError, match=re.escape(str(write(tmp_path, text))) + r".*is not symmetric"):
        robodyn.load(tmp_path / "model.yaml")


def test_kinetic_energy_cubic_in_the_velocities(tmp_path):
    text = "kind: lagrangian\ncoordinates: [q]\nparameters: {m: 1}\nkinetic: m*q_dot**3\n"
    path = write(tmp_path, text)
    with pytest.raises(ModelFileError, match=re.escape(str(path)) + r".*not quadratic in the velocities"):
        robodyn.load(path)


def test_kinetic_energy_without_velocities(tmp_path):
    path = write(tmp_path, "kind: lagrangian\ncoordinates: [q]\nkinetic: q**2\n")
    with pytest.raises(ModelFileError, match="does not depend on the velocities"):
        robodyn.load(path)


@pytest.mark.parametrize(
    ("text", "location"),
    [
        ("kind: mechanical\ncoordinates: [q]\nparameters: {J: -1}\ninputs: [u]\nmass: [[J]]\n", ":5: mass"),
        ("kind: lagrangian\ncoordinates: [q]\nparameters: {m: 1}\nkinetic: m*q_dot**3\n", ":4: kinetic"),
    ],
)
def test_model_class_errors_name_line_and_key(tmp_path, text, location):
    path = write(tmp_path, text)
    with pytest.raises(ModelFileError, match=re.escape(f"{path}{location}")):
        robodyn.load(path)


@pytest.mark.parametrize(
    "text",
    [
        "kind: first_order\nstates: [x, x]\ndynamics: {x: 1}\n",
        "kind: first_order\nstates: [x]\ndynamics:\n  x: eval('1')\n",
    ],
)
def test_file_is_named_once(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(ModelFileError) as info:
        robodyn.load(path)
    assert str(info.value).count(str(path)) == 1
    assert str(info.value).startswith(f"{path}:")


@pytest.mark.parametrize("kind", ["[first_order]", "{a: 1}"])
def test_kind_that_is_a_list_is_a_model_file_error(tmp_path, kind):
    path = write(tmp_path, f"kind: {kind}\nstates: [x]\ndynamics: {{x: 1}}\n")
    with pytest.raises(ModelFileError, match=re.escape(f"{path}:1: kind: ") + "unknown kind"):
        robodyn.load(path)


def test_huge_exact_constant_fails_at_load_or_evaluates(tmp_path):
    path = write(tmp_path, "kind: first_order\nstates: [x]\ndynamics:\n  x: (1 + 1/10**4)**(10**4)*x\n")
    try:
        model = robodyn.load(path)
    except InputError as exc:
        assert f"{path}:4: dynamics.x" in str(exc)
        return
    np.testing.assert_allclose(model.f(0.0, [1.0]), [math.e], rtol=1e-3)


# --- reading files ------------------------------------------------------------------------------------------


def test_missing_file(tmp_path):
    path = tmp_path / "absent.yaml"
    with pytest.raises(ModelFileError, match=re.escape(f"{path}: no such file")):
        robodyn.load(path)


def test_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"kind: first_order\nstates: [\xe9]\n")
    with pytest.raises(ModelFileError, match=re.escape(f"{path}: cannot read")):
        robodyn.load(path)


def test_yaml_errors_reach_load_with_the_path(tmp_path):
    path = write(tmp_path, "kind: first_order\nkind: mechanical\n")
    with pytest.raises(ModelFileError, match=re.escape(f"{path}:2: duplicate key 'kind' (first on line 1)")):
        robodyn.load(path)


def test_alias_in_a_model_file_is_rejected(tmp_path):
    path = write(tmp_path, "kind: mechanical\ncoordinates: [q]\ninputs: [u]\nmass: &m [[1]]\nstiffness: *m\n")
    # the line is the anchored value's (4) or the alias's (5)
    with pytest.raises(ModelFileError, match=re.escape(f"{path}:") + "[45]: YAML anchors and aliases"):
        robodyn.load(path)


@pytest.mark.parametrize("name", ["robot.urdf", "arm.URDF", "/some/dir/robot.urdf"])
# .urdf goes to robodyn.mechanisms.urdf.pinocchio (tests/mechanisms/urdf/test_urdf.py)
def test_missing_urdf_is_an_input_error(name):
    with pytest.raises(InputError, match=re.escape(name) + r": no such file|install robodyn\[urdf\]"):
        robodyn.load(name)


def test_options_for_a_file_are_an_input_error(tmp_path):
    path = write(tmp_path, FIRST_ORDER)
    with pytest.raises(InputError, match="apply to catalog models only"):
        robodyn.load(path, n=3)


# --- the three kinds ------------------------------------------------------------------------------------------


def test_first_order_example_from_the_design(tmp_path):
    model = robodyn.load(write(tmp_path, FIRST_ORDER))
    assert model.name == "joint"
    assert model.states == ("q", "qd")
    assert model.inputs == ("u",)
    assert dict(model.parameters) == {"J": 0.01, "b": 0.1, "k": 1.0}
    # q' = qd = -1; qd' = (u - b qd - k q)/J = (2 + 0.1 - 0.5)/0.01 = 160
    np.testing.assert_allclose(model.f(0.0, [0.5, -1.0], [2.0]), [-1.0, 160.0], rtol=1e-12)
    np.testing.assert_allclose(model.f(0.0, {"q": 0.5, "qd": -1.0}, {"u": 2.0}, {"J": 0.1}), [-1.0, 16.0],
                               rtol=1e-12)
    assert model.outputs == ("angle",)
    np.testing.assert_allclose(model.h(0.0, [0.5, -1.0], [2.0]), [0.5])


def test_mechanical_example_from_the_design(tmp_path):
    model = robodyn.load(write(tmp_path, MECHANICAL))
    assert isinstance(model, robodyn.MechanicalSystem)
    assert model.states == ("q", "q_dot")
    assert model.inputs == ("u",)
    assert dict(model.parameters) == {"J": 0.01, "b": 0.1, "k": 1.0}
    np.testing.assert_allclose(model.f(0.0, [0.5, -1.0], [2.0]), [-1.0, 160.0], rtol=1e-12)
    assert model.outputs == model.states


def test_lagrangian_example_from_the_design(tmp_path):
    model = robodyn.load(write(tmp_path, LAGRANGIAN))
    assert isinstance(model, robodyn.LagrangianSystem)
    assert model.name == "pendulum"
    assert model.states == ("theta", "theta_dot")
    assert model.inputs == ("tau",)
    theta, omega, tau = 0.3, 0.2, 0.5
    expected = [omega, (tau - 1.0 * 9.81 * 1.0 * math.sin(theta)) / 1.0]
    np.testing.assert_allclose(model.f(0.0, [theta, omega], [tau]), expected, rtol=1e-12)
    # I = 2, l = 0.5: theta'' = (tau - m g l sin(theta)) / I
    got = model.f(0.0, [theta, omega], [tau], {"I": 2.0, "l": 0.5})
    np.testing.assert_allclose(got, [omega, (tau - 9.81 * 0.5 * math.sin(theta)) / 2.0], rtol=1e-12)


def test_parameter_values_may_be_constant_expressions(tmp_path):
    text = "kind: first_order\nstates: [x]\nparameters:\n  w: 2*pi\n  h: pi/4\n  z: 1e-3\ndynamics: {x: w}\n"
    model = robodyn.load(write(tmp_path, text))
    assert model.parameters["w"] == pytest.approx(2 * math.pi, rel=1e-15)
    assert model.parameters["h"] == pytest.approx(math.pi / 4, rel=1e-15)
    assert model.parameters["z"] == 1e-3
    np.testing.assert_allclose(model.f(0.0, [0.0]), [2 * math.pi])


def test_first_order_may_depend_on_time(tmp_path):
    text = "kind: first_order\nstates: [x]\ndynamics: {x: sin(t) - x}\n"
    model = robodyn.load(write(tmp_path, text))
    np.testing.assert_allclose(model.f(math.pi / 2, [0.25]), [0.75], rtol=1e-12)


def test_outputs_of_each_kind(tmp_path):
    mech = robodyn.read_model_text(MECHANICAL + "outputs: {power: u*q_dot, twice: 2*q}\n", "m.yaml")
    assert mech.outputs == ("power", "twice")
    np.testing.assert_allclose(mech.h(0.0, [0.5, -1.0], [2.0]), [-2.0, 1.0])
    lag = robodyn.read_model_text(LAGRANGIAN + "outputs: {height: -l*cos(theta)}\n", "p.yaml")
    np.testing.assert_allclose(lag.h(0.0, [0.0, 0.0]), [-1.0])


def test_mechanical_with_an_input_matrix(tmp_path):
    text = ("kind: mechanical\ncoordinates: [q]\nparameters: {J: 2}\ninputs: [u, v]\nmass: [[J]]\n"
            "input_matrix: [[1, -3]]\n")
    model = robodyn.load(write(tmp_path, text))
    assert model.inputs == ("u", "v")
    np.testing.assert_allclose(model.f(0.0, [0.0, 0.0], [1.0, 1.0]), [0.0, -1.0])


def test_lagrangian_without_potential_or_forces(tmp_path):
    text = "kind: lagrangian\ncoordinates: [x]\nparameters: {m: 2}\nkinetic: m*x_dot**2/2\n"
    model = robodyn.load(write(tmp_path, text))
    assert model.inputs == ()
    np.testing.assert_allclose(model.f(0.0, [1.0, 3.0]), [3.0, 0.0])


def test_name_defaults_to_the_file_stem(tmp_path):
    body = "kind: first_order\nstates: [x]\ndynamics: {x: -x}\n"
    assert robodyn.load(write(tmp_path, body, "my_decay.yaml")).name == "my_decay"
    assert robodyn.load(write(tmp_path, "name: ''\n" + body, "other.yml")).name == "other"
    assert robodyn.load(write(tmp_path, "name: decay\n" + body, "third.yaml")).name == "decay"
    assert robodyn.read_model_text(body, "/a/b/stem_name.yaml").name == "stem_name"


def test_load_accepts_str_and_pathlike(tmp_path):
    path = write(tmp_path, FIRST_ORDER)
    assert robodyn.load(str(path)).states == robodyn.load(path).states == ("q", "qd")
    no_suffix = write(tmp_path, FIRST_ORDER, "joint_model")
    assert robodyn.load(str(no_suffix)).states == ("q", "qd")


# --- catalog ---------------------------------------------------------------------------------------------------


def test_mbk_options_after_a_colon_equal_keywords():
    a = robodyn.load("mbk:n=4")
    b = robodyn.load("mbk", n=4)
    assert a.states == b.states == ("x1", "x2", "x3", "x4", "x1_dot", "x2_dot", "x3_dot", "x4_dot")
    assert a.inputs == b.inputs == ("F1", "F2", "F3", "F4")
    rng = np.random.default_rng(4)
    x, u = rng.normal(size=8), rng.normal(size=4)
    np.testing.assert_allclose(a.f(0.0, x, u), b.f(0.0, x, u), rtol=1e-14)
    assert robodyn.load("mbk").n_states == 6


@pytest.mark.parametrize("name", ["nope", "pendulm", "Joint", ""])
def test_unknown_catalog_name(name):
    with pytest.raises(UnknownNameError) as info:
        robodyn.load(name)
    message = str(info.value)
    assert f"unknown model {name!r}" in message
    for known in robodyn.CATALOG:
        assert known in message
    assert isinstance(info.value, InputError)


def test_unknown_catalog_name_suggests_a_close_one():
    with pytest.raises(UnknownNameError, match=r"did you mean 'pendulum'\?"):
        robodyn.load("pendulm")


@pytest.mark.parametrize(("text", "fragment"), [("mbk:n=0", "n must be a whole number"),
                                                ("mbk:n=2.5", "n must be a whole number"),
                                                ("mbk:n", "expected name=value"),
                                                ("mbk:n=4, n=5", "given twice"),
                                                ("joint:n=1", "takes no options")])
def test_bad_catalog_options(text, fragment):
    with pytest.raises(InputError, match=re.escape(fragment)):
        robodyn.load(text)


@pytest.mark.parametrize(("model", "options"), [("mbk:q=1", {}), ("mbk", {"q": 1}), ("pendulum:q=1", {})])
def test_unknown_catalog_option_is_an_input_error(model, options):  # was a TypeError from the factory
    with pytest.raises(InputError, match=r"catalog model '(mbk|pendulum)' .*\bq\b"):
        robodyn.load(model, **options)


def _point(model, seed):
    rng = np.random.default_rng(seed)
    chart = model.chart()
    if chart is not None:  # a moving base: a state on the manifold (its rotation unit), from random tangent values
        tangent = chart.tangent_model(model.state_vector({"base_qw": 1.0}, default=0.0))  # no rotation
        return tangent.stored(rng.uniform(-1, 1, tangent.n_states)), rng.uniform(-1, 1, model.n_inputs)
    # within 0.1 of the default state: an estimator block's states are offsets of its covariance from P0 (I by
    # default), which must stay positive definite; 0.1 keeps P0 + offsets diagonally dominant in 4 states
    return rng.uniform(-0.1, 0.1, model.n_states), rng.uniform(-1, 1, model.n_inputs)


@pytest.mark.parametrize("name", sorted(robodyn.CATALOG))
def test_catalog_model_has_an_identical_example_file(name):
    path = EXAMPLES / f"{name}.yaml"
    assert path.is_file(), f"examples/{name}.yaml is missing (each catalog model has an example file)"
    example = robodyn.load(path)
    catalog = robodyn.load(name)  # mbk: the n=3 chain, as examples/mbk.yaml
    assert example.states == catalog.states
    assert example.inputs == catalog.inputs
    assert example.outputs == catalog.outputs
    assert dict(example.parameters) == dict(catalog.parameters)
    x, u = _point(catalog, seed=sum(map(ord, name)))
    np.testing.assert_allclose(example.f(0.3, x, u), catalog.f(0.3, x, u), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("path", [p for p in MODEL_FILES if p.suffix == ".yaml"], ids=lambda p: p.name)
def test_every_example_file_loads_and_evaluates(path):
    model = robodyn.load(path)
    x, u = _point(model, seed=1)
    assert np.all(np.isfinite(model.f(0.0, x, u)))


# --- derived parameters ------------------------------------------------------------------------------------
DERIVED = """\
kind: lagrangian
coordinates: [theta]
parameters: {I: m*l**2, m: 1.0, g: 9.81, l: 1.0, J: 2*I}
inputs: [tau]
kinetic: J*theta_dot**2/4
potential: -m*g*l*cos(theta)
forces: {theta: tau}
"""


def test_derived_parameters_follow_the_free_ones(tmp_path):
    """I = m l^2 and J = 2 I (declared before what they use) are substituted: theta'' = -(g / l) sin(theta)."""
    model = robodyn.load(write(tmp_path, DERIVED))
    assert tuple(model.parameters) == ("m", "g", "l")
    assert dict(model.derived_parameters) == {"I": "l**2*m", "J": "2*l**2*m"}
    for overrides in ({}, {"l": 0.5}, {"m": 3.0, "l": 2.0}):
        length = overrides.get("l", 1.0)
        expected = [0.0, -9.81 / length * math.sin(0.3)]
        np.testing.assert_allclose(model.f(0.0, [0.3, 0.0], [0.0], overrides), expected, rtol=1e-14)
        np.testing.assert_allclose(model.with_parameters(overrides).f(0.0, [0.3, 0.0], [0.0]), expected, rtol=1e-14)


def test_catalog_pendulum_inertia_follows_the_length():
    pendulum = robodyn.load("pendulum")
    assert dict(pendulum.derived_parameters) == {"I": "l**2*m"} and "I" not in pendulum.parameters
    short = pendulum.with_parameters(l=0.5)  # I = m l^2 = 0.25, not the stale 1
    np.testing.assert_allclose(short.f(0.0, [0.3, 0.0], [1.0]), [0.0, (1.0 - 9.81 * 0.5 * math.sin(0.3)) / 0.25],
                               rtol=1e-14)
    np.testing.assert_allclose(robodyn.linearize(short, [0.0, 0.0]).A, [[0.0, 1.0], [-9.81 / 0.5, 0.0]], rtol=1e-14)
    run = robodyn.simulate(pendulum, 1.0, [0.1, 0.0], params={"l": 0.5}, method="rk4", dt=1e-3)
    again = robodyn.simulate(short, 1.0, [0.1, 0.0], method="rk4", dt=1e-3)
    np.testing.assert_array_equal(run.x, again.x)  # the compiled kernel sees the same I


@pytest.mark.parametrize("how", ["with_parameters", "params"])
def test_a_derived_parameter_cannot_be_set(how):
    pendulum = robodyn.load("pendulum")
    with pytest.raises(InputError, match=r"'I' is derived \(I = l\*\*2\*m\).*set those instead"):
        if how == "with_parameters":
            pendulum.with_parameters(I=2.0)
        else:
            pendulum.f(0.0, [0.0, 0.0], params={"I": 2.0})


@pytest.mark.parametrize(("parameters", "fragment"), [
    ("{a: b, b: a, c: 1.0}", "the parameters a -> b -> a are defined in a cycle"),
    ("{a: 2*a}", "the parameters a -> a are defined in a cycle"),
    ("{a: 1.0, b: a*c}", "unknown name"),
    ("{a: 0.0, b: 1/a}", "b = 1/a is not a finite real number with the default values"),
    ("{a: -1.0, b: sqrt(a)}", "is not a finite real number"),
])
def test_bad_derived_parameters_are_refused(tmp_path, parameters, fragment):
    text = f"kind: first_order\nstates: [x]\nparameters: {parameters}\ndynamics: {{x: -x}}\n"
    with pytest.raises(ModelFileError, match=re.escape(fragment)) as info:
        robodyn.load(write(tmp_path, text))
    assert "model.yaml:3: parameters." in str(info.value)
    if "unknown" in fragment:
        assert "'c'" in str(info.value)


def test_derived_parameters_in_mechanical_matrices_and_name_checks(tmp_path):
    text = MECHANICAL.replace("parameters: {J: 0.01, b: 0.1, k: 1.0}",
                              "parameters: {m: 0.04, r: 0.5, J: m*r**2, b: 0.1, k: 1.0}")
    model = robodyn.load(write(tmp_path, text))
    np.testing.assert_allclose(model.with_parameters(r=1.0).mechanical_matrices()[0], [[0.04]], rtol=1e-15)
    clash = text.replace("coordinates: [q]", "coordinates: [J]")
    with pytest.raises(ModelFileError, match="'J' is used both"):
        robodyn.load(write(tmp_path, clash))


def test_simulate_refuses_a_derived_parameter_with_the_models_reason():
    pendulum = robodyn.load("pendulum")
    with pytest.raises(robodyn.InputError, match=r"parameter 'I' is derived \(I = l\*\*2\*m\)"):
        robodyn.simulate(pendulum, 1.0, params={"I": 2.0})
