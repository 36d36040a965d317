"""The optimal control examples (examples/*_swingup.yaml, examples/panda_reach.yaml; docs/control.md) solve, and
TVLQR along their solutions closes the loop where the open-loop inputs alone do not (issue 47, "Closed loop").

Each example is solved as shipped (or, for a default test of an example too slow to solve in seconds, with fewer
knots: the same problem on a coarser grid, the shipped one in a test marked slow). From 20 seeded starts
x0 + dx0, |dx0| = 0.05 (random directions), the model simulated under ``tvlqr(...).feedback`` ends within 1e-2 of
the trajectory's final state, and the open-loop replay of the trajectory's inputs from the same starts misses it
by more than 0.1. The references are independent of the solver and of TVLQR: the final state is checked against
the problem's own terminal equalities (or frame target), and both runs are robodyn.simulate's adaptive
integration of the nonlinear model at tight tolerances, not the solver's discretization.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.cli_run import run

import robodyn
from robodyn.control.optimal.problem_file import problem_from_document
from robodyn.files.yamlio import read_yaml
from robodyn.signals import Table

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STARTS, RADIUS, SEED = 20, 0.05, 47  # the issue's numbers: 20 seeded starts, |dx0| <= 0.05
TRACKED, MISSED = 1e-2, 0.1  # ... the closed loop ends within 1e-2, the open loop misses by more than 0.1
RTOL, ATOL = 1e-9, 1e-11  # the nonlinear runs: their own error (~1e-8) is far below both thresholds


@dataclass(frozen=True)
class Example:
    """An example problem file and the TVLQR weights that track it."""

    file: str
    Q: dict[str, float]
    R: dict[str, float]
    knots: int | None = None  # the default test's knots when the shipped ones are too slow (None: as shipped)
    target: dict[str, float] = field(default_factory=dict)  # the final state the problem demands
    target_atol: float = 1e-6  # ... met to this: terminal equalities to IPOPT's tolerance 1e-8 (1e-6 leaves room)
    slow: bool = False  # a solve of minutes: only in the slow tests


EXAMPLE_CASES = {
    "pendulum": Example("pendulum_swingup.yaml", {"theta": 100.0, "theta_dot": 10.0}, {"tau": 0.1},
                        target={"theta": math.pi, "theta_dot": 0.0}),
    "cart_pole": Example("cart_pole_swingup.yaml", {"x": 10.0, "theta": 100.0, "x_dot": 1.0, "theta_dot": 10.0},
                         {"F": 0.1}, target={"x": 0.0, "theta": 0.0, "x_dot": 0.0, "theta_dot": 0.0}),
    # a terminal cost of weight 1e4, not equalities: the end is within ~1e-3 of the top, 1e-2 (the issue's) bounds it
    "acrobot": Example("acrobot_swingup.yaml", {"theta1": 100.0, "theta2": 100.0, "theta1_dot": 10.0,
                                                "theta2_dot": 10.0}, {"tau": 0.1}, slow=True, target_atol=1e-2,
                       target={"theta1": math.pi, "theta2": 0.0, "theta1_dot": 0.0, "theta2_dot": 0.0}),
    "panda": Example("panda_reach.yaml", {**{f"panda_joint{j}": 100.0 for j in range(1, 8)},
                                          "panda_finger_joint1": 100.0,
                                          **{f"panda_joint{j}_dot": 1.0 for j in range(1, 8)},
                                          "panda_finger_joint1_dot": 1.0},
                     {f"panda_joint{j}_tau": 0.01 for j in range(1, 8)} | {"panda_finger_joint1_tau": 0.01}, knots=50),
}
PANDA_TARGET = np.array([0.45, 0.2, 0.3])  # examples/panda_reach.yaml's frame target: position
PANDA_ROTATION = np.array([[math.cos(0.5), math.sin(0.5), 0.0],  # ... and orientation, rpy (pi, 0, 0.5):
                           [math.sin(0.5), -math.cos(0.5), 0.0],  # Rz(0.5) Rx(pi), the hand turned 0.5 rad
                           [0.0, 0.0, -1.0]])                     # about the vertical, pointing down


def _problem(example: Example, knots: int | None) -> robodyn.OptimalControlProblem:
    """The example's problem, with ``knots`` intervals when given (the file's other keys unchanged)."""
    path = EXAMPLES / example.file
    document = read_yaml(path.read_text(encoding="utf-8"), str(path))
    if knots is not None:
        document.data["knots"] = knots
    return problem_from_document(document, EXAMPLES)


_SOLVED: dict[tuple[str, int | None], tuple[robodyn.OptimalControlProblem, Any]] = {}


def solved(name: str, knots: int | None) -> tuple[robodyn.OptimalControlProblem, Any]:
    """(problem, OptimalTrajectory), solved once per test session."""
    key = (name, knots)
    if key not in _SOLVED:
        problem = _problem(EXAMPLE_CASES[name], knots)
        _SOLVED[key] = problem, problem.solve()
    return _SOLVED[key]


def starts(x0: np.ndarray) -> np.ndarray:
    """(20, n) seeded starts at distance 0.05 from x0 in random directions."""
    dx0 = np.random.default_rng(SEED).normal(size=(STARTS, x0.size))
    return x0 + RADIUS * dx0 / np.linalg.norm(dx0, axis=1, keepdims=True)


def interpolation(result: Any) -> str:
    """How the solution's inputs run between knots: linear for collocation, held for the DDP family."""
    return "linear" if result.method == "collocation" else "hold"


def open_loop(result: Any) -> dict[str, Table]:
    """The solution's inputs as simulate's input tables, interpolated as the solver meant them."""
    kind = "linear" if interpolation(result) == "linear" else "zoh"
    return {name: Table(result.t, result.u[:, i], kind) for i, name in enumerate(result.inputs)}


def check_closed_loop(name: str, knots: int | None) -> None:
    example = EXAMPLE_CASES[name]
    problem, result = solved(name, knots)
    model, T = problem.model, float(result.t[-1])
    assert result.converged, result.status
    target = result.x[-1]
    if example.target:  # the solver brought the end where the problem asks
        np.testing.assert_allclose(target, [example.target[s] for s in model.states], atol=example.target_atol)
    x0 = starts(result.x[0])
    # tracked over the trajectory's span (the hand-over after it: test_the_pendulum_is_caught_by_lqr_at_the_top)
    design = robodyn.tvlqr(model, result, example.Q, example.R, interpolation=interpolation(result))
    # limits="ignore": a URDF's position limits are not forces (simulate only reports leaving them), and the open
    # loop leaves them on purpose; a start may lie a little outside (the Panda's fingers at 0.02 of [0, 0.04])
    closed = robodyn.simulate(model, (0.0, T), x0, design.feedback, rtol=RTOL, atol=ATOL, limits="ignore")
    opened = robodyn.simulate(model, (0.0, T), x0, open_loop(result), rtol=RTOL, atol=ATOL, limits="ignore")
    tracked = np.linalg.norm(closed.x[:, -1] - target, axis=1)
    missed = np.linalg.norm(opened.x[:, -1] - target, axis=1)
    assert tracked.max() < TRACKED, tracked
    assert missed.min() > MISSED, missed


def _variants() -> list[Any]:
    """(name, knots): each example as shipped (marked slow when it has a coarser default variant) and the variant."""
    shipped = [pytest.param(n, None, id=f"{n}-shipped", marks=[pytest.mark.slow] if e.knots or e.slow else [])
               for n, e in EXAMPLE_CASES.items()]
    return shipped + [pytest.param(n, e.knots, id=f"{n}-{e.knots}-knots") for n, e in EXAMPLE_CASES.items() if e.knots]


@pytest.mark.parametrize(("name", "knots"), _variants())
def test_tvlqr_tracks_each_example_where_the_open_loop_misses(name: str, knots: int | None) -> None:
    check_closed_loop(name, knots)


def test_the_pendulum_is_caught_by_lqr_at_the_top() -> None:
    """After the swing, the feedback goes on with the LQR about the upright (handover): 3 s later every start is
    still within 1e-2 of the top, and the last knot's input (the torque the LQR is designed about) is ~0."""
    problem, result = solved("pendulum", None)
    model, T = problem.model, float(result.t[-1])
    assert abs(result.u[-1, 0]) < 0.1  # the upright is held by 0 torque: the handover point is ~ an equilibrium
    design = robodyn.tvlqr(model, result, EXAMPLE_CASES["pendulum"].Q, EXAMPLE_CASES["pendulum"].R, handover=True,
                           interpolation="linear")
    times = np.linspace(T, T + 3.0, 31)
    later = robodyn.simulate(model, (0.0, T + 3.0), starts(result.x[0]), design.feedback, rtol=RTOL, atol=ATOL,
                             t_eval=times)
    off = np.linalg.norm(later.x - np.array([math.pi, 0.0]), axis=2)
    # u_f = result.u[-1] offsets the LQR's equilibrium by ~ u_f / (k1 - m g l) < 0.1 / 20 = 5e-3 < 1e-2
    assert off.max() < TRACKED, off.max()


def test_the_panda_reaches_its_target_pose_within_its_torque_limits() -> None:
    """The hand's pose at the end, by robodyn's kinematics (checked against Pinocchio in tests/kinematics), is the
    file's target, and no input leaves the URDF's effort limits (87 N m on joints 1-4, 12 N m on 5-7)."""
    from robodyn.kinematics.frames import Kinematics

    problem, result = solved("panda", None)
    assert result.converged, result.status
    pose = Kinematics(problem.model).pose(result.x[-1, :8], "panda_hand_tcp")
    # a terminal penalty (weights 1e4, 1e3), not an equality: it leaves ~1e-4 m and ~1e-3 rad; 1e-3 and 1e-2 bound it
    assert np.linalg.norm(pose.position - PANDA_TARGET) < 1e-3
    assert np.linalg.norm(pose.rotation - PANDA_ROTATION) < 1e-2
    effort = np.array([87.0] * 4 + [12.0] * 3 + [100.0])
    assert np.all(np.abs(result.u) <= effort + 1e-9)
    assert np.abs(result.x[-1, 8:]).max() < 1e-2  # at rest: the terminal velocity weights


def test_optimize_then_track_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/control.md's commands: ``robodyn optimize`` writes the swing, ``robodyn track`` follows it from a
    perturbed start to the top."""
    swing, out = tmp_path / "swing.csv", tmp_path / "run.csv"
    code, printed, err = run(capsys, "optimize", str(EXAMPLES / "pendulum_swingup.yaml"), "--out", str(swing),
                             "--json")
    assert code == 0, err
    summary = json.loads(printed)
    assert summary["converged"] and summary["method"] == "collocation"
    with swing.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["t", "theta", "theta_dot", "tau"] and len(rows) == 62  # 60 intervals: 61 knots
    assert [float(v) for v in rows[-1][1:3]] == pytest.approx([math.pi, 0.0], abs=1e-6)
    code, printed, err = run(capsys, "track", "pendulum", "--trajectory", str(swing), "--Q",
                             "theta=100,theta_dot=10", "--R", "tau=0.1", "--handover", "--interpolation", "linear",
                             "--x0", "theta=0.03,theta_dot=0.04", "--out", str(out))
    assert code == 0, err
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, last = rows[0], [float(v) for v in rows[-1]]
    assert last[0] == pytest.approx(6.0)
    end = np.array([last[header.index("theta")], last[header.index("theta_dot")]])
    assert np.linalg.norm(end - [math.pi, 0.0]) < TRACKED
