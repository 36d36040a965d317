"""Tests for robodyn.model.kinds.linear: LinearSystem validation, immutability and evaluation."""

from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np
import pytest

import robodyn
from robodyn import InputError, LinearSystem, ShapeError, UnknownNameError

A2 = [[0.0, 1.0], [-2.0, -3.0]]
B2 = [[0.0], [1.0]]


# --- shapes -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}, r"A must be a non-empty square matrix, got shape \(2, 3\)"),
        ({"A": np.zeros((0, 0))}, r"A must be a non-empty square matrix"),
        ({"A": np.zeros((2, 2, 2))}, r"A must be a non-empty square matrix, got shape \(2, 2, 2\)"),
        ({"A": None}, r"A is required"),
        ({"A": A2, "B": [[1.0], [2.0], [3.0]]}, r"B has shape \(3, 1\), expected \(2, 1\)"),
        ({"A": A2, "B": B2, "inputs": ["u", "v"]}, r"B has shape \(2, 1\), expected \(2, 2\)"),
        ({"A": A2, "C": [[1.0, 0.0, 0.0]]}, r"C has shape \(1, 3\), expected \(1, 2\)"),
        ({"A": A2, "C": [[1.0, 0.0]], "outputs": ["y", "z"]}, r"C has shape \(1, 2\), expected \(2, 2\)"),
        ({"A": A2, "B": B2, "C": [[1.0, 0.0]], "D": [[0.0, 0.0]]}, r"D has shape \(1, 2\), expected \(1, 1\)"),
        ({"A": A2, "B": B2, "D": [[0.0]]}, r"D has shape \(1, 1\), expected \(2, 1\)"),
        ({"A": A2, "states": ["a"]}, r"1 states named for size 2"),
        ({"A": A2, "x_op": [0.0, 0.0, 0.0]}, r"x_op has 3 entries, expected 2"),
        ({"A": A2, "B": B2, "u_op": [0.0, 0.0]}, r"u_op has 2 entries, expected 1"),
    ],
)
def test_shapes_are_validated(kwargs, match):
    with pytest.raises(ShapeError, match=match):
        LinearSystem(**kwargs)


@pytest.mark.parametrize("label", ["A", "B", "C", "D"])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_entries_raise(label, bad):
    matrices = {"A": np.array(A2), "B": np.array(B2), "C": np.array([[1.0, 0.0]]), "D": np.array([[0.0]])}
    matrices[label] = matrices[label].copy()
    matrices[label][0, 0] = bad
    with pytest.raises(InputError, match=rf"{label} contains non-finite entries"):
        LinearSystem(**matrices)


@pytest.mark.parametrize(
    "kwargs",
    [{"A": [["a", "b"], ["c", "d"]]}, {"A": [[1.0, 2.0], [3.0]]}, {"A": A2, "B": [["a"], ["b"]]}],
)
def test_non_numeric_matrices_raise_input_error(kwargs):
    with pytest.raises(InputError):
        LinearSystem(**kwargs)


def test_a_string_of_names_is_rejected():
    with pytest.raises(InputError, match=r"list of names"):
        LinearSystem(A2, B2, inputs="force")


def test_names_are_checked():
    with pytest.raises(InputError, match=r"name 'a' is used twice"):
        LinearSystem(A2, states=["a", "a"])
    with pytest.raises(InputError, match=r"'t' shadows the built-in"):
        LinearSystem(A2, B2, inputs=["t"])


# --- defaults ---------------------------------------------------------------------------------------
def test_default_names_and_matrices():
    model = LinearSystem(np.diag([1.0, 2.0, 3.0]), np.ones((3, 2)), C=np.ones((1, 3)))
    assert model.states == ("x1", "x2", "x3")
    assert model.inputs == ("u1", "u2")
    assert model.outputs == ("y1",)
    np.testing.assert_array_equal(model.D, np.zeros((1, 2)))
    assert model.parameters == {}


def test_no_inputs():
    model = LinearSystem(A2)
    assert model.inputs == ()
    assert model.B.shape == (2, 0) and model.D.shape == (2, 0)
    np.testing.assert_array_equal(model.f(0.0, [1.0, 1.0]), [1.0, -5.0])


def test_c_none_means_identity_outputs_named_like_states():
    model = LinearSystem(A2, B2, states=["pos", "vel"], inputs=["force"])
    np.testing.assert_array_equal(model.C, np.eye(2))
    np.testing.assert_array_equal(model.D, np.zeros((2, 1)))
    assert model.outputs == ("pos", "vel")
    np.testing.assert_array_equal(model.h(0.0, {"pos": 2.0, "vel": -1.0}, {"force": 9.0}), [2.0, -1.0])


def test_mapping_names_are_the_given_names():
    model = LinearSystem(A2, B2, states=["pos", "vel"], inputs=["force"])
    with pytest.raises(UnknownNameError, match=r"did you mean 'force'\?"):
        model.f(0.0, [0.0, 0.0], {"forc": 1.0})


# --- immutability -----------------------------------------------------------------------------------
def test_arrays_are_read_only_copies():
    A = np.array(A2)
    model = LinearSystem(A, B2, x_op=[1.0, 2.0], u_op=[3.0])
    for array in (model.A, model.B, model.C, model.D, model.x_op, model.u_op):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 5.0
    A[0, 0] = 42.0  # the caller's array is copied, so changing it does not change the model
    assert model.A[0, 0] == 0.0


@pytest.mark.parametrize(("attribute", "value"), [("A", np.eye(2)), ("name", "other"), ("states", ("a", "b"))])
def test_frozen(attribute, value):
    model = LinearSystem(A2, B2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(model, attribute, value)


# --- evaluation -------------------------------------------------------------------------------------
def test_f_and_h_against_numpy():
    rng = np.random.default_rng(12345)
    n, m, p = 4, 2, 3
    A, B, C, D = rng.normal(size=(n, n)), rng.normal(size=(n, m)), rng.normal(size=(p, n)), rng.normal(size=(p, m))
    model = LinearSystem(A, B, C, D)
    for _ in range(10):
        x, u = rng.normal(size=n), rng.normal(size=m)
        # Same matrix-vector products in the same order: equal up to rounding of a length-4 dot product.
        np.testing.assert_allclose(model.f(rng.uniform(0, 10), x, u), A @ x + B @ u, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(model.h(0.0, x, u), C @ x + D @ u, rtol=1e-13, atol=1e-14)
    mapping = dict(zip(model.states, x))
    np.testing.assert_allclose(model.f(0.0, mapping), A @ x, rtol=1e-13, atol=1e-14)


def test_f_checks_values():
    model = LinearSystem(A2, B2)
    with pytest.raises(ShapeError):
        model.f(0.0, [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="not finite"):
        model.f(0.0, [1.0, math.nan])


def test_eigenvalues_sorted_by_real_then_imaginary_part():
    # Block-diagonal: -1 +- 2j, 3, -5, -1 (real), so the sorted order is fully determined.
    A = np.zeros((5, 5))
    A[0:2, 0:2] = [[-1.0, 2.0], [-2.0, -1.0]]
    A[2, 2], A[3, 3], A[4, 4] = 3.0, -5.0, -1.0
    permutation = [3, 0, 4, 2, 1]
    A = A[np.ix_(permutation, permutation)]
    values = LinearSystem(A).eigenvalues
    np.testing.assert_allclose(values, [-5.0, -1.0 - 2.0j, -1.0, -1.0 + 2.0j, 3.0], atol=1e-12)
    assert values.shape == (5,)


def test_repr_lists_the_matrices():
    text = repr(LinearSystem(A2, B2, name="plant"))
    assert "LinearSystem(name='plant'" in text
    assert "A=[[0.0, 1.0], [-2.0, -3.0]]" in text


# --- interoperability: python-control and scipy.signal ---------------------------------------------------
A3 = [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [-6.0, -11.0, -6.0]]
B3 = [[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]
C3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]
D3 = [[0.0, 0.5], [0.0, 0.0]]


def named_plant() -> LinearSystem:
    return LinearSystem(A3, B3, C3, D3, states=["q", "v", "a"], inputs=["force", "torque"],
                        outputs=["angle", "rate"], name="plant")


def test_to_control_and_back_keeps_matrices_and_names():
    control = pytest.importorskip("control")
    plant = named_plant()
    converted = plant.to_control()
    assert isinstance(converted, control.StateSpace)
    for label in "ABCD":  # copied, not recomputed: equal bit for bit
        np.testing.assert_array_equal(np.asarray(getattr(converted, label)), getattr(plant, label))
    assert converted.state_labels == ["q", "v", "a"]
    assert converted.input_labels == ["force", "torque"]
    assert converted.output_labels == ["angle", "rate"]
    assert converted.name == "plant" and converted.isctime()
    back = LinearSystem.from_control(converted)
    for label in "ABCD":
        np.testing.assert_array_equal(getattr(back, label), getattr(plant, label))
    assert (back.states, back.inputs, back.outputs, back.name) == (plant.states, plant.inputs, plant.outputs, "plant")
    assert LinearSystem.from_control(converted, name="renamed").name == "renamed"
    # python-control computes the same poles as robodyn: -1, -2, -3.
    np.testing.assert_allclose(np.sort(np.real(control.poles(converted))), [-3.0, -2.0, -1.0], atol=1e-9)


def test_to_control_without_inputs():
    pytest.importorskip("control")
    model = LinearSystem(A2, states=["p", "w"])
    back = LinearSystem.from_control(model.to_control())
    assert back.inputs == () and back.B.shape == (2, 0) and back.D.shape == (2, 0)
    assert back.states == ("p", "w") and back.outputs == ("p", "w")


def test_from_control_replaces_default_labels_by_robodyn_names():
    control = pytest.importorskip("control")
    system = control.ss(A2, B2, [[1.0, 0.0]], [[0.0]])  # labels x[0], x[1], u[0], y[0]: not valid names
    model = LinearSystem.from_control(system, name="plain")
    assert model.states == ("x1", "x2") and model.inputs == ("u1",) and model.outputs == ("y1",)
    np.testing.assert_array_equal(model.A, A2)


def test_from_control_rejects_an_unspecified_sample_period_and_other_types():
    control = pytest.importorskip("control")
    with pytest.raises(InputError, match=r"discrete-time system with an unspecified sample period \(dt=True\)"):
        LinearSystem.from_control(control.ss(A2, B2, [[1.0, 0.0]], [[0.0]], dt=True))
    assert LinearSystem.from_control(control.ss(A2, B2, [[1.0, 0.0]], [[0.0]], dt=0.1)).dt == 0.1  # carried
    with pytest.raises(InputError, match=r"control.ss\(sys\)"):
        LinearSystem.from_control(control.tf([1.0], [1.0, 3.0, 2.0]))


def test_to_control_without_python_control_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "control", None)  # makes `import control` raise ImportError
    with pytest.raises(InputError, match=r"install robodyn\[control\]"):
        named_plant().to_control()
    with pytest.raises(InputError, match=r"install robodyn\[control\]"):
        LinearSystem.from_control(object())


def test_to_scipy_state_space():
    import scipy.signal

    plant = named_plant()
    converted = plant.to_scipy()
    assert isinstance(converted, scipy.signal.StateSpace) and converted.dt is None  # continuous time
    for label in "ABCD":
        np.testing.assert_array_equal(getattr(converted, label), getattr(plant, label))
    converted.A[0, 0] = 5.0  # scipy's arrays are its own: the model is unchanged
    assert plant.A[0, 0] == 0.0


def test_trusted_constructor_makes_arrays_read_only():
    A, B = np.array(A2), np.array(B2)
    model = LinearSystem.from_checked(A, B, np.eye(2), np.zeros((2, 1)), states=("a", "b"), inputs=("u",),
                                  outputs=("a", "b"), name="t", x_op=np.zeros(2), u_op=np.zeros(1),
                                  method="central", error_estimate=1e-9)
    assert not A.flags.writeable and not model.x_op.flags.writeable
    assert model.method == "central" and model.error_estimate == 1e-9
    np.testing.assert_array_equal(model.f(0.0, [1.0, 0.0], [1.0]), [0.0, -1.0])


def test_a_diagrams_loop_crosses_to_python_control_and_back_with_its_names():
    """Defect: python-control refuses '.' in names, so a diagram's linearization (states plant.q, ...) could not
    become a StateSpace: the names cross as plant/q and come back as they were; python-control's margins of the
    loop equal robodyn's where its crossings are real (PID loop of the motor-driven joint)."""
    control = pytest.importorskip("control")
    from pathlib import Path

    diagram = robodyn.load(str(Path(__file__).resolve().parents[3] / "examples" / "motor_joint_pid.yaml"))
    loop = robodyn.linearize(diagram, np.zeros(diagram.n_states), np.zeros(diagram.n_inputs), open="pid.u")
    theirs = loop.to_control()
    assert list(theirs.state_labels) == [name.replace(".", "/") for name in loop.states]
    back = LinearSystem.from_control(theirs)
    assert (back.states, back.inputs, back.outputs, back.name) == (loop.states, loop.inputs, loop.outputs, loop.name)
    np.testing.assert_array_equal(back.A, loop.A)
    np.testing.assert_allclose(control.stability_margins(theirs), loop.margins().as_control(), rtol=1e-9)
    assert LinearSystem([[0.0]], [[1.0]], [[1.0]], states=["plant.q"]).states == ("plant.q",)
    with pytest.raises(InputError, match="not a valid name"):
        LinearSystem([[0.0]], [[1.0]], [[1.0]], states=["plant..q"])
