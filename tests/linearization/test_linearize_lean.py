"""linearize's lean path on moving bases and large trees (robodyn.linearization.lean): float64 vectors at the
default parameters through the chart's raw machine code (ChartModel.linearization_call: the tape's solved Jacobians
up to SOLVE_LIMIT velocities, the tape's factor and the compiled sparse solve on addresses above), against the
general path (lists: tangent_linearization with its validation, then the chart's linearization).

The results must be the general path's bit for bit, fields and units included (solo12 floating, nv 18 > SOLVE_LIMIT;
solo12 planar, nv 15 on the tape; the stock Talos floating, slow to compile), read-only (C and D shared by every
result and not made writable), and every input the general path refuses still refused with its error.
"""

from __future__ import annotations

import math
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import robodyn
from pinocchio_reference import ROBOTS
from robodyn.base.errors import RobodynWarning
from robodyn.rigid.dynamics import SOLVE_LIMIT

pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

FIELDS = ("states", "inputs", "outputs", "name", "method", "error_estimate", "dt")


def _robot(name: str) -> robodyn.Model:
    files = {"solo floating": ("solo_description/robots/solo12.urdf", "floating"),
             "solo planar": ("solo_description/robots/solo12.urdf", "planar"),
             "talos floating": ("talos_data/robots/talos_reduced.urdf", "floating"),
             "panda": ("panda_description/urdf/panda.urdf", None)}
    path, base = files[name]
    return robodyn.load(str(ROBOTS / path), base=base, check_inertia=False)  # type: ignore[operator]


def _state(model: robodyn.Model, rng: np.random.Generator) -> np.ndarray:
    x = rng.uniform(-1.0, 1.0, model.n_states)
    rotation = _rotation(model)
    x[rotation] /= np.linalg.norm(x[rotation])
    return x


def _rotation(model: robodyn.Model) -> list[int]:
    """The state's entries of a base rotation (the quaternion, or cos and sin), by name; none on a fixed base."""
    return [i for i, name in enumerate(model.states) if name in ("base_qx", "base_qy", "base_qz", "base_qw",
                                                                   "base_cos", "base_sin")]


def _same(lean: robodyn.LinearSystem, general: robodyn.LinearSystem) -> None:
    for label in ("A", "B", "C", "D", "x_op", "u_op"):
        np.testing.assert_array_equal(getattr(lean, label), getattr(general, label))
        assert not getattr(lean, label).flags.writeable
    assert all(getattr(lean, f) == getattr(general, f) for f in FIELDS)
    assert dict(lean.declared_units) == dict(general.declared_units)


MOVING = ["solo floating", "solo planar", pytest.param("talos floating", marks=pytest.mark.slow)]


@pytest.mark.parametrize("name", MOVING)
def test_a_moving_base_linearizes_as_the_general_path_bit_for_bit(name: str) -> None:
    model = _robot(name)
    assert (model.nv > SOLVE_LIMIT) == (name != "solo planar")  # both of the chart's raw codes
    rng = np.random.default_rng(len(name))
    for _ in range(3):
        x, u = _state(model, rng), rng.uniform(-3, 3, model.n_inputs)
        _same(robodyn.linearize(model, x, u), robodyn.linearize(model, x.tolist(), u.tolist()))
    _same(robodyn.linearize(model, x), robodyn.linearize(model, x.tolist()))  # u = None: zeros


@pytest.mark.parametrize("name", ["solo floating", "solo planar", "panda"])
def test_float_vectors_skip_the_general_path(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The general path validates the point (tangent_linearization on a moving base, Model.arguments' mappings and
    copies) and allocates each matrix: float64 vectors take the lean path and give its numbers."""
    from robodyn.linearization import linearize as module
    from robodyn.linearization import tangent_points

    model = _robot(name)
    x, u = _state(model, np.random.default_rng(6)), np.full(model.n_inputs, 0.2)
    expected = robodyn.linearize(model, x.tolist(), u.tolist())

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the general path ran")

    monkeypatch.setattr(tangent_points, "tangent_linearization", refuse)
    monkeypatch.setattr(module.Point, "of", refuse)
    _same(robodyn.linearize(model, x, u), expected)


def test_the_charts_raw_code_writes_what_its_template_leaves_open() -> None:
    """ChartModel.linearization_call as a model's: the call writes the template's NaN entries of [A | B] (and no
    others), the template holds the rest, C = I and D = 0; the row read is the stored state, the chart's d = 0,
    then u."""
    for name in ("solo floating", "solo planar"):
        model = _robot(name)
        chart = model.chart()
        x, u = _state(model, np.random.default_rng(2)), np.full(model.n_inputs, -0.4)
        A, B, C, D = chart.linearization(0.0, x, u, model.parameter_vector())
        call, template = chart.linearization_call(0.0, model.parameter_vector())
        size = A.size + B.size
        flat = np.concatenate([A.ravel(), B.ravel(), C.ravel(), D.ravel()])
        np.testing.assert_array_equal(template[size:], flat[size:])
        row = template[:size].copy()
        row[np.isnan(row)] = 7.0  # the call's to overwrite
        point = np.concatenate([x, np.zeros(len(chart.tangent)), u])
        at_row, at_point = row.ctypes.data, point.ctypes.data
        call.function(0.0, at_point, at_point + 8 * (x.size + len(chart.tangent)), call.at_p, call.at_a, at_row)
        np.testing.assert_array_equal(row, flat[:size])
        constant = ~np.isnan(template[:size])
        np.testing.assert_array_equal(row[constant], template[:size][constant])


@pytest.mark.parametrize("name", ["solo floating", "solo planar"])
def test_bad_points_raise_the_general_paths_errors(name: str) -> None:
    model = _robot(name)
    x, u = _state(model, np.random.default_rng(1)), np.zeros(model.n_inputs)
    nan_x, twice, inf_u = x.copy(), x.copy(), u.copy()
    nan_x[0], inf_u[-1] = math.nan, math.inf
    twice[_rotation(model)] *= 2.0
    for label, point, inputs in (("short x", x[:-1], u), ("nan in x", nan_x, u), ("inf in u", x, inf_u),
                                 ("rotation of norm 2", twice, u), ("long u", x, np.zeros(u.size + 1))):
        with pytest.raises(robodyn.InputError) as lean:
            robodyn.linearize(model, point, inputs)
        with pytest.raises(robodyn.InputError) as general:
            robodyn.linearize(model, point.tolist(), inputs.tolist())
        assert (type(lean.value), str(lean.value)) == (type(general.value), str(general.value)), label


def test_a_rotation_off_by_more_than_round_off_is_normalized_with_a_warning() -> None:
    model = _robot("solo floating")
    x, u = _state(model, np.random.default_rng(3)), np.zeros(model.n_inputs)
    off = x.copy()
    off[3:7] *= 1.0 + 1e-9
    with pytest.warns(RobodynWarning, match="normalized"):
        lean = robodyn.linearize(model, off, u)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobodynWarning)
        _same(lean, robodyn.linearize(model, off.tolist(), u.tolist()))


def test_results_keep_their_numbers_across_arenas_and_threads_and_stay_read_only() -> None:
    """A large robot's arena holds at least MIN_ROWS rows: results kept across many arenas keep their numbers, and
    C and D (shared constants) cannot be made writable."""
    from robodyn.linearization.lean import MIN_ROWS

    model = _robot("solo floating")
    rng = np.random.default_rng(12)
    points = [(_state(model, rng), rng.uniform(-1, 1, model.n_inputs)) for _ in range(3 * MIN_ROWS + 3)]
    kept = [robodyn.linearize(model, x, u) for x, u in points]
    with ThreadPoolExecutor(3) as pool:
        threaded = list(pool.map(lambda point: robodyn.linearize(model, *point), points))
    for (x, u), first, second in zip(points, kept, threaded):
        general = robodyn.linearize(model, x.tolist(), u.tolist())
        _same(first, general)
        _same(second, general)
    assert kept[0].C is kept[1].C or np.shares_memory(kept[0].C, kept[1].C)  # one constant for every result
    for array in (kept[0].A, kept[0].B, kept[0].C, kept[0].D, kept[0].x_op):  # none can be made writable
        with pytest.raises(ValueError):
            array.setflags(write=True)


def test_a_loop_that_drops_its_results_writes_one_block_again() -> None:
    """Results not held free their rows for the next ones (the same block, its base); a held result keeps its own
    numbers however many follow."""
    model = _robot("solo floating")
    rng = np.random.default_rng(13)
    x, u = _state(model, rng), rng.uniform(-1, 1, model.n_inputs)
    block = weakref.ref(robodyn.linearize(model, x, u).A.base)  # not a reference: that would keep it in use
    for _ in range(50):
        robodyn.linearize(model, x, u)
    assert robodyn.linearize(model, x, u).A.base is block()
    kept = robodyn.linearize(model, x, u)
    expected = robodyn.linearize(model, x.tolist(), u.tolist())
    for _ in range(50):
        robodyn.linearize(model, _state(model, rng), u)
    _same(kept, expected)
