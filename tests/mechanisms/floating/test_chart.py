"""The tangent model of a robot on a moving base (robodyn.mechanisms.floating.chart.TangentModel) against Pinocchio:
its points
are Pinocchio's integrate, its rates d/dt (q (-) q0) Pinocchio's difference differentiated along the motion, and
its Jacobian at the centre linearize's A (itself checked against computeABADerivatives in test_floating.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.pinocchio_reference import ROBOTS

import robodyn

pin = pytest.importorskip("pinocchio")
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

QUADRUPED = "solo_description/robots/solo12.urdf"


def _setup(base: str, rng: np.random.Generator) -> tuple[object, object, np.ndarray, np.ndarray, np.ndarray]:
    path = str(ROBOTS / QUADRUPED)
    model = robodyn.load(path, base=base, dynamics=False, check_inertia=False)
    joint = pin.JointModelFreeFlyer() if base == "floating" else pin.JointModelPlanar()
    reference = pin.buildModelFromUrdf(path, joint)
    if base == "floating":
        rotation = rng.normal(size=4)
        q = np.concatenate([rng.normal(size=3), rotation / np.linalg.norm(rotation), rng.uniform(-1, 1, 12)])
    else:
        angle = rng.uniform(-3, 3)
        q = np.concatenate([rng.normal(size=2), [np.cos(angle), np.sin(angle)], rng.uniform(-1, 1, 12)])
    return model, reference, q, rng.normal(size=reference.nv), rng.normal(size=12)


@pytest.mark.parametrize("base", ["floating", "planar"])
def test_points_and_rates_equal_pinocchio(base: str) -> None:
    rng = np.random.default_rng(4)
    model, reference, q, v, tau = _setup(base, rng)
    tangent = model.chart().tangent_model(np.concatenate([q, v]))
    nv = reference.nv
    assert tangent.states == (*tangent.states[: nv - 12], *model.states[model.nq - 12: model.nq], *model.velocities)
    for size in (1e-7, 0.3, 2.0):  # the small-angle series, and a rotation of 2 rad
        xi = size * rng.normal(size=nv)
        xi[: nv - 12] *= size / max(size, np.linalg.norm(xi[: nv - 12]))
        z = np.concatenate([xi, v])
        moved = pin.integrate(reference, q, xi)
        stored = tangent.stored(z)
        # the same trigonometry in another order (the chart's rotation, then V rho): round-off ~ 1e-16 |xi|^2
        assert np.max(np.abs(stored[: model.nq] - moved)) < 1e-14 * max(1.0, xi @ xi)
        assert np.array_equal(stored[model.nq:], v)
        np.testing.assert_allclose(tangent.coordinates(stored), z, rtol=0, atol=1e-12)
        f = tangent.f(0.0, z, tau)
        eps = 1e-6  # central differences of Pinocchio's difference along the motion: error ~ eps^2 |v|^3 ~ 1e-11
        ahead, behind = pin.integrate(reference, moved, eps * v), pin.integrate(reference, moved, -eps * v)
        rate = (pin.difference(reference, q, ahead) - pin.difference(reference, q, behind)) / (2 * eps)
        assert np.max(np.abs(f[:nv] - rate)) < 1e-8 * max(1.0, np.abs(rate).max())
        acceleration = pin.aba(reference, reference.createData(), moved, v, np.concatenate([np.zeros(nv - 12), tau]))
        assert np.max(np.abs(f[nv:] - acceleration)) < 1e-10 * np.abs(acceleration).max()


@pytest.mark.parametrize("base", ["floating", "planar"])
def test_the_jacobian_at_the_centre_is_linearizes_A(base: str) -> None:
    """In motion (v != 0) the configuration rows depend on the chart; the tangent model's are linearize's."""
    model, reference, q, v, tau = _setup(base, np.random.default_rng(9))
    x = np.concatenate([q, v])
    tangent = model.chart().tangent_model(x)
    linear = robodyn.linearize(model, x, tau)
    z0, h = np.asarray(linear.x_op), 1e-6
    assert np.array_equal(z0, np.concatenate([np.zeros(reference.nv), v]))
    columns = [(tangent.f(0.0, z0 + h * e, tau) - tangent.f(0.0, z0 - h * e, tau)) / (2 * h) for e in np.eye(z0.size)]
    # central differences: truncation h^2 |f'''| and rounding 1e-16 |f| / h, |f| ~ 1e3 here: ~1e-7 of |A| ~ 1e3
    assert np.max(np.abs(np.column_stack(columns) - linear.A)) < 1e-8 * np.abs(linear.A).max()
    assert np.abs(linear.A[:3, :6]).max() > 0.1  # the block that depends on the chart is not zero here


@pytest.mark.parametrize("which", ["solo12 planar",  # contacts on a moving base: test_floating_contacts.py
                                   pytest.param("solo12 floating", marks=pytest.mark.slow),  # nv 18: ~22 s cold
                                   pytest.param("quadruped with contacts", marks=pytest.mark.slow)])  # ~23 s cold
def test_the_kernel_jacobian_is_the_chart_rhs_derivative_at_the_centre(which: str) -> None:
    """The implicit methods' Jacobian (ChartModel.kernel_jacobian_source, from the analytical tangent-space
    linearization up to SOLVE_LIMIT velocities) equals central differences of the chart's rhs at a chart state with
    d = 0, to 1e-7 of its largest entry (h = 1e-6: truncation h^2 |f'''|, rounding 1e-16 |f| / h)."""
    from robodyn.model.compiled import jacobian_module

    rng = np.random.default_rng(2)
    if which.startswith("solo12"):
        model, _, q, v, tau = _setup(which.split()[1], rng)
        x = np.concatenate([q, v])
    else:
        model = robodyn.load(str(Path(__file__).resolve().parents[3] / "examples" / "quadruped_standing.yaml"))
        x = model.state_vector({"base_qw": 1.0, "base_z": 0.25}, default=0.0)
        x[7:15], x[15:] = rng.uniform(-1, 1, 8), rng.uniform(-1, 1, 14)
        tau = np.zeros(0)
    chart = model.chart()
    z, p, n, m = chart.lift(x), model.parameter_vector(None), chart.n_states, chart.n_inputs
    out = np.empty(n * (n + m))
    jacobian_module(chart).jac(0.0, z, tau, p, out)
    A, h = out[: n * n].reshape(n, n), 1e-6
    columns = [(chart.f(0.0, z + h * e, tau) - chart.f(0.0, z - h * e, tau)) / (2 * h) for e in np.eye(n)]
    assert np.max(np.abs(np.column_stack(columns) - A)) < 1e-7 * np.abs(A).max()
    if m:
        B = out[n * n:].reshape(n, m)
        inputs = [(chart.f(0.0, z, tau + h * e) - chart.f(0.0, z, tau - h * e)) / (2 * h) for e in np.eye(m)]
        assert np.max(np.abs(np.column_stack(inputs) - B)) < 1e-7 * max(1.0, np.abs(B).max())


_FREE_BODY = """<mujoco model="tumbler">
  <worldbody>
    <body name="box" pos="0.1 -0.2 1.5" quat="0.8 0.6 0 0">
      <freejoint/>
      <geom type="box" size=".1 .2 .3" mass="2" contype="0" conaffinity="0"/>
      <body name="flap" pos="0 0 .3">
        <joint name="hinge" axis="1 0 0" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0 .1 .2" size=".02" mass=".3" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="hinge" gear="2"/></actuator>
</mujoco>
"""


def test_the_forward_mode_kernel_jacobian_lays_out_a_then_b(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above SOLVE_LIMIT velocities the implicit methods' Jacobian is forward mode over the chart's rhs; the kernels
    read all of A (row-major), then B: with inputs, interleaving each row's d/dx and d/du (as it once did) puts B's
    entries into A. A small free body with a driven hinge, the limit lowered to 0 to take that path, against central
    differences (tolerance as above)."""
    from robodyn.model.compiled import jacobian_module
    from robodyn.rigid import dynamics

    monkeypatch.setattr(dynamics, "SOLVE_LIMIT", 0)
    path = tmp_path / "tumbler.xml"
    path.write_text(_FREE_BODY, encoding="utf-8")
    model = robodyn.load(str(path))
    rng = np.random.default_rng(5)
    x = np.asarray(model.initial_state(), dtype=float)
    x[model.nq:] = rng.uniform(-1, 1, model.n_states - model.nq)
    tau = np.array([0.7])
    chart = model.chart()
    z, n, m = chart.lift(x), chart.n_states, chart.n_inputs
    out = np.empty(n * (n + m))
    jacobian_module(chart).jac(0.0, z, tau, model.parameter_vector(None), out)
    A, B, h = out[: n * n].reshape(n, n), out[n * n:].reshape(n, m), 1e-6
    columns = [(chart.f(0.0, z + h * e, tau) - chart.f(0.0, z - h * e, tau)) / (2 * h) for e in np.eye(n)]
    inputs = [(chart.f(0.0, z, tau + h * e) - chart.f(0.0, z, tau - h * e)) / (2 * h) for e in np.eye(m)]
    assert np.max(np.abs(np.column_stack(columns) - A)) < 1e-7 * np.abs(A).max()
    assert np.max(np.abs(np.column_stack(inputs) - B)) < 1e-7 * max(1.0, np.abs(B).max())
