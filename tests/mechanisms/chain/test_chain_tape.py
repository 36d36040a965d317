"""Chains compiled from their tape, against two independent routes.

- Closed forms: M(q) and Q - c expanded into sympy expressions, differentiated by sympy and solved
  numerically (the manipulator formula A21 = M^-1 (dr/dq - dM/dq q''), the route linearize took before
  chains compiled from their tape), on every chain small enough to expand.
- Pinocchio: the same bodies (placements, masses, centres of mass, inertias, rotor inertia as armature)
  built as a pinocchio.Model, with aba, crba, rnea and computeABADerivatives; for the arms whose closed
  forms swell (Puma 560, Panda).

Tolerances: entries of A, B are O(1..1e4) (the Puma's stiffest joint has M ~ 1e-2 on its diagonal); the
two routes differ by rounding in a few hundred operations and in a Cholesky solve with cond(M) < 1e5, so
1e-12 relative to the largest entry of each matrix, with the absolute floor 1e-12.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy

import robodyn
from pinocchio_reference import chain_to_pinocchio
from robodyn.mechanisms.chain.system import ChainSystem

ROOT = Path(__file__).resolve().parents[3]
CHAINS = sorted((ROOT / "examples").glob("*.yaml")) + sorted((ROOT / "tests" / "data").glob("*.yaml"))


def _chain_files() -> list[Path]:
    """The chain files of open trees (closed chains and contacts: tests/mechanisms/loops/test_constrained.py,
    test_contacts.py)."""
    return [path for path in CHAINS if "kind: chain" in (text := path.read_text(encoding="utf-8"))
            and not any(f"\n{key}:" in text for key in ("loops", "constraints", "contacts"))]


def _close(actual: np.ndarray, expected: np.ndarray, rtol: float = 1e-12) -> None:
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * scale)


def _points(model: ChainSystem, count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-2, 2, model.n_states), rng.uniform(-3, 3, model.n_inputs)) for _ in range(count)]


def _closed_form_jacobians(model: ChainSystem, x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A, B by sympy differentiation of the closed forms and a numeric solve (no tape derivatives)."""
    args = (model.t_symbol, model.x_symbols, model.u_symbols, model.p_symbols)
    n, m = model.n_coordinates, model.n_inputs
    mass = sympy.lambdify(args, model.mass_expr, modules="numpy", dummify=True)
    rhs = sympy.lambdify(args, model.rhs_expr, modules="numpy", dummify=True)
    dr = sympy.lambdify(args, model.rhs_expr.jacobian([*model.x_symbols, *model.u_symbols]), modules="numpy",
                        dummify=True)
    dmass = [sympy.lambdify(args, model.mass_expr.diff(q), modules="numpy", dummify=True) for q in model.q_symbols]
    p = model.parameter_vector()
    M = np.asarray(mass(0.0, x, u, p), dtype=float)
    accel = np.linalg.solve(M, np.asarray(rhs(0.0, x, u, p), dtype=float).reshape(-1))
    derivative = np.asarray(dr(0.0, x, u, p), dtype=float).reshape(n, 2 * n + m)
    for k in range(n):
        derivative[:, k] -= np.asarray(dmass[k](0.0, x, u, p), dtype=float) @ accel
    solved = np.linalg.solve(M, derivative)
    A = np.zeros((2 * n, 2 * n))
    A[:n, n:] = np.eye(n)
    A[n:] = solved[:, : 2 * n]
    B = np.vstack([np.zeros((n, m)), solved[:, 2 * n:]])
    return A, B


SMALL = [path for path in _chain_files() if robodyn.load(path).has_closed_forms]


@pytest.mark.parametrize("path", SMALL, ids=lambda p: p.name)
def test_compiled_tape_equals_the_closed_forms(path: Path) -> None:
    model = robodyn.load(path)
    for x, u in _points(model, 6, seed=len(path.name)):
        A, B = model.jacobians(0.0, x, u)
        A_ref, B_ref = _closed_form_jacobians(model, x, u)
        _close(A, A_ref)
        _close(B, B_ref)
        linear = robodyn.linearize(model, x, u)
        assert linear.method == "manipulator"
        _close(linear.A, A)
        _close(linear.B, B)


def test_every_chain_file_is_covered() -> None:
    names = {path.name for path in _chain_files()}
    assert {"planar_arm.yaml", "two_link_arm.yaml", "puma560.yaml", "panda_chain.yaml"} <= names
    assert {path.name for path in SMALL} >= {"planar_arm.yaml", "two_link_arm.yaml"}


# --- Pinocchio -----------------------------------------------------------------------------------------
def _pinocchio_model(model: ChainSystem) -> tuple[object, np.ndarray, np.ndarray]:
    pytest.importorskip("pinocchio")
    return chain_to_pinocchio(model)


@pytest.mark.parametrize("name", ["puma560.yaml", "panda_chain.yaml"])
def test_compiled_tape_equals_pinocchio(name: str) -> None:
    pin = pytest.importorskip("pinocchio")
    model = robodyn.load(ROOT / "tests" / "data" / name)
    pinocchio_model, damping, order = _pinocchio_model(model)
    data = pinocchio_model.createData()
    n = model.n_coordinates
    for x, u in _points(model, 5, seed=7):
        q, v = x[:n][order], x[n:][order]  # pinocchio's (body) order
        tau = u[order] - damping * v
        expected_accel = pin.aba(pinocchio_model, data, q, v, tau)
        _close(model.f(0.0, x, u)[n:][order], expected_accel, 1e-10)
        mass = pin.crba(pinocchio_model, data, q)
        mass = np.triu(mass) + np.triu(mass, 1).T
        _close(model.mass_matrix(x[:n])[np.ix_(order, order)], mass)
        qdd = np.random.default_rng(1).normal(size=n)
        inverse = pin.rnea(pinocchio_model, data, q, v, qdd[order]) + damping * v
        _close(model.inverse_dynamics(x[:n], x[n:], qdd)[order], inverse)
        ddq_dq, ddq_dv, minv = pin.computeABADerivatives(pinocchio_model, data, q, v, tau)
        minv = np.triu(minv) + np.triu(minv, 1).T
        A, B = model.jacobians(0.0, x, u)
        _close(A[n:, :n][np.ix_(order, order)], ddq_dq, 1e-10)
        _close(A[n:, n:][np.ix_(order, order)], ddq_dv - minv @ np.diag(damping), 1e-10)
        _close(B[n:][np.ix_(order, order)], minv, 1e-10)
        linear = robodyn.linearize(model, x, u)
        np.testing.assert_allclose(linear.A, A, rtol=0, atol=1e-12 * max(1.0, np.abs(A).max()))
        np.testing.assert_allclose(linear.B, B, rtol=0, atol=1e-12 * max(1.0, np.abs(B).max()))


# --- every consumer on a chain too large for closed forms ----------------------------------------------------
@pytest.fixture(scope="module")
def puma() -> ChainSystem:
    with pytest.warns(robodyn.RobodynWarning, match="link 'link3'.*triangle inequality"):
        model = robodyn.load(ROOT / "tests" / "data" / "puma560.yaml")
    assert not model.has_closed_forms
    return model


def test_published_inertias_that_no_body_has_are_kept_with_a_warning_and_negative_ones_refused() -> None:
    """Armstrong's Puma link 3 (as Corke tabulates it) breaks the triangle inequality, 0.0125 + 0.066 < 0.086:
    identified parameters often do, so the table loads with a warning; a negative moment is refused."""
    links = [{"name": "base"}, {"name": "a", "mass": 1, "inertia": {"ixx": 0.066, "iyy": 0.086, "izz": 0.0125}}]
    joints = [{"name": "q", "parent": "base", "child": "a"}]
    with pytest.warns(robodyn.RobodynWarning, match=r"0.0125 \+ 0.066 < 0.086.*kept as given"):
        ChainSystem(joints, links)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ChainSystem(joints, links, check_inertia=False)
        rod = [{"name": "base"}, {"name": "a", "mass": 1, "inertia": {"ixx": 0, "iyy": 0.1, "izz": 0.1}}]
        ChainSystem(joints, rod)  # semi-definite and physical: no warning
    links[1]["inertia"] = {"ixx": 0.1, "iyy": 0.1, "izz": -0.01}
    with pytest.raises(robodyn.InputError, match=r"link 'a'.*negative principal moment -0.01"):
        ChainSystem(joints, links)


def test_show_on_a_large_chain_says_what_it_prints(capsys: pytest.CaptureFixture[str], puma: ChainSystem) -> None:
    from robodyn.cli import main

    assert main(["show", str(ROOT / "tests" / "data" / "puma560.yaml")]) == 0
    out = capsys.readouterr().out
    assert "closed forms of M(q) and c are printed for chains of up to 3 joints" in out
    assert "q6: revolute, link5 -> link6" in out
    assert "mass_expr" not in puma.__dict__  # nothing was expanded


def test_classify_samples_a_large_chain(puma: ChainSystem) -> None:
    verdict = robodyn.classify(puma)
    assert verdict.method == "sampled" and not verdict.linear and verdict.order == 2 and verdict.dimension == 6


def test_holding_torque_of_a_large_chain_is_pinocchios_gravity(puma: ChainSystem) -> None:
    pin = pytest.importorskip("pinocchio")
    pinocchio_model, _, order = _pinocchio_model(puma)
    q = np.array([0.1, -0.7, 0.4, 0.2, -0.3, 0.5])
    point = robodyn.find_equilibrium(puma, {**dict(zip(puma.coordinates, q)),
                                            **{v: 0.0 for v in puma.velocities}})[0]
    assert point.method == "holding-torque"
    gravity = pin.computeGeneralizedGravity(pinocchio_model, pinocchio_model.createData(), q[order])
    _close(point.u[order], gravity)


def test_batches_events_and_the_stiff_solver_use_the_compiled_tape(puma: ChainSystem) -> None:
    x0 = np.zeros((2, 12))
    x0[:, 1] = [-0.5, -0.4]
    batch = robodyn.simulate(puma, 0.5, x0, rtol=1e-9, atol=1e-11, t_eval=np.linspace(0, 0.5, 11))
    assert batch.stats.path == "compiled"
    for i in range(2):
        single = robodyn.simulate(puma, 0.5, x0[i], rtol=1e-9, atol=1e-11, t_eval=np.linspace(0, 0.5, 11))
        np.testing.assert_array_equal(batch.x[i], single.x)  # the same kernel, the same steps
    falling = robodyn.simulate(puma, 2.0, x0[0], events="q2 + 1.0", rtol=1e-9, atol=1e-11)
    assert falling.events and abs(falling.events[0].x[1] + 1.0) < 1e-9
    # radau with the tape's exact Jacobian against dopri5 at tight tolerances: agree to their tolerances
    stiff = robodyn.simulate(puma, 0.5, x0[0], method="radau", rtol=1e-10, atol=1e-12)
    explicit = robodyn.simulate(puma, 0.5, x0[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(stiff.final, explicit.final, atol=1e-7)


def test_the_jacobians_never_read_the_accelerations(puma: ChainSystem) -> None:
    """``bound_linearization`` gives the solved Jacobians' tape no accelerations ``a`` (an empty part of its
    packed arguments): the forward dynamics' derivatives read only x, u and p (leaf argument 4 is ``a``)."""
    from robodyn.codegen.llvm.tape import ARGUMENTS, tape_data

    program = puma._program
    for name in ("solved_jacobians", "jacobians"):  # solved on the tape, or factored there and solved by LAPACK
        nodes, _ = tape_data(program.tape, program.outputs(name))
        read = {ARGUMENTS[a] for op, a, _ in nodes if op == "leaf"}
        assert "x" in read and "a" not in read
