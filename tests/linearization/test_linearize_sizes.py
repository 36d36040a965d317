"""linearize of fixed-base robots at every size around the lean path's thresholds, against Pinocchio.

The lean path (robodyn.linearization.lean) writes each result into a row of a shared block. Its rows were once
sized by the finite check's vector of ones, emptied above ``BLAS_SIZE`` entries: from 13 coordinates on (a row
[A | B | C | D | x | u] of 12 n^2 + 3 n entries) every robot's arena had no columns ("Buffer size too small"). A
robot's row is now [A | B | x | u], with its solve on the tape up to ``SOLVE_LIMIT`` coordinates and compiled apart
above. A generated tree of n = 1..20 coordinates (revolute and prismatic joints on aligned and unaligned axes,
branches) crosses both sizes: the lean path (float64 vectors) must give the general path's numbers (lists) bit for
bit and Pinocchio's ``computeABADerivatives`` (A = [[0, I], [ddq_dq, ddq_dv]], B = [[0], [M^-1]]). The stock Baxter
(17 coordinates, two mimic joints) and the Unitree G1 (29, its pelvis fixed) too: Baxter's coupled joints against
Pinocchio's model without mimic joints reduced by the coupling, q_full = G q + o (M_r = G^T M G and the RNEA
derivatives G^T dtau/dq G, dtau/dv G), and, without its mimic tags, against computeABADerivatives directly. A
first-order model of 40 states, whose row [A | B | C | D | x | u] is above BLAS_SIZE, takes the other binding
(bound_linearization) and must match too.

Tolerance: 1e-9 of the largest entry of each block (issue 45's bar): both sides are O(n) sums of products of the
same numbers by different algorithms (ABA in Pinocchio, RNEA derivatives and a leaves-first factor here), whose
difference is bounded by ~cond(M) eps relative. Every point checked has cond(M) < 1e6 (asserted: 1e6 eps = 2e-10);
measured: cond(M) up to 1.5e4 and differences up to 3e-13.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import robodyn
from cli_run import run
from pinocchio_reference import ROBOTS, coupling
from pinocchio_reference import configuration as pinocchio_configuration
from robodyn.linearization.lean import BLAS_SIZE
from robodyn.rigid.dynamics import SOLVE_LIMIT

pin = pytest.importorskip("pinocchio")
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

TOLERANCE = 1e-9  # relative to each block's largest entry; see the module docstring
FAST_SIZES = (1, 12, 13, 16, 17)  # the first row above BLAS_SIZE, both sides of SOLVE_LIMIT; the others are slow


def tree_urdf(n: int, seed: int) -> str:
    """A fixed-base tree of ``n`` one-coordinate joints: every third prismatic, every other axis unaligned, each
    joint's parent one of the last three links (branches from n = 3 on), plausible box inertias off the joint."""
    rng = np.random.default_rng(seed)
    links, joints = ['<link name="base"/>'], []
    for k in range(n):
        mass = float(rng.uniform(0.5, 3.0))
        size = rng.uniform(0.05, 0.4, 3)
        moments = mass / 12 * np.array([size[1] ** 2 + size[2] ** 2, size[0] ** 2 + size[2] ** 2,
                                         size[0] ** 2 + size[1] ** 2])
        com, rpy = rng.uniform(-0.1, 0.1, 3), rng.uniform(-1, 1, 3)
        links.append(f'<link name="l{k}"><inertial><origin xyz="{_xyz(com)}" rpy="{_xyz(rpy)}"/>'
                     f'<mass value="{mass!r}"/><inertia ixx="{float(moments[0])!r}" iyy="{float(moments[1])!r}" '
                     f'izz="{float(moments[2])!r}" ixy="0" ixz="0" iyz="0"/></inertial></link>')
        parent = "base" if k == 0 else f"l{int(rng.integers(max(0, k - 3), k))}"
        axis = np.eye(3)[k % 3] if k % 2 else rng.normal(size=3)
        kind = "prismatic" if k % 3 == 2 else "revolute"
        joints.append(f'<joint name="j{k}" type="{kind}"><parent link="{parent}"/><child link="l{k}"/>'
                      f'<origin xyz="{_xyz(rng.uniform(-0.3, 0.3, 3))}" rpy="{_xyz(rng.uniform(-1, 1, 3))}"/>'
                      f'<axis xyz="{_xyz(axis / np.linalg.norm(axis))}"/>'
                      '<limit lower="-3" upper="3" effort="100" velocity="10"/></joint>')
    return f'<robot name="tree{n}">{"".join(links)}{"".join(joints)}</robot>'


def _xyz(values: np.ndarray) -> str:
    return " ".join(repr(float(v)) for v in values)


def _close(actual: np.ndarray, expected: np.ndarray) -> None:
    scale = max(1.0, float(np.abs(expected).max()))
    assert np.abs(actual - expected).max() <= TOLERANCE * scale


def _pinocchio_linearization(path: Path, model: robodyn.Model, x: np.ndarray, u: np.ndarray
                             ) -> tuple[np.ndarray, np.ndarray, float]:
    """A (2n, 2n), B (2n, n) of robodyn's coordinates from Pinocchio's model of ``path`` (mimic tags ignored) and
    cond(M): computeABADerivatives when every joint is a coordinate, else the reduced dynamics q_full = G q + o
    differentiated through computeRNEADerivatives."""
    reference = pin.buildModelFromUrdf(str(path))
    data = reference.createData()
    G, offset = coupling(path, reference, model.coordinates)
    n = G.shape[1]
    q, v = x[:n], x[n:]
    full = pinocchio_configuration(reference, G @ q + offset)
    mass = pin.crba(reference, data, full)
    mass = G.T @ (np.triu(mass) + np.triu(mass, 1).T) @ G
    if G.shape[0] == n:  # a permutation: Pinocchio's own derivatives of the forward dynamics
        ddq_dq, ddq_dv, inverse = pin.computeABADerivatives(reference, data, full, G @ v, G @ u)
        inverse = np.triu(inverse) + np.triu(inverse, 1).T
        blocks = G.T @ ddq_dq @ G, G.T @ ddq_dv @ G, G.T @ inverse @ G
    else:  # M_r q'' = u - G^T rnea(G q + o, G v, 0): d/dq, d/dv of G^T rnea(..., G q'') = u at fixed u
        inverse = np.linalg.inv(mass)
        acceleration = inverse @ (u - G.T @ pin.rnea(reference, data, full, G @ v, np.zeros(G.shape[0])))
        dtau_dq, dtau_dv, _ = pin.computeRNEADerivatives(reference, data, full, G @ v, G @ acceleration)
        blocks = -inverse @ G.T @ dtau_dq @ G, -inverse @ G.T @ dtau_dv @ G, inverse
    A = np.block([[np.zeros((n, n)), np.eye(n)], [blocks[0], blocks[1]]])
    B = np.vstack([np.zeros((n, n)), blocks[2]])
    return A, B, float(np.linalg.cond(mass))


def _check(path: Path, model: robodyn.Model, seed: int) -> None:
    """At two random points: the lean path's A, B, C, D, x_op, u_op equal the general path's bit for bit, and A, B
    equal Pinocchio's to TOLERANCE."""
    rng = np.random.default_rng(seed)
    n = model.n_states // 2
    for _ in range(2):
        x = np.concatenate([rng.uniform(-1.5, 1.5, n), rng.uniform(-1, 1, n)])
        u = rng.uniform(-5, 5, model.n_inputs)
        lean, general = robodyn.linearize(model, x, u), robodyn.linearize(model, x.tolist(), u.tolist())
        for label in ("A", "B", "C", "D", "x_op", "u_op"):
            np.testing.assert_array_equal(getattr(lean, label), getattr(general, label))
        assert lean.method == general.method == "manipulator"
        A, B, condition = _pinocchio_linearization(path, model, x, u)
        assert condition < 1e6  # the tolerance's premise (see the module docstring)
        _close(lean.A, A)
        _close(lean.B, B)


def _tree(tmp_path: Path, n: int) -> tuple[Path, robodyn.Model]:
    path = tmp_path / f"tree{n}.urdf"
    path.write_text(tree_urdf(n, seed=n), encoding="utf-8")
    return path, robodyn.load(str(path))


def test_the_sizes_cross_both_thresholds() -> None:
    """FAST_SIZES hold 12 and 13 (the first size whose arena had no columns) and both sides of SOLVE_LIMIT."""
    assert {12, 13, SOLVE_LIMIT, SOLVE_LIMIT + 1} <= set(FAST_SIZES)
    assert 12 * 12 * 12 + 3 * 12 <= BLAS_SIZE < 12 * 13 * 13 + 3 * 13  # [A | B | C | D | x | u] of 2n states


@pytest.mark.parametrize("n", [pytest.param(n, marks=[] if n in FAST_SIZES else [pytest.mark.slow])
                               for n in range(1, 21)])
def test_a_generated_tree_of_n_coordinates_equals_pinocchio(tmp_path: Path, n: int) -> None:
    path, model = _tree(tmp_path, n)
    assert model.n_states == 2 * n and model.outputs_are_states
    _check(path, model, seed=n)


@needs_robots
@pytest.mark.parametrize("relative", [pytest.param("baxter_description/urdf/baxter.urdf", marks=pytest.mark.slow),
                                      "g1_description/urdf/g1_29dof_rev_1_0.urdf"])  # baxter: the CLI test below
def test_stock_robots_linearize_as_pinocchio(relative: str) -> None:
    """The stock file loads and linearizes as shipped (lean and general paths alike); its rigid bodies
    (``dynamics=False``: Pinocchio does not apply URDF damping and friction) equal Pinocchio."""
    path = ROBOTS / relative  # type: ignore[operator]
    stock = robodyn.load(str(path))
    x = np.zeros(stock.n_states)
    lean, general = robodyn.linearize(stock, x, np.zeros(stock.n_inputs)), robodyn.linearize(stock, x.tolist())
    np.testing.assert_array_equal(lean.A, general.A)
    np.testing.assert_array_equal(lean.B, general.B)
    _check(path, robodyn.load(str(path), dynamics=False), seed=len(relative))


@needs_robots
@pytest.mark.slow
def test_baxter_without_mimic_tags_equals_compute_aba_derivatives(tmp_path: Path) -> None:
    """Baxter's 19 joints, each a coordinate: Pinocchio's computeABADerivatives itself, not the reduction."""
    path = tmp_path / "baxter19.urdf"
    path.write_text(re.sub(r"<mimic[^>]*/>", "", (ROBOTS / "baxter_description/urdf/baxter.urdf")  # type: ignore[operator]
                           .read_text(encoding="utf-8")), encoding="utf-8")
    model = robodyn.load(str(path), dynamics=False)
    assert model.n_states == 38
    _check(path, model, seed=19)


def test_a_non_finite_point_of_a_large_tree_is_named(tmp_path: Path) -> None:
    """Above BLAS_SIZE the lean path's finite check is numpy's sum: a NaN still goes to the general path's message."""
    _, model = _tree(tmp_path, 13)
    x = np.zeros(model.n_states)
    x[3] = np.nan
    with pytest.raises(robodyn.InputError, match="finite"):
        robodyn.linearize(model, x, np.zeros(model.n_inputs))


@needs_robots
def test_the_cli_linearizes_the_stock_baxter(capsys: pytest.CaptureFixture[str]) -> None:
    """``robodyn linearize baxter.urdf --at ...``: exit 0 and the library's numbers at the same operating point."""
    path = str(ROBOTS / "baxter_description/urdf/baxter.urdf")  # type: ignore[operator]
    code, out, err = run(capsys, "linearize", path, "--at", "right_s0=0.3,left_e1=-0.5", "--json")
    assert code == 0, err
    data = json.loads(out)
    expected = robodyn.linearize(robodyn.load(path), {"right_s0": 0.3, "left_e1": -0.5}, "hold")
    assert data["A"] == expected.A.tolist() and data["B"] == expected.B.tolist()


@needs_robots
@pytest.mark.slow
def test_analyze_reports_the_stock_baxter(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = str(ROBOTS / "baxter_description/urdf/baxter.urdf")  # type: ignore[operator]
    code, _, err = run(capsys, "analyze", path, "--out", str(tmp_path), "--quiet")
    assert code == 0, err
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    (point,) = report["points"]
    expected = robodyn.linearize(robodyn.load(path), point["x"], point["u"])
    assert report["model"] == "baxter" and point["method"] == "manipulator"
    np.testing.assert_allclose(point["A"], expected.A, rtol=0, atol=0)  # the report's point, linearized again


def test_a_first_order_model_with_a_row_above_blas_size(tmp_path: Path) -> None:
    """40 states and 2 inputs ([A | B | C | D | x | u]: 3,402 entries): the lean path's other binding, its finite
    check numpy's sum, equals the general path bit for bit and the closed form of A and B."""
    n = 40
    dynamics = "\n".join(f"  x{i}: -x{i} + sin(x{(i + 1) % n}) + {'u0' if i % 2 else 'u1'}*x{(i + 2) % n}"
                          for i in range(n))
    path = tmp_path / "ring.yaml"
    path.write_text(f"name: ring\nkind: first_order\nstates: [{', '.join(f'x{i}' for i in range(n))}]\n"
                    f"inputs: [u0, u1]\ndynamics:\n{dynamics}\n", encoding="utf-8")
    model = robodyn.load(str(path))
    assert (2 * n * n + 2 * n * 2 + n + 2) > BLAS_SIZE
    rng = np.random.default_rng(40)
    x, u = rng.uniform(-1, 1, n), rng.uniform(-1, 1, 2)
    lean, general = robodyn.linearize(model, x, u), robodyn.linearize(model, x.tolist(), u.tolist())
    for label in ("A", "B", "C", "D", "x_op", "u_op"):
        np.testing.assert_array_equal(getattr(lean, label), getattr(general, label))
    A, B = np.zeros((n, n)), np.zeros((n, 2))
    for i in range(n):
        gain = u[0] if i % 2 else u[1]
        A[i, i] -= 1.0
        A[i, (i + 1) % n] += np.cos(x[(i + 1) % n])
        A[i, (i + 2) % n] += gain
        B[i, 0 if i % 2 else 1] = x[(i + 2) % n]
    np.testing.assert_allclose(lean.A, A, rtol=0, atol=1e-15)  # one product and a cosine per entry
    np.testing.assert_array_equal(lean.B, B)
    x[5] = np.nan
    with pytest.raises(robodyn.InputError, match="finite"):
        robodyn.linearize(model, x, u)
