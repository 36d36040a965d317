"""One verdict for controllability and observability (robodyn.linear.controllability): the PBH test on the balanced
system, checked against the truth of systems built (un)controllable, python-control's ``ctrb`` rank where it is
reliable (well-scaled systems), a controllability staircase written here (orthogonal transformations only: P. Van
Dooren, IEEE TAC 26(1), 1981), SLICOT's ``AB01MD`` when slycot is installed, and closed forms.

Hostile cases: a motor-driven joint whose Kalman matrix loses its rank to rounding, systems scaled by 1e-6 .. 1e6,
a double mode with one input, a decoupled state, and a nearly uncontrollable pair (two modes 1e-10 apart).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn import LinearSystem
from robodyn.linear.controllability import NEAR_MARGIN, balancing, controllability, observability

control = pytest.importorskip("control")

EXAMPLES = Path(__file__).parents[2] / "examples"


def staircase_rank(A: np.ndarray, B: np.ndarray) -> int:
    """The dimension of the controllable subspace by the staircase form: rank-revealing SVDs of the blocks, the
    states rotated orthogonally after each. Tolerance 1e-10 ||[A, B]||: rounding builds up from block to block (a
    few eps ||A|| each), and the random systems compared have no singular value of a block near it."""
    n = A.shape[0]
    tol = 1e-10 * np.linalg.norm(np.hstack([A, B]), 2)
    work, block, r = A.copy(), B.copy(), 0
    while r < n and block.size:
        U, values, _ = np.linalg.svd(block)
        rho = int(np.sum(values > tol))
        if rho == 0:
            break
        work[r:, :] = U.T @ work[r:, :]
        work[:, r:] = work[:, r:] @ U
        block, r = work[r + rho:, r:r + rho], r + rho
    return r


def built(rng: np.random.Generator, n: int, m: int, lost: int) -> tuple[np.ndarray, np.ndarray, list[complex]]:
    """A random (A, B) with ``lost`` uncontrollable modes, in a random orthogonal basis (well-conditioned):
    A = Q [[A11, A12], [0, A22]] Q^T, B = Q [B1; 0]; returns A, B and the eigenvalues of A22."""
    A = rng.normal(size=(n, n))
    B = rng.normal(size=(n, m))
    r = n - lost
    A[r:, :r] = 0.0
    B[r:, :] = 0.0
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return Q @ A @ Q.T, Q @ B, list(np.linalg.eigvals(A[r:, r:]))


def test_the_motor_joint_is_controllable_and_observable_though_its_kalman_rank_is_lost() -> None:
    model = robodyn.load(EXAMPLES / "motor_joint_pid.yaml")
    linear = robodyn.linearize(model, np.zeros(5), [0.0])
    reach, see = linear.controllability(), linear.observability()
    assert reach.full and reach.controllable and see.full and see.observable
    assert not reach.failing and not see.failing and not reach.nearly
    # the Kalman matrices' singular values spread over 20 decades: their rank is a detail, and it is short
    assert reach.rank < 5 and see.rank < 5 and reach.rank == np.linalg.matrix_rank(control.ctrb(linear.A, linear.B))
    assert reach.explanation.startswith("controllable: every mode passes the PBH test on the balanced system")
    assert "lost to rounding" in reach.explanation and "not controllable" not in reach.explanation
    assert see.explanation.startswith("observable:") and "not observable" not in see.explanation
    data = json.loads(json.dumps(reach.to_dict(), allow_nan=False))
    assert data["full"] is True and data["controllable"] is True and data["rank_full"] is False
    assert data["failing"] == [] and all(mode["passes"] for mode in data["modes"])
    # the same system in balanced coordinates: python-control's rank test agrees there (a similarity: same verdict)
    d, _ = balancing(linear.A, linear.B)
    A_b, B_b = linear.A * (d[None, :] / d[:, None]), linear.B / d[:, None]
    assert staircase_rank(A_b, B_b) == 5


@pytest.mark.parametrize("seed", range(40))
def test_the_verdict_is_the_truth_and_agrees_with_control_and_the_staircase(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 8)), int(rng.integers(1, 3))
    lost = int(rng.integers(0, n + 1)) if seed % 2 else 0
    A, B, hidden = built(rng, n, m, lost)
    result = controllability(LinearSystem(A, B))
    assert result.full == (lost == 0) == (staircase_rank(A, B) == n)
    kalman = control.ctrb(A, B)
    values = np.linalg.svd(kalman, compute_uv=False)
    rank = np.linalg.matrix_rank(kalman)
    if values[rank - 1] > 1e-8 * values[0]:  # its rank is reliable: the kept singular values are far from rounding
        assert result.full == (rank == n)
    for value in hidden:  # each hidden eigenvalue is among the failing modes (conjugates reported once)
        assert min(abs(mode.eigenvalue - z) for mode in result.failing for z in (value, value.conjugate())) < 1e-8
    assert len(result.failing) <= lost


def test_the_verdict_agrees_with_slycot_ab01nd() -> None:
    """SLICOT's staircase reduction (AB01ND, in every slycot release; 0.7.1 dropped the single-input AB01MD), with a
    rank tolerance: the hidden modes are built exactly but rotated in floating point, so SLICOT's default (about
    n^2 eps |A|) counts the rounding left in them as controllable; 1e-10 is far above that rounding (~1e-15), and
    SLICOT's counts are the same for every tolerance from 1e-13 to 1e-4 on these systems."""
    TOL = 1e-10
    slycot = pytest.importorskip("slycot")
    for seed in range(20):
        rng = np.random.default_rng(seed)
        A, B, _ = built(rng, 5, 1, seed % 3)
        found = slycot.ab01nd(5, 1, A.copy(), B.copy(), tol=TOL)[2]  # (Ac, Bc, ncont, indcon, nblk, Z, tau)
        assert controllability(LinearSystem(A, B)).full == (found == 5)


@pytest.mark.parametrize("spread", [1e3, 1e8])
def test_a_badly_scaled_controllable_system_is_controllable(spread: float) -> None:
    # a well-controllable coupled system seen in states of wildly different units: x = D z, D = 1/spread .. spread
    rng = np.random.default_rng(7)
    A, B, _ = built(rng, 6, 1, 0)
    D = np.diag(np.logspace(-math.log10(spread), math.log10(spread), 6))
    scaled = LinearSystem(D @ A @ np.linalg.inv(D), D @ B, np.linalg.inv(D)[:2])
    reach, see = scaled.controllability(), scaled.observability()
    assert controllability(LinearSystem(A, B)).full and observability(LinearSystem(A, B, np.eye(6)[:2])).full
    assert reach.full and not reach.nearly and see.full
    assert np.linalg.matrix_rank(control.ctrb(scaled.A, scaled.B)) == reach.rank
    if spread == 1e8:  # the Kalman matrices lose their rank to rounding, and so does the unbalanced staircase
        assert reach.rank < 6 and see.rank < 6 and staircase_rank(scaled.A, scaled.B) < 6


def test_a_diagonal_system_with_inputs_of_every_size_is_controllable() -> None:
    A, B = np.diag([-1e-3, -1.0, -1e3]), np.array([[1e-6], [1.0], [1e6]])  # distinct modes, each reached
    reach = LinearSystem(A, B).controllability()
    assert reach.full and not reach.nearly and np.linalg.matrix_rank(control.ctrb(A, B)) == 2


def test_a_double_mode_with_one_input_is_not_controllable() -> None:
    # x1' = -x1 + u, x2' = -x2 + u: x1 - x2 decays by itself whatever u does (closed form: rank [I - I, B] = 1)
    rng = np.random.default_rng(3)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    A, B = Q @ np.diag([-1.0, -1.0, -2.0]) @ Q.T, Q @ np.array([[1.0], [1.0], [1.0]])
    reach = LinearSystem(A, B).controllability()
    assert not reach.full
    (mode,) = reach.failing
    assert mode.eigenvalue == pytest.approx(-1.0, abs=1e-12) and mode.rank == 2
    assert "the PBH test on the balanced system finds the mode(s) -1 not controllable" in reach.explanation
    assert staircase_rank(A, B) == 2


def test_a_decoupled_state_is_neither_controllable_nor_observable() -> None:
    A = np.array([[0.0, 1.0, 0.0], [-4.0, -0.4, 0.0], [0.0, 0.0, -3.0]])  # x3' = -3 x3: no input, no output
    system = LinearSystem(A, [[0.0], [1.0], [0.0]], [[1.0, 0.0, 0.0]], states=["q", "v", "heat"])
    reach, see = system.controllability(), system.observability()
    assert [mode.eigenvalue for mode in reach.failing] == [-3.0] == [mode.eigenvalue for mode in see.failing]
    assert "not observable" in see.explanation


@pytest.mark.parametrize("gap", [1e-10, 1e-12])
def test_a_nearly_uncontrollable_pair_passes_and_says_by_how_little(gap: float) -> None:
    # two modes gap apart with one input: the PBH matrix at -1 is [[0, 0, 1], [0, gap, 1]], whose smallest singular
    # value is gap / sqrt(2) (closed form, to first order): that is the relative distance to uncontrollability
    system = LinearSystem(np.diag([-1.0, -1.0 - gap]), [[1.0], [1.0]])
    reach = system.controllability()
    assert reach.full and reach.nearly
    weakest = min(reach.modes, key=lambda mode: mode.margin)
    size = float(np.linalg.norm(np.hstack([system.A, system.B]), 2))
    # balancing scales by powers of two: within a factor 4 of the unscaled closed form
    assert gap / math.sqrt(2) / size / 4 < weakest.margin < 4 * gap / math.sqrt(2) / size
    assert weakest.margin < NEAR_MARGIN and "nearly not controllable" in reach.explanation
    assert json.loads(json.dumps(reach.to_dict()))["nearly"]


def test_the_modes_command_states_the_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    from cli_run import run

    example = str(EXAMPLES / "motor_joint_pid.yaml")
    code, out, _ = run(capsys, "modes", example)
    assert code == 0 and "\ncontrollable: every mode passes" in out and "\nobservable: every mode passes" in out
    assert "not controllable" not in out and "not observable" not in out
    code, out, _ = run(capsys, "modes", example, "--json")
    data = json.loads(out)
    assert data["controllability"]["controllable"] is True and data["observability"]["observable"] is True
    assert data["controllability"]["rank"] < 5 and data["stability"] == "asymptotically stable"
