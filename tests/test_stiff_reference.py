"""The stiff problems of issue 16 (tests/data/stiff/) and their references (tests/stiff_reference.py).

Independent checks that the model files and the reference values are right: the files' equations
against the IVP Test Set's Fortran (feval/jeval), scipy's Radau with the model's Jacobian at rtol 1e-10
against each published or computed reference, the joint's exact-path reference against its closed form,
and the arm's stiffness from its Jacobian. Each test takes well under 5 s.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import robodyn
import stiff_reference as ref


def radau(key: str, rtol: float, atol: object, t1: float | None = None, f: object = None) -> np.ndarray:
    """scipy Radau with the model file's f (or ``f(t, x)``) and exact Jacobian: the state at the problem's
    final time (or at ``t1``)."""
    spec = ref.problem(key)
    t_span = spec.t_span if t1 is None else (spec.t_span[0], t1)
    model = ref.load(spec.model)
    _, p = model.default_parameters()
    if spec.has_input:
        signal = spec.u()

        def u(t: float) -> np.ndarray:
            return np.atleast_1d(np.asarray(signal(t), dtype=float))
    else:
        def u(t: float) -> np.ndarray:
            return np.zeros(0)
    rhs = f if f is not None else (lambda t, x: model.f_raw(t, x, u(t), p))
    run = solve_ivp(rhs, t_span, spec.x0, method="Radau",
                    jac=lambda t, x: model.jacobians_raw(t, x, u(t), p)[0], rtol=rtol, atol=atol)
    assert run.status == 0, run.message
    return np.asarray(run.y[:, -1])


def test_relative_error() -> None:
    assert ref.relative_error([1.0, 2.0], [1.0, 2.0], 1e-10) == 0.0
    assert ref.relative_error([1.1, 0.0], [1.0, 0.0], 1e-10) == pytest.approx(0.1 / (1 + 1e-10))
    # a component at zero is measured against the floor
    assert ref.relative_error([1.0, 1e-12], [1.0, 0.0], [1e-10, 1e-10]) == pytest.approx(1e-2)


@pytest.mark.parametrize("name", ["rober", "vdpol", "stiff_joint", "pd_arm"])
def test_model_files_load(name: str) -> None:
    model = ref.load(name)
    assert model.jacobian_method is not None  # symbolic/compiled: an exact Jacobian for the stiff solvers
    specs = [s for s in ref.PROBLEMS.values() if s.model == name]
    assert specs and all(len(s.x0) == model.n_states for s in specs)
    assert all(s.path.is_file() for s in specs)


def test_rober_equations_are_the_test_sets() -> None:
    """f and df/dy of rober.yaml against rober.f's feval and jeval at random states."""
    model = ref.load("rober")
    _, p = model.default_parameters()
    rng = np.random.default_rng(1)
    for y in rng.uniform(0, 1, (5, 3)) * [1, 1e-4, 1]:
        f = [-0.04 * y[0] + 1e4 * y[1] * y[2], 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2, 3e7 * y[1] ** 2]
        jac = [[-0.04, 1e4 * y[2], 1e4 * y[1]], [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]], [0, 6e7 * y[1], 0]]
        np.testing.assert_allclose(model.f_raw(0.0, y, np.zeros(0), p), f, rtol=1e-14, atol=1e-18)
        np.testing.assert_allclose(model.jacobians_raw(0.0, y, np.zeros(0), p)[0], jac, rtol=1e-14, atol=1e-18)


def test_vdpol_equations_are_the_test_sets() -> None:
    """f and df/dy of vdpol.yaml against vdpol.f's feval and jeval (eps = 1e-6)."""
    model = ref.load("vdpol")
    _, p = model.default_parameters()
    for y in np.random.default_rng(2).uniform(-2, 2, (5, 2)):
        f = [y[1], ((1 - y[0] ** 2) * y[1] - y[0]) / 1e-6]
        jac = [[0, 1], [(-2 * y[0] * y[1] - 1) / 1e-6, (1 - y[0] ** 2) / 1e-6]]
        np.testing.assert_allclose(model.f_raw(0.0, y, np.zeros(0), p), f, rtol=1e-13)
        np.testing.assert_allclose(model.jacobians_raw(0.0, y, np.zeros(0), p)[0], jac, rtol=1e-13)


@pytest.mark.parametrize("key", ["rober_1e5", "rober_1e11"])
def test_rober_reference(key: str) -> None:
    atol = (1e-14, 1e-20, 1e-14)
    x = radau(key, 1e-10, atol)
    assert ref.relative_error(x, ref.problem(key).reference, atol) < 1e-8
    assert abs(x[1] - ref.problem(key).reference[1]) / ref.problem(key).reference[1] < 1e-8  # y2 itself
    assert abs(ref.problem(key).reference.sum() - 1) < 1e-13  # mass is conserved


def test_vdpol_reference() -> None:
    # f written out (vdpol.f's feval, which test_vdpol_equations_are_the_test_sets matches with the file's):
    # scipy's Radau costs ~0.3 ms a step: at rtol 1e-10 and atol 1e-10 (9,000 steps) this took 6 s through
    # model.f_raw on a loaded machine; with f written out and atol 1e-8, ~1.5-3.5 s (error 3e-12)
    def f(t: float, y: np.ndarray) -> list[float]:
        return [y[1], ((1 - y[0] ** 2) * y[1] - y[0]) / 1e-6]

    x = radau("vdpol", 1e-10, 1e-8, f=f)
    assert ref.relative_error(x, ref.VDPOL_2, 1e-8) < 1e-8


def test_stiff_joint_reference() -> None:
    """The model file's equation, the exact path against the closed form (over the transient and at t = 10),
    and scipy Radau over the start of the transient (over the whole span it needs ~20 s at rtol 1e-10: it
    resolves ~100 periods of the lightly damped 1e4 rad/s mode before it dies out)."""
    model = ref.load("stiff_joint")
    _, p = model.default_parameters()
    for x, tau in ((np.array([1e-3, -2.0]), 3.0), (np.array([-0.2, 50.0]), -1e4)):
        np.testing.assert_allclose(model.f_raw(0.0, x, np.array([tau]), p),
                                   [x[1], (tau - 10.0 * x[1] - 1e6 * x[0]) / 0.01], rtol=1e-14)
    wn, zeta = math.sqrt(1e6 / 0.01), 10.0 / (2 * math.sqrt(1e6 * 0.01))
    assert (wn, zeta) == pytest.approx((1e4, 0.05))
    t = np.linspace(0.0, 0.02, 401)
    exact = robodyn.simulate(model, (0.0, 0.02), [0.0, 0.0], ref.joint_input(), method="exact", t_eval=t)
    closed = ref.joint_closed_form(t)
    scale = np.max(np.abs(closed), axis=0)
    assert np.max(np.abs(exact.x - closed) / scale) < 1e-10
    assert ref.relative_error(ref.joint_reference(), ref.joint_closed_form(10.0)[0], 1e-10) < 1e-10
    x = radau("stiff_joint", 1e-10, 1e-10, t1=1e-3)  # 1.6 periods of the fast mode, ~1,000 steps
    assert np.max(np.abs(x - ref.joint_closed_form(1e-3)[0]) / scale) < 1e-8


def test_pd_arm_reference_and_stiffness() -> None:
    x = radau("pd_arm", 1e-10, 1e-12)
    assert ref.relative_error(x, ref.PD_ARM_REFERENCE, 1e-10) < 1e-9
    model = ref.load("pd_arm")
    _, p = model.default_parameters()
    for state in ([0, 0, 0, 0], [0.8, -1.2, 0, 0], x):
        eigenvalues = np.linalg.eigvals(model.jacobians_raw(0.0, np.asarray(state, float), np.zeros(0), p)[0])
        assert np.all(eigenvalues.real < 0)
        assert np.max(np.abs(eigenvalues)) >= 1e3 * np.min(np.abs(eigenvalues))
