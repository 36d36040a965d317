"""The command line: output contracts, one-line errors with exit codes 2 and 1, nothing executed."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # errors exit through fail
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_classify_joint_json(capsys):
    code, out, err = run(capsys, "classify", "joint", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    for key in ("order", "dimension", "linear", "time_invariant", "homogeneous", "autonomous", "method", "reasons"):
        assert key in data
    assert data["order"] == 2 and data["dimension"] == 1
    assert data["linear"] is True and data["time_invariant"] is True
    assert data["homogeneous"] is False  # forced by u
    assert data["method"] == "symbolic"


def test_classify_pendulum_is_nonlinear(capsys):
    code, out, _ = run(capsys, "classify", "pendulum", "--json")
    data = json.loads(out)
    assert code == 0 and data["linear"] is False
    assert "sin(theta)" in data["reasons"]["linear"]


def test_classify_decay_file_is_linear_homogeneous(capsys, tmp_path):
    model = tmp_path / "decay.yaml"
    model.write_text("kind: first_order\nstates: [x]\ndynamics: {x: -2*x}\n")
    code, out, _ = run(capsys, "classify", str(model), "--json")
    data = json.loads(out)
    assert code == 0 and data["linear"] is True and data["homogeneous"] is True and data["autonomous"] is True


def test_classify_text_lists_every_verdict(capsys):
    code, out, _ = run(capsys, "classify", "double_pendulum")
    assert code == 0
    for word in ("order 2", "dimension 2 (vector)", "nonlinear", "time-invariant", "forced", "not autonomous"):
        assert word in out


def test_show_joint_reports_damping(capsys):
    code, out, _ = run(capsys, "show", "joint")
    assert code == 0
    assert "omega_n  10 rad/s" in out and "zeta     0.5" in out and "underdamped" in out
    assert "J*q'' = -b*q_dot - k*q + u" in out


def test_show_direct_drive_has_no_restoring_force(capsys):
    code, out, _ = run(capsys, "show", "joint_direct_drive")
    assert code == 0 and "no restoring force (omega_n undefined)" in out


def test_param_overrides_accept_arithmetic(capsys):
    # k = 4, J = 0.01 -> omega_n = 20; b = 0.4 -> zeta = 0.4 / (2 * sqrt(0.04)) = 1 exactly
    code, out, _ = run(capsys, "show", "joint", "--param", "k=2*2", "--param", "b=0.4")
    assert code == 0 and "omega_n  20 rad/s" in out and "critically damped" in out


def test_show_latex(capsys):
    code, out, _ = run(capsys, "show", "pendulum", "--latex")
    assert code == 0 and out.startswith("\\begin{aligned}") and "\\ddot{\\theta}" in out


def test_show_mbk_with_option(capsys):
    code, out, _ = run(capsys, "show", "mbk:n=4")
    assert code == 0 and "x4_dot" in out and "m*x4'' = F4" in out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["show", "nosuch"], "unknown model 'nosuch'"),
        (["show", "joint", "--param", "kk=1"], "did you mean 'k'"),
        (["show", "joint", "--param", "k=1/0"], "division by zero"),
        (["show", "joint", "--param", "k"], "expected name=value"),
        (["show", "joint", "--param", "J=-1"], "not positive definite"),
        (["show", "missing.yaml"], "no such file"),
        (["frobnicate"], "invalid choice"),
        (["classify"], "required"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("robodyn: error: ")
    assert fragment in err


HOSTILE = [
    "__import__('os').system('touch {marker}')",
    "x.__class__",
    "x[0]",
    "(lambda: 1)()",
    "[x for x in (1, 2)]",
    "1 if x else 2",
    "open('{marker}', 'w')",
]


@pytest.mark.parametrize("expression", HOSTILE)
def test_hostile_model_file_runs_nothing(capsys, tmp_path, expression):
    marker = tmp_path / "pwned"
    text = expression.format(marker=marker)
    model = tmp_path / "evil.yaml"
    model.write_text(f'kind: first_order\nstates: [x]\ndynamics:\n  x: "{text}"\n')
    code, out, err = run(capsys, "show", str(model))
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "evil.yaml:4: dynamics.x" in err
    assert not marker.exists()


def test_demo_writes_the_reports_and_exits_0(capsys, tmp_path):
    code, out, _ = run(capsys, "demo", "--out", str(tmp_path / "out"))
    assert code == 0
    assert "theta''" in out and "tau" in out
    page = tmp_path / "out" / "pendulum" / "report.html"
    assert out.strip().splitlines()[-2:] == [f"report: {page}", f"report: {tmp_path / 'out' / 'joint' / 'report.html'}"]
    data = json.loads((tmp_path / "out" / "pendulum" / "report.json").read_text())
    assert data["classification"]["linear"] is False
    hanging = next(p for p in data["points"] if abs(p["x"][0]) < 1e-9)
    assert hanging["A"] == [[0.0, 1.0], [-9.81, 0.0]]  # -m g l / I, exact
    assert any(p["stability"] == "unstable" for p in data["points"])  # upright
    assert not list((tmp_path / "out").rglob(".*.tmp"))  # atomic writes leave no temporaries


def test_console_script_in_a_subprocess(tmp_path):
    """The installed entry point: exit code and a single stderr line, no traceback."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    env.pop("ROBODYN_DEBUG", None)
    done = subprocess.run([sys.executable, "-m", "robodyn.cli", "show", "nosuch"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    ok = subprocess.run([sys.executable, "-m", "robodyn.cli", "classify", "joint", "--json"],
                        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert ok.returncode == 0 and json.loads(ok.stdout)["linear"] is True


# --- simulate and verify ---------------------------------------------------------------------------


def test_simulate_writes_csv_with_states(capsys, tmp_path):
    out = tmp_path / "joint.csv"
    code, stdout, _ = run(capsys, "simulate", "joint", "--t-final", "2", "--input", "u=step(0.5, 0, 1)",
                          "--out", str(out), "--points", "21")
    assert code == 0 and "exact" in stdout
    header, *rows = out.read_text().splitlines()
    assert header == "t,q,q_dot" and len(rows) == 21
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    # before the step at t = 0.5 the joint stays at rest; afterwards it moves toward q = u/k = 1
    assert np.all(table[table[:, 0] <= 0.5, 1] == 0.0) and 0.5 < table[-1, 1] < 1.5


def test_simulate_csv_includes_declared_outputs(capsys):
    code, stdout, _ = run(capsys, "simulate", str(EXAMPLES / "joint_first_order.yaml"), "--t-final", "1",
                          "--x0", "q=1", "--points", "3", "--method", "dopri5", "--out", "-")
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0] == "t,q,qd,angle"
    first = [float(v) for v in lines[1].split(",")]
    assert first == [0.0, 1.0, 0.0, 1.0]


def test_simulate_plot_and_npz(capsys, tmp_path):
    code, _, _ = run(capsys, "simulate", "pendulum", "--t-final", "pi", "--x0", "theta=1", "--method", "rk4",
                     "--dt", "1e-2", "--out", str(tmp_path / "p.npz"), "--plot", str(tmp_path / "p.png"))
    assert code == 0
    data = np.load(tmp_path / "p.npz")
    assert data["x"].shape == (data["t"].size, 2) and list(data["states"]) == ["theta", "theta_dot"]
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("argv", "fragment", "exit_code"),
    [
        (["simulate", "joint", "--t-final", "0"], "must be greater than t0", 2),
        (["simulate", "joint", "--t-final", "1", "--method", "rk4"], "give dt", 2),
        (["simulate", "joint", "--t-final", "1", "--x0", "qq=1"], "did you mean 'q'", 2),
        (["simulate", "joint", "--t-final", "1", "--input", "v=1"], "unknown input", 2),
        (["simulate", "joint", "--t-final", "1", "--input", "u=__import__('os')"], "u", 2),
        (["simulate", "joint", "--t-final", "1", "--out", "x.txt"], ".csv or .npz", 2),
        (["simulate", str(EXAMPLES / "decay.yaml"), "--t-final", "1", "--x0", "x=1", "--method", "euler",
          "--dt", "nan"], "dt", 2),
    ],
)
def test_simulate_bad_input(capsys, argv, fragment, exit_code):
    code, out, err = run(capsys, *argv)
    assert code == exit_code and out == ""
    assert err.count("\n") == 1 and fragment in err


def test_simulate_writes_the_sensitivities_asked_for(capsys, tmp_path):
    """--sensitivities x0,l: the columns d(state)/d(name) after the states, equal to the API's numbers, and the summary
    lines; the file reads back with them."""
    out = tmp_path / "run.csv"
    code, stdout, err = run(capsys, "simulate", "pendulum", "--t-final", "2", "--x0", "theta=1", "--points", "5",
                            "--sensitivities", "x0,l", "--out", str(out))
    assert code == 0 and err == ""
    assert out.read_text().splitlines()[0] == ("t,theta,theta_dot,d(theta)/d(theta(0)),d(theta_dot)/d(theta(0)),"
                                               "d(theta)/d(theta_dot(0)),d(theta_dot)/d(theta_dot(0)),d(theta)/d(l),"
                                               "d(theta_dot)/d(l)")
    assert "d(final state)/d(l): theta = " in stdout and "exact (manipulator)" in stdout
    expected = robodyn.simulate(robodyn.load("pendulum"), 2.0, [1.0, 0.0], t_eval=np.linspace(0.0, 2.0, 5),
                                sensitivities=["x0", "l"])
    back = robodyn.Trajectory.load(out, states=["theta", "theta_dot"])
    np.testing.assert_array_equal(back.sensitivity("l"), expected.sensitivity("l"))
    np.testing.assert_array_equal(back.sensitivity("theta"), expected.sensitivity("theta"))


@pytest.mark.parametrize(("names", "fragment"), [("I", "derived"), ("length", "'x0' (every initial state)"),
                                                 ("x0,,l", "an empty name")])
def test_simulate_bad_sensitivities_are_one_line_and_exit_2(capsys, tmp_path, names, fragment):
    out = tmp_path / "run.csv"
    code, stdout, err = run(capsys, "simulate", "pendulum", "--t-final", "1", "--sensitivities", names, "--out",
                            str(out))
    assert code == 2 and stdout == "" and not out.exists()
    assert err.count("\n") == 1 and fragment in err


def test_simulate_blow_up_is_a_numerical_failure(capsys, tmp_path):
    model = tmp_path / "blowup.yaml"
    model.write_text("kind: first_order\nstates: [x]\ndynamics: {x: x**2}\n")
    code, out, err = run(capsys, "simulate", str(model), "--t-final", "2", "--x0", "x=1", "--backend-check")
    assert code == 2  # unknown option: argparse
    code, out, err = run(capsys, "simulate", str(model), "--t-final", "2", "--x0", "x=1")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "t = 0.99" in err or "t = 1" in err


def test_verify_joint_passes_and_writes_plot(capsys, tmp_path):
    code, out, _ = run(capsys, "verify", "--out", str(tmp_path), "--json")
    data = json.loads(out)
    assert code == 0 and data["passed"] is True
    orders = {m["method"]: m["observed_order"] for m in data["methods"]}
    for method, expected in {"euler": 1, "heun": 2, "rk4": 4, "dopri5": 5, "dop853": 8}.items():
        assert abs(orders[method] - expected) <= 0.3
    assert (tmp_path / "verify_joint.png").exists()


def test_verify_refuses_nonlinear_models(capsys, tmp_path):
    code, _, err = run(capsys, "verify", "pendulum", "--out", str(tmp_path))
    assert code == 2 and "linear" in err


# --- modes and existence ---------------------------------------------------------------------------


def test_modes_json_contract_on_the_upright_pendulum(capsys):
    code, out, _ = run(capsys, "modes", "pendulum", "--at", "theta=pi", "--json")
    data = json.loads(out)
    assert code == 0 and {"modes", "stability"} <= set(data) and data["stability"] == "unstable"
    for row in data["modes"]:  # the DESIGN contract's keys (extensions may add more)
        assert {"eigenvalue", "omega_n", "zeta", "time_constant", "period", "shape"} <= set(row)
    unstable = [row for row in data["modes"] if row["eigenvalue"][0] > 0]
    assert len(unstable) == 1
    assert unstable[0]["eigenvalue"][0] == pytest.approx(np.sqrt(9.81), rel=1e-13)  # +sqrt(g/l)
    assert unstable[0]["zeta"] < 0


def test_modes_of_the_joint_and_the_hanging_pendulum(capsys):
    code, out, _ = run(capsys, "modes", "joint", "--json")
    data = json.loads(out)
    assert code == 0 and data["stability"] == "asymptotically stable"
    (row,) = data["modes"]
    assert row["omega_n"] == pytest.approx(10.0, rel=1e-14) and row["zeta"] == pytest.approx(0.5, rel=1e-14)
    code, out, _ = run(capsys, "modes", "pendulum", "--json")
    assert json.loads(out)["stability"] == "marginally stable"


def test_existence_json_contract(capsys, tmp_path):
    model = tmp_path / "decay.yaml"
    model.write_text("kind: first_order\nstates: [x]\ndynamics: {x: -2*x}\n")
    code, out, _ = run(capsys, "existence", str(model), "--x0", "x=1", "--radius", "0.5", "--json")
    data = json.loads(out)
    assert code == 0 and set(data) == {"L", "M", "delta", "contraction", "rigorous", "explanation"}
    # |f| <= 2 * 1.5 = 3 on the box, delta = min(1, 0.5 / 3), L = 2: delta L = 1/3 < 1
    assert data["M"] == pytest.approx(3.0) and data["L"] == pytest.approx(2.0)
    assert data["delta"] == pytest.approx(1 / 6) and data["contraction"] is True and data["rigorous"] is True


def test_existence_reports_non_lipschitz_right_hand_side(capsys, tmp_path):
    model = tmp_path / "sqrt.yaml"
    model.write_text("kind: first_order\nstates: [x]\ndynamics: {x: sqrt(abs(x))}\n")
    code, out, _ = run(capsys, "existence", str(model), "--x0", "x=0", "--radius", "0.5")
    assert code == 0 and "uniqueness is not guaranteed" in out


@pytest.mark.parametrize(
    "argv",
    [["modes", "pendulum", "--at", "thetaa=1"], ["existence", "joint", "--x0", "q=0", "--radius", "-1"],
     ["existence", "joint", "--radius", "1"]],
)
def test_modes_and_existence_bad_input(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1


# --- equilibrium and linearize -------------------------------------------------------------------


def test_equilibrium_finds_both_pendulum_equilibria(capsys):
    code, out, _ = run(capsys, "equilibrium", "pendulum", "--fix", "tau=0", "--json")
    points = json.loads(out)["equilibria"]
    assert code == 0
    angles = {round(float(np.mod(p["x"]["theta"], 2 * np.pi)), 9) % round(2 * np.pi, 9) for p in points}
    assert angles == {0.0, round(np.pi, 9)}


def test_equilibrium_holding_torque(capsys):
    code, out, _ = run(capsys, "equilibrium", "pendulum", "--fix", "theta=0.3,theta_dot=0", "--json")
    (point,) = json.loads(out)["equilibria"]
    assert code == 0 and point["method"] == "holding-torque"
    assert point["u"]["tau"] == pytest.approx(9.81 * np.sin(0.3), rel=1e-14)  # m g l sin(theta)


def test_linearize_json_contract_and_holding_input(capsys):
    code, out, _ = run(capsys, "linearize", "pendulum", "--at", "theta=pi/4", "--json")
    data = json.loads(out)
    assert code == 0
    for key in ("states", "inputs", "outputs", "x", "u", "A", "B", "C", "D", "eigenvalues", "method"):
        assert key in data
    assert data["A"][1][0] == pytest.approx(-9.81 * np.cos(np.pi / 4), abs=1e-13)  # exact
    assert data["u"] == [pytest.approx(9.81 * np.sin(np.pi / 4), rel=1e-14)]  # the holding torque
    assert data["method"] == "manipulator"
    code, out, _ = run(capsys, "linearize", "pendulum", "--at", "theta=pi/4,tau=0", "--json")
    assert json.loads(out)["u"] == [0.0]  # a given input is kept


def test_equilibrium_failure_is_a_numerical_error(capsys, tmp_path):
    model = tmp_path / "none.yaml"
    model.write_text("kind: first_order\nstates: [x]\ndynamics: {x: x**2 + 1}\n")
    code, out, err = run(capsys, "equilibrium", str(model))
    assert code == 1 and out == "" and "best residual" in err and err.count("\n") == 1


def test_validity_on_the_hanging_pendulum(capsys, tmp_path):
    code, out, _ = run(capsys, "validity", "pendulum", "--json", "--plot", str(tmp_path / "v.png"))
    data = json.loads(out)
    assert code == 0
    for key in ("L", "L_max", "exponent", "radius", "tolerance", "sim_radius", "method", "radii", "errors"):
        assert key in data
    # sin is odd: at theta = 0 the remainder of the linear model is g rho^3 / 6 (exponent 3, L = 9.81 / 6)
    assert data["exponent"] == pytest.approx(3.0, abs=0.05) and data["L"] == pytest.approx(9.81 / 6, rel=0.02)
    assert (tmp_path / "v.png").exists()


# --- chains and URDF ---------------------------------------------------------------------------------


def test_show_prints_mass_coriolis_and_gravity_terms(capsys):
    code, out, _ = run(capsys, "show", "pendulum")
    assert code == 0
    assert "M(q) =\n[ 2  ]\n[l *m]" in out and "g(q) =\n[g*l*m*sin(theta)]" in out and "C(q, q') q' =\n[0]" in out
    assert "derived  I = l**2*m" in out  # the catalog's I = m l^2, substituted


def test_chain_example_loads_simulates_and_holds(capsys):
    arm = str(EXAMPLES / "two_link_arm.yaml")
    code, out, _ = run(capsys, "simulate", arm, "--t-final", "0.5", "--x0", "shoulder=0.5", "--method", "rk4",
                       "--dt", "1e-3")
    assert code == 0 and "final state" in out
    code, out, _ = run(capsys, "equilibrium", arm, "--fix", "shoulder=0.3,elbow=-0.4,shoulder_dot=0,elbow_dot=0",
                       "--json")
    (point,) = json.loads(out)["equilibria"]
    # gravity-holding torques of the arm (m1 = 2, lc1 = 0.5, m2 = 1, l1 = 1, lc2 = 0.4, g = 9.81, joints
    # about -y so that positive angles raise the arm): g2 = m2 g lc2 cos(q1 + q2),
    # g1 = (m1 lc1 + m2 l1) g cos(q1) + g2
    g2 = 1.0 * 9.81 * 0.4 * np.cos(0.3 - 0.4)
    g1 = (2.0 * 0.5 + 1.0 * 1.0) * 9.81 * np.cos(0.3) + g2
    assert point["u"]["shoulder_tau"] == pytest.approx(g1, rel=1e-12)
    assert point["u"]["elbow_tau"] == pytest.approx(g2, rel=1e-12)


def test_convert_writes_a_chain_file_with_the_same_dynamics(capsys, tmp_path):
    urdf = Path(__file__).resolve().parents[2] / "examples" / "three_dof_arm.urdf"
    target = tmp_path / "arm.yaml"
    code, out, err = run(capsys, "convert", str(urdf), "--to", str(target))
    assert code == 0 and err == "" and f"wrote {target}" in out
    from robodyn import load
    from robodyn.mechanisms.urdf.chain import chain_from_urdf

    converted, direct = load(target), chain_from_urdf(urdf)
    x = np.linspace(-0.5, 0.5, direct.n_states)
    np.testing.assert_array_equal(converted.f(0.0, x), direct.f(0.0, x))
    code, _, err = run(capsys, "convert", str(urdf), "--to", str(tmp_path / "arm.txt"))
    assert code == 2 and "name a .yaml file" in err and len(err.strip().splitlines()) == 1
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='r'><link name='a'>", encoding="utf-8")
    code, _, err = run(capsys, "convert", str(bad), "--to", str(tmp_path / "never.yaml"))
    assert code == 2 and "malformed XML" in err and not (tmp_path / "never.yaml").exists()


# --- a user report: derived parameters, show labels, the simulate summary, equilibria, operating points --------
def test_show_mechanical_labels_damping_and_stiffness(capsys):
    code, out, _ = run(capsys, "show", "joint")
    assert code == 0
    assert "B q' (damping) =\n[b*q_dot]" in out and "K q (stiffness) =\n[k*q]" in out and "F u =\n[u]" in out
    assert "C(q, q') q'" not in out and "g(q)" not in out  # b q' is not Coriolis, k q is not gravity


def test_param_moves_a_derived_parameter(capsys):
    code, out, _ = run(capsys, "linearize", "pendulum", "--at", "theta=0", "--param", "l=0.5", "--json")
    assert code == 0 and json.loads(out)["A"][1][0] == pytest.approx(-9.81 / 0.5, rel=1e-14)  # I = m l^2 = 0.25
    code, out, _ = run(capsys, "simulate", "pendulum", "--t-final", "1", "--x0", "theta=0.1", "--param", "l=0.5")
    assert code == 0
    final = float(out.split("final state: theta = ")[1].split(",")[0])
    # small angle: omega = sqrt(g / l) = 4.43 (with a stale I = 1 it would be sqrt(g l) = 2.21: final -0.060)
    assert final == pytest.approx(0.1 * math.cos(math.sqrt(9.81 / 0.5)), abs=1e-3)
    code, _, err = run(capsys, "simulate", "pendulum", "--t-final", "1", "--param", "I=2")
    assert code == 2 and "'I' is derived (I = l**2*m)" in err


def test_simulate_summary_of_the_exact_path(capsys):
    code, out, _ = run(capsys, "simulate", "joint", "--t-final", "1", "--x0", "q=0.1", "--method", "exact")
    assert code == 0
    first = out.splitlines()[0]
    assert "exact (matrix exponential)" in first and "evaluations" not in first and "compile" not in first


def test_simulate_summary_says_when_the_kernel_came_from_the_cache(tmp_path):
    """Two processes on one cache: the second loads the machine code and compiles nothing."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "ROBODYN_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "robodyn.cli", "simulate", "joint", "--t-final", "1", "--method", "heun",
            "--dt", "0.01"]
    first, second = (subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
                     for _ in range(2))
    assert first.returncode == second.returncode == 0
    assert "compile " in first.stdout and "cache" not in first.stdout.splitlines()[0]
    assert "kernel loaded from cache in " in second.stdout and "compile " not in second.stdout


def test_equilibrium_lists_plus_and_minus_pi_once_and_never_minus_zero(capsys):
    code, out, _ = run(capsys, "equilibrium", "pendulum", "--fix", "tau=-0", "--starts", "16")
    assert code == 0
    assert out.count("operating point") == 2 and "theta = 3.141592654" in out and "-3.14" not in out
    assert "= -0\n" not in out and not out.rstrip().endswith("-0")
    code, out, _ = run(capsys, "equilibrium", "pendulum", "--fix", "tau=-0", "--json")
    assert code == 0 and "-0.0" not in out


def test_linearize_at_fills_the_point_as_python_does(capsys):
    from robodyn.linearization.linearize import operating_point

    code, out, _ = run(capsys, "linearize", "pendulum", "--at", "theta=0.3", "--json")
    assert code == 0
    data = json.loads(out)
    pendulum = robodyn.load("pendulum")
    x, u = operating_point(pendulum, {"theta": 0.3})
    assert data["x"] == x.tolist() == [0.3, 0.0] and data["u"] == u.tolist()
    assert data["u"][0] == pytest.approx(9.81 * math.sin(0.3), rel=1e-14)  # the holding torque m g l sin(theta)
    assert data["A"] == robodyn.linearize(pendulum, {"theta": 0.3}, "hold").A.tolist()



def test_demo_names_each_report_once(capsys, tmp_path):
    """Issue 23: the summary table and the lines after it both printed the reports' paths."""
    code, out, _ = run(capsys, "demo", "--out", str(tmp_path / "out"))
    assert code == 0
    for name in ("pendulum", "joint"):
        assert out.count(str(tmp_path / "out" / name / "report.html")) == 1


def test_the_command_table_names_what_each_module_adds():
    """main builds only the named command's parser (from its module): the table must say what each module adds."""
    import argparse
    import importlib

    from robodyn.cli.main import COMMANDS, build_parser

    def choices(parser: argparse.ArgumentParser) -> list[str]:
        return list(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)

    for module, names in COMMANDS:
        parser = argparse.ArgumentParser()
        importlib.import_module(f"robodyn.cli.{module}").add_commands(parser.add_subparsers())
        assert choices(parser) == list(names), module
        assert choices(build_parser(names[-1])) == [names[-1]]  # only the named command is built
    assert choices(build_parser()) == [name for _, names in COMMANDS for name in names]
    assert choices(build_parser("no-such-command")) == choices(build_parser())  # argparse names the choices


def test_an_unknown_command_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["simulat", "pendulum"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "simulate" in error and "sweep" in error and "export" in error


def test_modes_of_a_free_body_without_a_point_start_from_no_rotation(capsys, tmp_path):
    """Defect: the default point of a model on a moving base was the zero state, a quaternion of norm 0 (refused):
    its rotation left out is none. A free box: every eigenvalue 0 (nothing but gravity, no stiffness)."""
    box = tmp_path / "box.yaml"
    box.write_text("name: box\nkind: chain\nbase: floating\njoints: []\nlinks:\n"
                   "  - {name: body, mass: 2.0, inertia: {ixx: 0.1, iyy: 0.2, izz: 0.3}}\n")
    code, out, err = run(capsys, "modes", str(box), "--json")
    assert code == 0, err
    data = json.loads(out)
    (mode,) = data["modes"]  # the double integrator of 6 tangent coordinates: one eigenvalue 0 of multiplicity 12
    assert mode["eigenvalue"] == [0.0, 0.0] and mode["multiplicity"] == 12 and "base_rx" in mode["shape"]


def test_equilibria_of_a_continuous_family_are_listed_once(capsys):
    """Defect: the URDF arm's rest points were listed once per random start at random base yaws (gravity does not
    depend on the yaw): one representative per family (yaw 0), said to be continuous, with the count found."""
    arm = str(Path(__file__).resolve().parents[2] / "examples" / "three_dof_arm.urdf")
    fix = "shoulder_pitch=0.3,elbow_pitch=-0.4,base_yaw_dot=0,shoulder_pitch_dot=0,elbow_pitch_dot=0"
    code, out, _ = run(capsys, "equilibrium", arm, "--fix", fix, "--starts", "6", "--json")
    data = json.loads(out)
    assert code == 0 and len(data["equilibria"]) == len(data["families"]) == 1
    (point,), (family,) = data["equilibria"], data["families"]
    assert family == {"continuous": True, "moving": ["base_yaw"], "members": 6}
    assert point["x"]["base_yaw"] == 0.0
    code, out, _ = run(capsys, "equilibrium", arm, "--fix", fix, "--starts", "6")
    assert code == 0 and out.count("operating point") == 1 and "continuous family" in out and "base_yaw" in out
