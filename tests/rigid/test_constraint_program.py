"""Constraint rows and constrained dynamics on the tape (robodyn.rigid.constraints), against second algorithms:
central differences of the residual for J and J'q', and numpy's solve of the augmented (KKT) system for q'' and
lambda, on a point loop (the four-bar), a pose loop and a driven joint."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.mechanisms.loops.constrained import ConstrainedChain

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: A 3R arm whose tool is welded (a pose loop: x, y and the rotation about z) to a one-link arm: one freedom.
POSE_LOOP = """
name: welded
kind: chain
parameters: {g: 9.81}
gravity: [0, -g, 0]
joints:
  - {name: q1, type: revolute, parent: ground, child: l1, axis: [0, 0, 1]}
  - {name: q2, type: revolute, parent: l1, child: l2, axis: [0, 0, 1], xyz: [0.4, 0, 0]}
  - {name: q3, type: revolute, parent: l2, child: l3, axis: [0, 0, 1], xyz: [0.3, 0, 0]}
  - {name: q4, type: revolute, parent: ground, child: l4, axis: [0, 0, 1], xyz: [0.5, 0.1, 0]}
links:
  - {name: ground}
  - {name: l1, mass: 1.0, com: [0.2, 0, 0], inertia: {ixx: 0.01, iyy: 0.01, izz: 0.02}}
  - {name: l2, mass: 0.8, com: [0.15, 0, 0], inertia: {ixx: 0.01, iyy: 0.01, izz: 0.01}}
  - {name: l3, mass: 0.5, com: [0.1, 0, 0], inertia: {ixx: 0.005, iyy: 0.005, izz: 0.005}}
  - {name: l4, mass: 0.7, com: [0.15, 0, 0], inertia: {ixx: 0.01, iyy: 0.01, izz: 0.01}}
frames:
  arm_tip: {parent: l3, xyz: [0.2, 0, 0]}
  other_tip: {parent: l4, xyz: [0.3, 0, 0], rpy: [0, 0, 0.3]}
loops:
  - {name: weld, frames: [arm_tip, other_tip], type: pose, axes: [x, y, rz]}
"""


def _models() -> dict[str, ConstrainedChain]:
    return {"four_bar": robodyn.load(str(EXAMPLES / "four_bar.yaml")),
            "slider_crank": robodyn.load(str(EXAMPLES / "slider_crank.yaml")),
            "welded": robodyn.read_model_text(POSE_LOOP, "welded.yaml")}


MODELS = _models()


def _parts(model: ConstrainedChain, t: float, x: np.ndarray) -> tuple[np.ndarray, ...]:
    return model.constraints().evaluate(t, x, model.parameter_vector())


def _assembled(model: ConstrainedChain, seed: int) -> np.ndarray:
    """A consistent state near a random one (velocities random too, then made consistent)."""
    rng = np.random.default_rng(seed)
    n = model.chain.n_coordinates
    guess = np.concatenate([rng.uniform(-0.3, 0.3, n), rng.normal(size=n)])
    fix = {} if model.constraints().dimension == 0 else {model.velocities[0]: float(guess[n])}
    return model.constraints().assemble(0.2, guess, model.parameter_vector(), fix)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_jacobian_and_the_bias_are_the_residuals_derivatives(name: str) -> None:
    """J = d phi/dq and J'q' - c'' = d(J q' - c')/dt at q'' = 0, by central differences (h = 1e-6: truncation
    ~h^2 |phi'''| ~ 1e-12, cancellation ~eps/h ~ 1e-10), at consistent states (where orientation rows are exact)."""
    model = MODELS[name]
    n, t = model.chain.n_coordinates, 0.2
    for seed in range(3):
        x = _assembled(model, seed)
        _, rate, jacobian, velocity_jacobian = _parts(model, t, x)
        h = 1e-6
        for j in range(n):
            up, down = x.copy(), x.copy()
            up[j] += h
            down[j] -= h
            np.testing.assert_allclose((_parts(model, t, up)[0] - _parts(model, t, down)[0]) / (2 * h),
                                       jacobian[:, j], atol=1e-8)
            np.testing.assert_allclose((_parts(model, t, up)[1] - _parts(model, t, down)[1]) / (2 * h),
                                       velocity_jacobian[:, j], atol=1e-7)
        np.testing.assert_allclose(rate, 0.0, atol=1e-9)
        # along the motion at q'' = 0: q moves by q' h, t by h
        ahead, behind = x.copy(), x.copy()
        ahead[:n] += h * x[n:]
        behind[:n] -= h * x[n:]
        derivative = (_parts(model, t + h, ahead)[1] - _parts(model, t - h, behind)[1]) / (2 * h)
        u = np.zeros(model.n_inputs)
        qdd = model.f_raw(t, x, u, model.parameter_vector())[n:]
        # J q'' + (J'q' - c'') = gamma = 0 on the constraint: the bias is -J q''
        np.testing.assert_allclose(derivative, -jacobian @ qdd, atol=1e-7)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_accelerations_and_forces_solve_the_augmented_system(name: str) -> None:
    """[M -J^T; J 0] [q''; lambda] = [Q - c; gamma] by numpy at states off the constraints (Baumgarte's terms
    active), with M and Q - c from the free tree and J'q' - c'' from the residual's derivative (h = 1e-6)."""
    model = MODELS[name]
    chain, n, t = model.chain, model.chain.n_coordinates, 0.2
    p = model.parameter_vector()
    rng = np.random.default_rng(7)
    for seed in range(3):
        x = _assembled(model, seed) + rng.normal(scale=1e-3, size=2 * n)  # slightly off: phi, phi' != 0
        u = rng.normal(size=model.n_inputs)
        phi, rate, jacobian, _ = _parts(model, t, x)
        h = 1e-6
        ahead, behind = x.copy(), x.copy()
        ahead[:n] += h * x[n:]
        behind[:n] -= h * x[n:]
        bias = (_parts(model, t + h, ahead)[1] - _parts(model, t - h, behind)[1]) / (2 * h)
        alpha = model.baumgarte
        gamma = -bias - 2 * alpha * rate - alpha**2 * phi
        mass = chain.mass_raw(t, x, u, p)
        free = chain.rhs_terms(t, x, u, p)[0]
        k = len(phi)
        system = np.block([[mass, -jacobian.T], [jacobian, np.zeros((k, k))]])
        solution = np.linalg.solve(system, np.concatenate([free, gamma]))
        np.testing.assert_allclose(model.f_raw(t, x, u, p)[n:], solution[:n], rtol=1e-8, atol=1e-8)
        forces = model.h_raw(t, x, u, p)[-k:]
        np.testing.assert_allclose(forces, solution[n:], rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(model.f_raw(t, x, u, p)[:n], x[n:])


def test_the_pose_loops_rotation_row_is_the_relative_rotation() -> None:
    """phi_rz = sin(theta_a - theta_b) for frames turning about z (the rotation vector to first order)."""
    model = MODELS["welded"]
    x = np.zeros(8)
    x[:4] = [0.3, -0.2, 0.4, 0.1]
    phi = _parts(model, 0.0, x)[0]
    assert phi[2] == pytest.approx(np.sin(0.3 - 0.2 + 0.4 - (0.1 + 0.3)), abs=1e-15)
