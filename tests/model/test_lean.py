"""``model.f``'s lean path (robodyn.model.lean): float64 vectors at the default parameters through the model's
compiled f bound once, against the general path (lists: Model.arguments' validation, then the same code).

The numbers must be the general path's bit for bit (the same machine code on the same values) on fixed and moving
bases (the stock Panda with its mimic finger; solo12 on a floating and a planar base; the stock Talos floating, slow
to compile), and every input the general path refuses must still be refused with its error and message: wrong
shapes, non-finite values, complex numbers, a non-unit base rotation; a rotation off by more than round-off is
still normalized with a warning.
"""

from __future__ import annotations

import math
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import robodyn
from pinocchio_reference import ROBOTS
from robodyn.base.errors import RobodynWarning
from robodyn.model.lean import LEAN_KEY

needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _robot(name: str) -> robodyn.Model:
    files = {"panda": ("panda_description/urdf/panda.urdf", None), "solo floating": (
        "solo_description/robots/solo12.urdf", "floating"), "solo planar": ("solo_description/robots/solo12.urdf",
                                                                          "planar"),
             "talos floating": ("talos_data/robots/talos_reduced.urdf", "floating")}
    path, base = files[name]
    return robodyn.load(str(ROBOTS / path), base=base, check_inertia=False)  # type: ignore[operator]


def _state(model: robodyn.Model, rng: np.random.Generator) -> np.ndarray:
    """A random state with a unit base rotation (a quaternion, or cos and sin) when the model has one."""
    x = rng.uniform(-1.0, 1.0, model.n_states)
    rotation = _rotation(model)
    x[rotation] /= np.linalg.norm(x[rotation])
    return x


def _rotation(model: robodyn.Model) -> list[int]:
    """The state's entries of a base rotation (the quaternion, or cos and sin), by name; none on a fixed base."""
    return [i for i, name in enumerate(model.states) if name in ("base_qx", "base_qy", "base_qz", "base_qw",
                                                                   "base_cos", "base_sin")]


ROBOTS_FAST = ["panda", "solo floating", "solo planar"]
ROBOTS_ALL = [*ROBOTS_FAST, pytest.param("talos floating", marks=pytest.mark.slow)]


@needs_robots
@pytest.mark.parametrize("name", ROBOTS_ALL)
def test_the_lean_f_is_the_general_f_bit_for_bit(name: str) -> None:
    model = _robot(name)
    rng = np.random.default_rng(len(name))
    for _ in range(5):
        x, u = _state(model, rng), rng.uniform(-5, 5, model.n_inputs)
        lean, general = model.f(0.0, x, u), model.f(0.0, x.tolist(), u.tolist())
        np.testing.assert_array_equal(lean, general)
        np.testing.assert_array_equal(model.f(0.5, x), model.f(0.5, x.tolist()))  # u = None: zeros
    assert model.__dict__[LEAN_KEY].f.__name__ == "f"  # the robot's compiled binding, not the general path's


@needs_robots
@pytest.mark.parametrize("name", ROBOTS_FAST)
def test_float_vectors_skip_the_general_validation(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The general path validates through Model.arguments (names, mappings, copies, the parameters' vector): float64
    vectors at the defaults do not call it, and still give its numbers."""
    model = _robot(name)
    x, u = _state(model, np.random.default_rng(3)), np.full(model.n_inputs, 0.5)
    expected = model.f(0.0, x.tolist(), u.tolist())

    def refuse(*args: object) -> None:
        raise AssertionError("the general path's validation ran")

    monkeypatch.setattr(type(model), "arguments", refuse)
    np.testing.assert_array_equal(model.f(0.0, x, u), expected)
    with pytest.raises(AssertionError, match="validation ran"):  # anything else still goes the general way
        model.f(0.0, x.tolist(), u)


def _bad_inputs(model: robodyn.Model) -> list[tuple[str, float, object, object]]:
    """(label, t, x, u): float64 arrays (the lean path's type) that the general path refuses."""
    n, m = model.n_states, model.n_inputs
    x, u = _state(model, np.random.default_rng(1)), np.zeros(m)
    nan_x, inf_u = x.copy(), u.copy()
    nan_x[-1], inf_u[0] = math.nan, math.inf
    cases = [("short x", 0.0, x[:-1], u), ("long u", 0.0, x, np.zeros(m + 1)), ("2-d x", 0.0, x[None], u),
             ("nan in x", 0.0, nan_x, u), ("inf in u", 0.0, x, inf_u), ("inf t", math.inf, x, u),
             ("nan t", math.nan, x, u), ("complex x", 0.0, x + 1j, u), ("empty x", 0.0, np.zeros(0), u)]
    if model.chart() is not None:
        twice = x.copy()
        twice[_rotation(model)] *= 2.0
        cases.append(("rotation of norm 2", 0.0, twice, u))
    del n
    return cases


@needs_robots
@pytest.mark.parametrize("name", ROBOTS_FAST)
def test_bad_inputs_raise_the_general_paths_errors(name: str) -> None:
    """Each is refused as Model.f refused it before its lean path: the general validation of the same arguments."""
    model = _robot(name)
    for label, t, x, u in _bad_inputs(model):
        with pytest.raises(robodyn.InputError) as lean:
            model.f(t, x, u)
        with pytest.raises(robodyn.InputError) as general:
            model.f_raw(*model.arguments(t, x, u, None))
        assert type(lean.value) is type(general.value), label
        assert str(lean.value) == str(general.value), label


@needs_robots
def test_a_rotation_off_by_more_than_round_off_is_normalized_with_a_warning() -> None:
    model = _robot("solo floating")
    x, u = _state(model, np.random.default_rng(4)), np.zeros(model.n_inputs)
    off = x.copy()
    off[3:7] *= 1.0 + 1e-9  # far from round-off, well within QUATERNION_TOLERANCE
    with pytest.warns(RobodynWarning, match="normalized"):
        lean = model.f(0.0, off, u)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobodynWarning)
        np.testing.assert_array_equal(lean, model.f(0.0, off.tolist(), u.tolist()))
    np.testing.assert_allclose(lean, model.f(0.0, x, u), rtol=0, atol=1e-6)
    round_off = x.copy()
    round_off[3:7] *= 1.0 + 2e-16  # round-off: left as given, no warning, the lean path's
    with warnings.catch_warnings():
        warnings.simplefilter("error", RobodynWarning)
        np.testing.assert_array_equal(model.f(0.0, round_off, u), model.f(0.0, round_off.tolist(), u.tolist()))


@needs_robots
def test_a_non_finite_result_is_the_general_paths() -> None:
    """Torques of 1e308 overflow q'': the lean path steps aside and the general path answers as before."""
    model = _robot("panda")
    x, u = np.zeros(model.n_states), np.full(model.n_inputs, 1e308)
    with np.errstate(over="ignore", invalid="ignore"):
        lean, general = model.f(0.0, x, u), model.f(0.0, x.tolist(), u.tolist())
    assert not np.isfinite(lean).all()
    np.testing.assert_array_equal(lean, general)


@needs_robots
def test_results_are_their_own_across_arenas_and_threads() -> None:
    """Each result is the next row of a block (a new block when one is used up): results kept keep their numbers,
    writing into one changes no other, and threads never share a block."""
    model = _robot("panda")
    rng = np.random.default_rng(9)
    points = [(_state(model, rng), rng.uniform(-1, 1, model.n_inputs)) for _ in range(700)]
    kept = [model.f(0.0, x, u) for x, u in points]
    kept[0][:] = 1e6  # the caller's to write
    for (x, u), result in list(zip(points, kept))[1:]:
        np.testing.assert_array_equal(result, model.f(0.0, x.tolist(), u.tolist()))
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda point: model.f(0.0, *point), points))
    for (x, u), result in zip(points, found):
        np.testing.assert_array_equal(result, model.f(0.0, x.tolist(), u.tolist()))


def test_a_parameter_copy_and_parameter_overrides_use_their_own_values() -> None:
    """Parameter copies share the model's dictionary, and so its threads' bindings: each binds its own values."""
    model = robodyn.load(str(EXAMPLES / "planar_arm.yaml"))
    heavy = model.with_parameters(m2=1.6)
    x, u = np.array([0.3, -0.4, 0.5, 0.2]), np.array([0.1, -0.2])
    original = model.f(0.0, x, u)
    assert not np.array_equal(heavy.f(0.0, x, u), original)
    np.testing.assert_array_equal(heavy.f(0.0, x, u), heavy.f(0.0, x.tolist(), u.tolist()))
    np.testing.assert_array_equal(model.f(0.0, x, u), original)
    np.testing.assert_array_equal(model.f(0.0, x, u, params={"m2": 1.6}), heavy.f(0.0, x, u))
    np.testing.assert_array_equal(model.f(0.0, x, u), original)


def test_models_without_compiled_dynamics_take_the_general_path() -> None:
    pendulum = robodyn.load("pendulum")
    x = np.array([0.3, 0.1])
    np.testing.assert_array_equal(pendulum.f(0.0, x, np.array([0.5])), pendulum.f(0.0, [0.3, 0.1], [0.5]))
    assert pendulum.__dict__[LEAN_KEY].f.__name__ == "_none"


@needs_robots
def test_a_block_is_written_again_once_nothing_holds_its_results() -> None:
    """A loop that drops its results uses one block (its results' base) again and again; a result, or any view of
    one, still held keeps its block from being written: the next block is a new one."""
    model = _robot("solo floating")
    x, u = _state(model, np.random.default_rng(5)), np.zeros(model.n_inputs)
    first = model.f(0.0, x, u)
    block = weakref.ref(first.base)  # not a reference: holding the block would keep it in use
    del first
    for _ in range(500):  # several blocks' worth, each result dropped at once
        model.f(0.0, x, u)
    again = model.f(0.0, x, u)
    assert again.base is block()
    held = again[:3]  # a view of a result: the block is still in use
    expected = held.copy()
    del again
    for _ in range(500):  # the rest of its block, then others: its row is never written again
        last = model.f(0.0, x, u + 0.01)
    assert last.base is not held.base
    np.testing.assert_array_equal(held, expected)


def test_without_the_row_builtin_the_ctypes_row_call_gives_the_same_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the interpreter's objects are not laid out as the row builtin reads them (rowbuiltin.available() False),
    the binding copies the point in from Python and runs the ctypes row call: the same bits, the same refusals."""
    from robodyn.codegen.llvm import rowbuiltin

    monkeypatch.setattr(rowbuiltin, "available", lambda: False)
    model = robodyn.load(str(EXAMPLES / "planar_arm.yaml"))
    model.__dict__.pop(LEAN_KEY, None)  # bind again, without the builtin
    rng = np.random.default_rng(11)
    points = [(rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 2)) for _ in range(700)]  # several blocks
    kept = [model.f(0.0, x, u) for x, u in points]
    for (x, u), result in zip(points, kept):
        np.testing.assert_array_equal(result, model.f(0.0, x.tolist(), u.tolist()))
    assert "kernel" not in model.__dict__[LEAN_KEY].f.__code__.co_freevars  # the ctypes binding answered
    with pytest.raises(robodyn.InputError):
        model.f(0.0, np.array([0.0, math.nan, 0.0, 0.0]), points[0][1])


def test_the_row_builtin_binding_answers_on_this_interpreter() -> None:
    model = robodyn.load(str(EXAMPLES / "planar_arm.yaml"))
    x, u = np.array([0.3, -0.4, 0.5, 0.2]), np.array([0.1, -0.2])
    np.testing.assert_array_equal(model.f(0.0, x, u), model.f(0.0, x.tolist(), u.tolist()))
    assert "kernel" in model.__dict__[LEAN_KEY].f.__code__.co_freevars
