"""One model contract, checked: ModelContract is Model's public surface, and every model kind answers all of it.

- The protocol lists exactly Model's public members with the same signatures, so the two cannot drift.
- Every kind — each catalog model, a chain and a first-order model from files, a URDF robot on both backends, a
  parsed-model record, Python callables with and without outputs, linear systems in continuous and discrete
  time — is run through the whole contract: each answer has the documented type and shape, and agrees with
  the numbers (an exact Jacobian matches differences of f; a linear model reproduces f).
- :data:`CAPABILITIES` is what each kind offers: removing one (a kind answering None where it had an answer)
  or adding one fails :func:`test_each_kind_offers_exactly_its_capabilities`.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.files import cached
from robodyn.files.cached import CachedModel, cached_model
from robodyn.files.catalog import CATALOG
from robodyn.files.loading import model_text
from robodyn.mechanisms.loops.constraints import ConstraintSet
from robodyn.model.events import Event
from robodyn.model.kinds.symbolic_form import SymbolicForm
from robodyn.model.protocol import ExplicitForm, KinematicTree, Manipulator, ModelContract
from robodyn.model.system import Model

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _public(cls: type) -> set[str]:
    names = {n for n in dir(cls) if not n.startswith("_")}
    for klass in cls.__mro__:
        names |= {n for n in getattr(klass, "__annotations__", {}) if not n.startswith("_")}
    return names


def _protocol_members() -> set[str]:
    own = {n for n in vars(ModelContract) if not n.startswith("_")}
    return own | {n for n in ModelContract.__annotations__ if not n.startswith("_")}


def _signature(cls: type, name: str) -> str:
    member = inspect.getattr_static(cls, name)
    if isinstance(member, property):
        return "property -> " + str(inspect.signature(member.fget).return_annotation)
    if callable(member):
        return str(inspect.signature(member))
    return "attribute"


def test_the_protocol_is_models_whole_public_surface() -> None:
    model, contract = _public(Model), _protocol_members()
    assert not model - contract, f"Model members missing from ModelContract: {sorted(model - contract)}"
    assert not contract - model, f"ModelContract members Model does not have: {sorted(contract - model)}"
    assert len(contract) > 50


@pytest.mark.parametrize("name", sorted(_protocol_members() - set(Model.__annotations__)))
def test_each_member_has_models_signature(name: str) -> None:
    expected = _signature(Model, name)
    given = _signature(ModelContract, name)
    if expected == "attribute":  # a class attribute of Model (kind, derived_parameters, ...): a property here
        assert given.startswith("property"), name
        return
    assert given == expected, f"{name}: ModelContract says {given}, Model {expected}"


# --- every kind through the whole contract ----------------------------------------------------------------------
def _cached_pendulum() -> Model:
    found = model_text("pendulum")
    assert found is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cached_model(*found)  # the record exists
        cached._models.clear()
        model = cached_model(*found)
    assert isinstance(model, CachedModel)
    return model


def _callable(outputs: bool) -> Model:
    def f(t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> np.ndarray:
        return np.array([x[1], -p[0] * np.sin(x[0]) + u[0]])

    if not outputs:
        return robodyn.System(f, ["q", "v"], ["tau"], parameters={"g": 9.81}, name="callable")
    return robodyn.System(f, ["q", "v"], ["tau"], h=lambda t, x, u, p: np.array([np.cos(x[0])]), outputs=["c"],
                          parameters={"g": 9.81}, name="callable_out")


def _linear(dt: float | None) -> Model:
    A = np.array([[0.0, 1.0], [-2.0, -0.3]]) if dt is None else np.array([[1.0, 0.01], [-0.02, 0.997]])
    return robodyn.LinearSystem(A, np.array([[0.0], [1.0]]), np.array([[1.0, 0.0]]), np.zeros((1, 1)), dt=dt,
                                name="lti" if dt is None else "lti_discrete")


def _diagram() -> Model:
    """The joint closed by a lag-PI block (robodyn.diagrams.diagram)."""
    pi = robodyn.LinearSystem(np.array([[-2.0]]), np.array([[1.0, -1.0]]), np.array([[5.0]]), np.array([[20.0, -20.0]]),
                              states=("xc",), inputs=("r", "y"), outputs=("u",), name="pi")
    return robodyn.Diagram({"plant": robodyn.load("joint"), "pi": pi}, ["pi.u -> plant.u", "plant.q -> pi.y"],
                           inputs={"r": "pi.r"}, outputs={"q": "plant.q"}, name="joint_pi")


KINDS: dict[str, Callable[[], Model]] = {
    **{f"catalog:{name}": (lambda n=name: robodyn.load(n)) for name in CATALOG},
    "chain file": lambda: robodyn.load(str(EXAMPLES / "planar_arm.yaml")),
    "first-order file": lambda: robodyn.load(str(EXAMPLES / "decay.yaml")),
    "urdf tape": lambda: robodyn.load(str(EXAMPLES / "two_link_arm.urdf")),
    "urdf pinocchio": lambda: robodyn.load(str(EXAMPLES / "two_link_arm.urdf"), backend="pinocchio"),
    "mjcf": lambda: robodyn.load(str(EXAMPLES / "two_link_arm.xml")),
    "parsed-model record": _cached_pendulum,
    "python callable": lambda: _callable(False),
    "python callable with outputs": lambda: _callable(True),
    "linear": lambda: _linear(None),
    "linear discrete": lambda: _linear(0.01),
    "diagram": lambda: _diagram(),
    "compiled diagram": lambda: robodyn.load(str(EXAMPLES / "motor_joint_pid.yaml")),
    "closed chain file": lambda: robodyn.load(str(EXAMPLES / "four_bar.yaml")),
    "contact chain file": lambda: robodyn.load(str(EXAMPLES / "box_on_incline.yaml")),
    "impact chain file": lambda: robodyn.load(str(EXAMPLES / "bouncing_ball.yaml")),
}

#: The capabilities each kind has (the optional answers that are not None / False / empty).
_SECOND_ORDER = {"compilable", "jacobian", "output_jacobians", "kernel_jacobian", "kernel_output", "symbol_table",
                 "manipulator", "symbolic_form", "explicit_form", "equation_terms", "latex", "exported_functions",
                 "parameter_jacobian", "kernel_parameter_jacobian"}
CAPABILITIES: dict[str, set[str]] = {
    "catalog:joint": _SECOND_ORDER | {"linear_model", "affine_form", "mechanical_matrices", "scalar_damping",
                                      "linear_by_construction"},
    "catalog:joint_direct_drive": _SECOND_ORDER | {"linear_model", "affine_form", "mechanical_matrices",
                                                   "scalar_damping", "linear_by_construction"},
    "catalog:mbk": _SECOND_ORDER | {"linear_model", "affine_form", "mechanical_matrices", "linear_by_construction"},
    "catalog:pendulum": _SECOND_ORDER | {"energy", "kinematics"},
    "catalog:double_pendulum": _SECOND_ORDER | {"energy", "kinematics"},
    "catalog:cart_pole": _SECOND_ORDER | {"energy"},  # no named points: no frames
    "catalog:acrobot": _SECOND_ORDER | {"energy", "kinematics"},
    "catalog:two_link_arm": _SECOND_ORDER | {"energy", "kinematics", "torque_regressor", "linearization_call"},
    "chain file": _SECOND_ORDER | {"energy", "kinematics", "torque_regressor", "linearization_call"},
    "first-order file": {"compilable", "jacobian", "output_jacobians", "kernel_jacobian", "kernel_output",
                         "symbol_table", "symbolic_form", "explicit_form", "latex", "affine_form",
                         "exported_functions", "parameter_jacobian", "kernel_parameter_jacobian"},
    "urdf tape": _SECOND_ORDER | {"energy", "kinematics", "position_limits", "torque_regressor",
                                  "linearization_call", "geometry_file"},
    "urdf pinocchio": {"jacobian", "output_jacobians", "manipulator", "position_limits", "geometry_file"},
    "mjcf": _SECOND_ORDER | {"energy", "kinematics", "position_limits", "torque_regressor", "linearization_call",
             "geometry_file"},
    "parsed-model record": _SECOND_ORDER | {"energy", "kinematics"},
    "python callable": {"output_jacobians"},
    "python callable with outputs": set(),
    "linear": {"jacobian", "output_jacobians", "linear_model", "affine_form", "explicit_form",
               "linear_by_construction", "parameter_jacobian"},
    "linear discrete": {"jacobian", "output_jacobians", "linear_model", "explicit_form", "linear_by_construction",
                        "sample_period", "parameter_jacobian"},
    # its LinearSystem block compiles as its lti block (robodyn.diagrams.code.code_blocks); it has no C functions
    "diagram": {"jacobian", "output_jacobians", "affine_form", "compilable", "kernel_jacobian", "kernel_output",
                "symbol_table", "parameter_jacobian", "kernel_parameter_jacobian"},
    "compiled diagram": {"jacobian", "output_jacobians", "affine_form", "compilable", "kernel_jacobian",
                         "kernel_output", "symbol_table", "exported_functions", "parameter_jacobian",
                         "kernel_parameter_jacobian"},
    "closed chain file": {"compilable", "jacobian", "output_jacobians", "kernel_jacobian", "kernel_output",
                          "symbol_table", "energy", "kinematics", "constraints"},
    "contact chain file": {"compilable", "jacobian", "output_jacobians", "kernel_jacobian", "kernel_output",
                           "symbol_table", "energy", "kinematics"},
    "impact chain file": {"compilable", "jacobian", "output_jacobians", "kernel_jacobian", "kernel_output",
                          "symbol_table", "energy", "kinematics", "impacts"},
}


@pytest.fixture(scope="module", params=sorted(KINDS))
def kind(request: pytest.FixtureRequest) -> tuple[str, Model]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return request.param, KINDS[request.param]()


def _point(model: ModelContract, seed: int = 0) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return 0.3, rng.uniform(-0.4, 0.4, model.n_states), rng.uniform(-0.5, 0.5, model.n_inputs), \
        model.parameter_vector()


def _offered(model: ModelContract) -> set[str]:
    """The optional capabilities ``model`` answers, each answer checked for its type and shape."""
    n, m, n_out = model.n_states, model.n_inputs, model.n_outputs
    t, x, u, p = _point(model)
    found = set()
    if model.compilable:
        assert isinstance(model.kernel_rhs_source(), str)
        found.add("compilable")
    else:
        assert model.kernel_rhs_source() is None
    if model.jacobian_method is not None:
        A, B = model.jacobians_raw(t, x, u, p)
        assert A.shape == (n, n) and B.shape == (n, m)
        found.add("jacobian")
    else:
        with pytest.raises(NotImplementedError):
            model.jacobians_raw(t, x, u, p)
    outputs = model.output_jacobians_raw(t, x, u, p)
    if outputs is not None:
        assert outputs[0].shape == (n_out, n) and outputs[1].shape == (n_out, m)
        found.add("output_jacobians")
    if model.jacobian_method is not None and outputs is not None:
        flat = model.linearization_raw(t, x, u, p)
        assert flat.shape == (n * n + n * m + n_out * n + n_out * m,)
        into, bound = np.full_like(flat, np.nan), np.full_like(flat, np.nan)
        model.linearization_into(t, x, u, p, into)
        model.bound_linearization(t, p, bound)(x, u)
        np.testing.assert_array_equal(into, flat)
        np.testing.assert_array_equal(bound, flat)
        raw = model.linearization_call(t, p)
        if raw is not None:  # machine code reading x, u and writing A..D where it is told: a row [flat | x | u]
            call, template = raw
            row = np.full(flat.size + n + m, np.nan)
            row[: flat.size], row[flat.size:] = template, np.concatenate([x, u])
            at = row.__array_interface__["data"][0]
            call.function(t, at + 8 * flat.size, at + 8 * (flat.size + n), call.at_p, call.at_a, at)
            np.testing.assert_array_equal(row[: flat.size], flat)
            found.add("linearization_call")
    if model.parameter_jacobian_method is not None:  # df/dp and dh/dp with their shapes (values: the test below)
        assert model.parameter_jacobian_raw(t, x, u, p).shape == (n, len(p))
        hp = model.output_parameter_jacobian_raw(t, x, u, p)
        assert hp is not None and hp.shape == (n_out, len(p))
        found.add("parameter_jacobian")
    else:
        with pytest.raises(NotImplementedError):
            model.parameter_jacobian_raw(t, x, u, p)
    for name, source in (("kernel_jacobian", model.kernel_jacobian_source()),
                         ("kernel_output", model.kernel_output_source()),
                         ("kernel_parameter_jacobian", model.kernel_parameter_jacobian_source())):
        if source is not None:
            assert isinstance(source, str) and "def " in source
            found.add(name)
    table = model.symbol_table()
    if table is not None:
        assert len(table.x_symbols) == n and len(table.u_symbols) == m and len(table.p_symbols) == len(p)
        assert table.t_symbol is not None
        found.add("symbol_table")
    linear = model.linear_model()
    if linear is not None:
        assert linear.A.shape == (n, n) and linear.B.shape == (n, m)
        found.add("linear_model")
    affine = model.affine_form(p)
    if affine is not None:
        A, B, c = affine
        assert A.shape == (n, n) and B.shape == (n, m) and c.shape == (n,)
        np.testing.assert_allclose(A @ x + B @ u + c, model.f_raw(t, x, u, p), rtol=1e-12, atol=1e-12)
        found.add("affine_form")
    manipulator = model.manipulator()
    if manipulator is not None:
        assert isinstance(manipulator, Manipulator) and manipulator.n_coordinates * 2 == n
        mass = manipulator.mass_raw(t, x, u, p)
        assert mass.shape == (n // 2, n // 2) and np.allclose(mass, mass.T)
        found.add("manipulator")
    tree = model.kinematics()
    if tree is not None:
        assert isinstance(tree, KinematicTree) and tree.frames
        pose = tree.evaluate("pose", tree.frames[-1], x[None], p)
        assert pose.shape == (1, 12)
        found.add("kinematics")
    energy = model.energy(x)
    if energy is not None:
        assert len(energy) == 2 and all(np.isfinite(energy))
        found.add("energy")
    matrices = model.mechanical_matrices()
    if matrices is not None:
        assert all(isinstance(matrix, np.ndarray) for matrix in matrices)
        found.add("mechanical_matrices")
    if model.scalar_damping() is not None:
        found.add("scalar_damping")
    explicit = model.explicit_form(4)
    if explicit is not None:
        assert isinstance(explicit, ExplicitForm) and explicit.f.shape == (n, 1) and explicit.jacobian.shape == (n, n)
        found.add("explicit_form")
    form = model.symbolic_form()
    if form is not None:
        assert isinstance(form, SymbolicForm) and len(form.states) == n and len(form.inputs) == m
        assert {e.role for e in form.equations} <= {"rate", "mass"} and len(form.outputs) == n_out
        found.add("symbolic_form")
    reason = model.linear_by_construction()
    if reason is not None:
        assert isinstance(reason, str) and reason
        found.add("linear_by_construction")
    if model.equation_terms() is not None:
        found.add("equation_terms")
    latex, lines = model.latex_text(), model.latex_lines()
    assert (latex is None) == (lines is None)
    if latex is not None:
        assert isinstance(latex, str) and all(isinstance(line, str) for line in lines or ())
        found.add("latex")
    limits = model.position_limits()
    assert all(name in model.states for name in limits)
    if limits:
        found.add("position_limits")
    if model.sample_period is not None:
        assert model.sample_period > 0
        found.add("sample_period")
    if model.geometry_file is not None:  # a robot file with shapes to draw (robodyn.viewer)
        assert model.geometry_file.is_file()
        found.add("geometry_file")
    constraints = model.constraints()
    if constraints is not None:  # closed loops: residuals named by row, a state assembled onto them
        assert isinstance(constraints, ConstraintSet) and 0 < constraints.k <= constraints.n == n // 2
        state = constraints.assemble(t, x, p, {})
        assert set(constraints.residuals(t, state, p)) == {*constraints.rows, *(f"{r}'" for r in constraints.rows)}
        assert max(map(abs, constraints.residuals(t, state, p).values())) <= 1e-9
        found.add("constraints")
    impacts = model.impacts()
    if impacts is not None:  # rigid contacts: their terminal events parse in each mode's table, the map keeps q
        assert len(impacts) > 0 and all(isinstance(e, Event) for e in impacts.events(frozenset()))
        for event in impacts.events(frozenset()):
            model.symbol_table().expression(event.expression, event.name)
        assert np.array_equal(impacts.jump(t, x, p, 0, frozenset(), plastic=False)[: n // 2], x[: n // 2])
        found.add("impacts")
    regressor = model.torque_regressor()
    if regressor is not None:  # inverse dynamics = Y theta: its sizes and its product at the defaults
        n = len(regressor.coordinates)
        q, qd, qdd = x[:n], x[n:2 * n], np.linspace(-0.5, 0.5, n)
        Y = np.empty((n, len(regressor.names)))
        regressor.matrices(np.concatenate([q, qd])[None, :], qdd[None, :], p, Y.reshape(1, -1))
        tau = model.inverse_dynamics(q, qd, qdd)
        np.testing.assert_allclose(Y @ regressor.values(p), tau, rtol=1e-12, atol=1e-12 * np.abs(tau).max())
        found.add("torque_regressor")
    exported = model.exported_functions()
    if exported is not None:  # functions on one tape for C export: the contract's sizes (robodyn.model.exported)
        sizes = {"f": model.n_states, "h": model.n_outputs,
                 "linearize": (model.n_states + model.n_outputs) * (model.n_states + model.n_inputs)}
        assert all(len(exported.functions[name]) == size for name, size in sizes.items())
        found.add("exported_functions")
    return found


def test_each_kind_answers_the_numbers_with_their_shapes(kind: tuple[str, Model]) -> None:
    _, model = kind
    n, m, n_out = model.n_states, model.n_inputs, model.n_outputs
    assert (n, m, n_out) == (len(model.states), len(model.inputs), len(model.outputs)) and n > 0
    assert model.order in (1, 2) and isinstance(model.kind, str) and isinstance(model.name, str)
    t, x, u, p = _point(model)
    assert model.arguments(t, dict(zip(model.states, x)), None, None)[1].tolist() == x.tolist()
    np.testing.assert_array_equal(model.state_vector(x), x)
    assert model.input_vector(None).shape == (m,) and model.parameter_vector().shape == (len(model.parameters),)
    assert model.default_parameters()[1].tolist() == model.parameter_vector().tolist()
    f = model.f_raw(t, x, u, p)
    assert f.shape == (n,) and np.all(np.isfinite(f))
    np.testing.assert_array_equal(model.f(t, x, u), f)
    y = model.h_raw(t, x, u, p)
    assert y.shape == (n_out,)
    if model.outputs_are_states:
        np.testing.assert_array_equal(y, x)
    ts, xs, us = np.array([t, t + 0.1]), np.stack([x, x * 0.5]), np.stack([u, u])
    np.testing.assert_allclose(model.f_many(ts, xs, us, p)[0], f, rtol=1e-13, atol=1e-13)
    assert model.h_many(ts, xs, us, p).shape == (2, n_out)
    runs = model.h_batch(ts, xs[None], us[None], p[None])
    np.testing.assert_allclose(runs[0], model.h_many(ts, xs, us, p), rtol=1e-13, atol=1e-13)
    assert callable(model.raw_function("f")) and callable(model.raw_function("h"))
    assert isinstance(model.units(), dict) and isinstance(model.show_text(), str)
    assert isinstance(model.memo(), dict)
    if model.parameters:
        first = next(iter(model.parameters))
        heavier = model.with_parameters({first: model.parameters[first] * 1.5})
        assert heavier.parameters[first] == pytest.approx(model.parameters[first] * 1.5)
        assert heavier.states == model.states


def test_no_kind_overrides_the_validation_of_values(kind: tuple[str, Model]) -> None:
    """robodyn.linearize validates plain floats on a lean path that repeats Model.arguments' checks."""
    _, model = kind
    assert type(model).arguments is Model.arguments
    assert type(model).state_vector is Model.state_vector and type(model).input_vector is Model.input_vector


def test_an_exact_jacobian_matches_differences_of_f(kind: tuple[str, Model]) -> None:
    """Central differences with step 1e-6 have error ~1e-10 relative (the third derivative is O(1) here)."""
    _, model = kind
    if model.jacobian_method is None:
        pytest.skip("no exact Jacobian")
    t, x, u, p = _point(model, 1)
    A, B = model.jacobians_raw(t, x, u, p)
    step = 1e-6
    for j in range(model.n_states):
        dx = np.zeros(model.n_states)
        dx[j] = step
        column = (model.f_raw(t, x + dx, u, p) - model.f_raw(t, x - dx, u, p)) / (2 * step)
        np.testing.assert_allclose(A[:, j], column, rtol=1e-6, atol=1e-6)
    for j in range(model.n_inputs):
        du = np.zeros(model.n_inputs)
        du[j] = step
        column = (model.f_raw(t, x, u + du, p) - model.f_raw(t, x, u - du, p)) / (2 * step)
        np.testing.assert_allclose(B[:, j], column, rtol=1e-6, atol=1e-6)


def test_an_exact_parameter_jacobian_matches_differences_of_f_and_h(kind: tuple[str, Model]) -> None:
    """df/dp and dh/dp (and the compiled ``jacp`` where there is one) against central differences of f and h in each
    parameter, step 1e-6 times its value (1e-6 for a zero): error ~1e-10 relative for the smooth models here, so 1e-6
    separates a right derivative from a wrong one (a missing chain-rule term through a derived parameter is O(1))."""
    _, model = kind
    if model.parameter_jacobian_method is None:
        pytest.skip("no exact parameter Jacobian")
    t, x, u, p = _point(model, 2)
    F, H = model.parameter_jacobian_raw(t, x, u, p), model.output_parameter_jacobian_raw(t, x, u, p)
    assert H is not None
    for j in range(len(p)):
        dp = np.zeros(len(p))
        dp[j] = 1e-6 * (abs(p[j]) or 1.0)
        for function, exact in ((model.f_raw, F), (model.h_raw, H)):
            column = (function(t, x, u, p + dp) - function(t, x, u, p - dp)) / (2 * dp[j])
            np.testing.assert_allclose(exact[:, j], column, rtol=1e-6, atol=1e-6)
    source = model.kernel_parameter_jacobian_source()
    if source is not None and F.size:  # the generated jacp gives the same numbers (round-off apart)
        from robodyn.model.compiled import python_function

        jacp = python_function(model, "parameter jacobian")
        assert jacp is not None
        out = np.full(F.size, np.nan)
        jacp(t, x, u, p, out)
        np.testing.assert_allclose(out.reshape(F.shape), F, rtol=1e-12, atol=1e-12)


def test_each_kind_offers_exactly_its_capabilities(kind: tuple[str, Model]) -> None:
    name, model = kind
    assert _offered(model) == CAPABILITIES[name]


def test_the_table_covers_every_kind_and_the_classifier_reads_only_the_contract() -> None:
    assert set(CAPABILITIES) == set(KINDS)
    symbolic = robodyn.classify(robodyn.load("pendulum"))
    structural = robodyn.classify(_linear(None))
    sampled = robodyn.classify(_callable(False))
    assert (symbolic.method, structural.method, sampled.method) == ("symbolic", "structural", "sampled")


def test_removing_a_capability_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe: a Lagrangian model that stopped answering energy() no longer matches its row of the table."""
    model = robodyn.load("pendulum")
    assert "energy" in _offered(model)
    monkeypatch.setattr(type(model), "energy", lambda self, x, params=None: None)
    assert _offered(model) != CAPABILITIES["catalog:pendulum"]

