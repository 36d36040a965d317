"""Hostile and broken inputs (issue 11): no silent non-finite results, bounded work, robodyn's own errors.

Each test names the defect it pins. CLI cases check the contract: one line on stderr, exit code 2 (bad
input) or 1 (numerical failure), and nothing at the output path.
"""

from __future__ import annotations

import importlib.util
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robodyn
from cli_run import one_line, run  # tests/cli_run.py
from robodyn.base.errors import InputError, ModelFileError, NumericalError, RobodynError

needs_pinocchio = pytest.mark.skipif(importlib.util.find_spec("pinocchio") is None, reason="needs robodyn[urdf]")


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


BLOW_UP = "kind: first_order\nstates: [x]\ndynamics: {x: x**2}\n"  # x = 1 / (1 - t): infinite at t = 1
ROOT = "kind: first_order\nstates: [x]\ndynamics: {x: sqrt(1 - t)}\n"  # NaN after t = 1


# --- silent wrong results --------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["--t-final", "1000", "--param", "k=-100000", "--x0", "q=1"],
    ["--t-final", "1e300"],
])
def test_exact_path_overflow_is_a_numerical_error_and_writes_nothing(capsys, tmp_path, argv):
    out = tmp_path / "e.csv"
    code, _, err = run(capsys, "simulate", "joint", *argv, "--out", str(out))
    assert code == 1 and not out.exists()
    assert "t = " in one_line(err) and "q = nan" in err


@pytest.mark.parametrize("method", ["lsoda", "radau", "bdf"])
def test_stiff_paths_name_the_time_and_state_of_a_nan(capsys, tmp_path, method):
    out = tmp_path / "s.csv"
    code, _, err = run(capsys, "simulate", write(tmp_path / "root.yaml", ROOT), "--t-final", "2", "--method", method,
                       "--out", str(out))
    assert code == 1 and not out.exists()
    # scipy's paths give the state's values; the compiled radau names the state that is not finite
    assert "t = 1" in one_line(err) and ("x = " in err or "(state x)" in err)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # overflow in x**2, reported as the error
@pytest.mark.parametrize("method", ["lsoda", "radau", "bdf"])
def test_stiff_blow_up_ends_quickly_naming_time_and_state(tmp_path, method):
    model = robodyn.load(write(tmp_path / "blow.yaml", BLOW_UP))
    start = time.perf_counter()
    with pytest.raises(NumericalError, match=r"t = 0?\.9|t = 1\.0.*(x = |\(state x\))"):
        robodyn.simulate(model, 2.0, [1.0], method=method)
    assert time.perf_counter() - start < 30


@pytest.mark.parametrize(("method", "backend"), [("dopri5", "compiled"), ("dopri5", "interpreted"), ("radau", "auto")])
def test_an_event_that_is_nan_is_a_numerical_error(method, backend):
    pendulum = robodyn.load("pendulum")
    with pytest.warns(RuntimeWarning) if backend == "interpreted" else _no_check(), \
            pytest.raises(NumericalError, match=r"sqrt\(theta - 0\.5\)'? is not finite.*t = 0\.3"):
        robodyn.simulate(pendulum, 3.0, {"theta": 1.0}, method=method, backend=backend, events=["sqrt(theta - 0.5)"])


class _no_check:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None


@pytest.mark.parametrize("x0", [[1 + 1j, 0.0], np.array([1j, 0.0]), {"q": 1j}, {"q": [1j, 2.0]}])
def test_a_complex_initial_state_is_refused(x0):
    with pytest.raises(InputError, match=r"real numbers.*complex"):
        robodyn.simulate(robodyn.load("joint"), 1.0, x0)


def test_a_complex_initial_state_on_the_command_line_exits_2(capsys):
    code, _, err = run(capsys, "simulate", "joint", "--t-final", "1", "--x0", "q=1j")
    assert code == 2 and "complex" in one_line(err)


# --- unbounded work ------------------------------------------------------------------------------------
@pytest.fixture
def fifo(tmp_path):
    def make(name: str) -> str:
        path = tmp_path / name
        os.mkfifo(path)
        return str(path)
    return make


@needs_pinocchio
@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="POSIX only")
def test_files_are_checked_before_reading(capsys, tmp_path, fifo):
    for source in ("/dev/zero", fifo("pipe.yaml"), fifo("pipe.urdf")):
        with pytest.raises(ModelFileError, match="not a regular file"):
            robodyn.load(source)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * 1_000_001)
    with pytest.raises(ModelFileError, match="larger than the limit"):
        robodyn.load(str(big))
    big_urdf = tmp_path / "big.urdf"
    big_urdf.write_bytes(b" " * 10_000_001)
    with pytest.raises(ModelFileError, match="larger than the limit"):
        robodyn.load(str(big_urdf))
    for table in ("/dev/zero", fifo("table.csv")):
        code, _, err = run(capsys, "simulate", "pendulum", "--t-final", "1", "--input", f"tau=table({table})")
        assert code == 2 and "not a regular file" in one_line(err)


def test_expansion_is_bounded_before_expand(capsys, tmp_path):
    lagrangian = write(tmp_path / "lag.yaml", "kind: lagrangian\ncoordinates: [th]\nparameters: {a: 1, b: 1, c: 1}\n"
                                              "kinetic: th_dot**2*(1+a+b+c+th)**10000\npotential: th**2\n")
    start = time.perf_counter()
    code, _, err = run(capsys, "show", lagrangian)
    assert code == 2 and "would expand to more than" in one_line(err) and ":4: kinetic" in err
    first_order = write(tmp_path / "pw.yaml", "kind: first_order\nstates: [x]\nparameters: {a: 1, b: 1, c: 1}\n"
                                              "dynamics: {x: (x+a+b+c)**10000}\n")
    model = robodyn.load(first_order)
    assert robodyn.classify(model).linear is False
    assert time.perf_counter() - start < 20


def test_expanded_terms_estimate():
    from robodyn.model.expr import expanded_terms, parse_expression, symbol

    names = {n: symbol(n) for n in "xabc"}
    assert expanded_terms(parse_expression("(x+a)**2", names)) == 3
    assert expanded_terms(parse_expression("(x+a+b+c)**10000", names), 1000) == 1001
    assert expanded_terms(parse_expression("sin((x+a)**3) + x", names)) <= 6


def test_equilibrium_starts_are_capped(capsys):
    code, _, err = run(capsys, "equilibrium", "pendulum", "--starts", "100000000")
    assert code == 2 and "more than 10000" in one_line(err)


def test_classify_is_not_quadratic_in_the_states():
    states = [f"x{i}" for i in range(1000)]
    model = robodyn.SymbolicSystem(states, [], {s: f"-{s}*x{(i + 1) % 1000}" for i, s in enumerate(states)},
                                   name="ring")
    start = time.perf_counter()
    result = robodyn.classify(model)
    assert result.linear is False and time.perf_counter() - start < 10


def test_a_batch_that_would_not_fit_in_memory_is_refused(monkeypatch):
    monkeypatch.setattr("robodyn.integrate.guards._available_memory", lambda: 4e9)
    with pytest.raises(InputError, match=r"1000000 trajectories x 1001 output times need about .* GB"):
        robodyn.simulate(robodyn.load("pendulum"), 1.0, {"theta": np.zeros(10**6)})


# --- wrong exit code, several lines, files left behind ---------------------------------------------------
def test_deeply_nested_yaml(tmp_path):
    for depth in (60, 600):
        path = write(tmp_path / f"deep{depth}.yaml", "a: " + "[" * depth + "]" * depth + "\n")
        with pytest.raises(ModelFileError, match="nested"):
            robodyn.load(path)


def test_a_5000_digit_integer_parameter(capsys, tmp_path):
    digits = "1" + "0" * 5000
    path = write(tmp_path / "k.yaml", f"kind: first_order\nstates: [x]\nparameters: {{k: {digits}}}\n"
                                      "dynamics: {x: -k*x}\n")
    with pytest.raises(ModelFileError, match=r"k\.yaml:3: an integer of 5001 digits"):
        robodyn.load(path)
    code, _, err = run(capsys, "simulate", "joint", "--t-final", "1", "--param", f"k={digits}")
    assert code == 2 and len(one_line(err)) < 1000


def test_integers_above_int64_compile(tmp_path):
    model = robodyn.load(write(tmp_path / "big.yaml", "kind: first_order\nstates: [x]\ndynamics: {x: -x/10**19}\n"))
    trajectory = robodyn.simulate(model, 1.0, [1.0], method="dopri5", backend="compiled")
    assert trajectory.final[0] == pytest.approx(np.exp(-1e-19), rel=1e-12)


URDF_LINK = ('<link name="{}"><inertial><mass value="1"/><inertia ixx="{}" ixy="0" ixz="0" iyy="1" iyz="0" '
             'izz="1"/></inertial></link>')
URDF_JOINT = ('<joint name="{}" type="revolute"><parent link="{}"/><child link="{}"/><axis xyz="0 0 1"/>'
              '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')


def _urdf(links: list[tuple[str, float]], joints: list[tuple[str, str, str]], extra: str = "") -> str:
    body = "".join(URDF_LINK.format(name, ixx) for name, ixx in links)
    return f'<robot name="r"><link name="base"/>{body}{"".join(URDF_JOINT.format(*j) for j in joints)}{extra}</robot>'


@needs_pinocchio
@pytest.mark.parametrize(("links", "joints", "message"), [
    ([("a", 1.0)], [("j", "base", "a"), ("k", "a", "a")], "both its parent and its child"),
    ([("a", 1.0), ("b", 1.0)], [("j", "a", "b"), ("k", "b", "a")], "not connected to the root link"),
    ([("a", -1.0)], [("j", "base", "a")], "negative principal moment -1"),
])
def test_bad_urdf_trees_and_inertias(tmp_path, links, joints, message):
    with pytest.raises(ModelFileError, match=message):
        robodyn.load(write(tmp_path / "r.urdf", _urdf(links, joints)))


@needs_pinocchio
def test_urdfdom_messages_stay_off_stderr(capfd, tmp_path):
    bad_material = '<material name="m"><color rgba="1 1 1 x"/></material>'
    robodyn.load(write(tmp_path / "r.urdf", _urdf([("a", 1.0)], [("j", "base", "a")], bad_material)))
    assert capfd.readouterr().err == ""


def test_out_naming_a_folder_and_paths_under_a_file(capsys, tmp_path):
    folder = tmp_path / "d.csv"
    folder.mkdir()
    code, _, err = run(capsys, "simulate", "joint", "--t-final", "1", "--out", str(folder))
    assert code == 2 and "is a folder" in one_line(err)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run(capsys, "verify", "--out", str(blocker))
    assert code == 2 and "is not a folder" in one_line(err)
    with pytest.raises(InputError, match="is a folder"):
        robodyn.simulate(robodyn.load("joint"), 1.0).to_csv(folder)


def test_verify_with_a_huge_t_final(capsys, tmp_path):
    code, _, err = run(capsys, "verify", "--t-final", "1e300", "--out", str(tmp_path))
    assert code == 2 and "shorter t_final" in one_line(err)
    assert list(tmp_path.iterdir()) == []


def test_a_plot_name_is_checked_before_the_csv_is_written(capsys, tmp_path):
    out = tmp_path / "e.csv"
    code, _, err = run(capsys, "simulate", "joint", "--t-final", "1", "--out", str(out), "--plot",
                       str(tmp_path / "p.jpg"))
    assert code == 2 and "PNG" in one_line(err) and not out.exists()


def test_warnings_do_not_reach_the_command_lines_stderr(capsys, tmp_path):
    code, _, err = run(capsys, "simulate", write(tmp_path / "root.yaml", ROOT), "--t-final", "2", "--method", "bdf")
    assert code == 1 and one_line(err)


def test_a_negative_mass_by_param_is_bad_input(capsys):
    for model, param in (("cart_pole", "m_cart=-1"), ("double_pendulum", "m1=-5"), ("joint", "J=-1")):
        code, _, err = run(capsys, "simulate", model, "--t-final", "1", "--param", param)
        assert code == 2 and "positive definite" in one_line(err)


def test_many_summed_signals_are_not_nesting(capsys):
    signal = "+".join(["step(0.1, 0, 1)"] * 150)
    code, _, err = run(capsys, "simulate", "pendulum", "--t-final", "0.5", "--input", f"tau={signal}")
    assert code == 0 and err == ""
    nested = "(" * 120 + "step(1, 0, 1)" + ")" * 120
    assert run(capsys, "simulate", "pendulum", "--t-final", "0.5", "--input", f"tau={nested}")[0] == 0


@pytest.mark.parametrize("thing", ["joint", 42, None, object()])
@pytest.mark.parametrize("call", [
    lambda m: robodyn.simulate(m, 1.0),
    lambda m: robodyn.classify(m),
    lambda m: robodyn.linearize(m, [0.0, 0.0]),
    lambda m: robodyn.find_equilibrium(m),
    lambda m: robodyn.validity(m, [0.0, 0.0]),
    lambda m: robodyn.verify(m),
    lambda m: robodyn.linearize_trajectory(m, None),
])
def test_the_api_refuses_what_is_not_a_model(thing, call):
    with pytest.raises(InputError, match="expected a robodyn model"):
        call(thing)


@pytest.mark.parametrize("thing", [42, None, object(), b"joint"])
def test_load_refuses_what_is_not_a_path(thing):
    with pytest.raises(InputError):
        robodyn.load(thing)


def test_a_tilde_path_without_a_home(monkeypatch):
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr("pathlib.Path.expanduser", _no_home)
    from robodyn.files.signal_text import parse_input_assignments

    with pytest.raises(InputError, match="home folder is unknown"):
        parse_input_assignments(["tau=table(~/u.csv)"], ["tau"])


def _no_home(self: Path) -> Path:
    raise RuntimeError("Could not determine home directory.")


# --- random input to load() ----------------------------------------------------------------------------
_CHILD = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
import robodyn
from robodyn.base.errors import RobodynError
path = sys.argv[1]
try:
    robodyn.load(path)
except RobodynError:
    pass
print("ok")
"""


def _load_in_a_limited_process(tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    env = {**os.environ, "ROBODYN_DEBUG": ""}
    result = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, timeout=60, env=env,
                            check=False)
    assert result.returncode == 0 and result.stdout.strip() == b"ok", result.stderr.decode()[-2000:]


_yaml_scalars = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=True), st.text(max_size=30),
                          st.sampled_from(["x**2", "sin(q)", "(q+a)**9999", "1e308*1e308", "__import__('os')",
                                           "first_order", "mechanical", "lagrangian", "chain", "q", "qd"]))
_yaml_values = st.recursive(_yaml_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(
        ["kind", "states", "dynamics", "parameters", "inputs", "outputs", "coordinates", "mass", "kinetic",
         "potential", "links", "joints", "q", "x"]), inner, max_size=5)), max_leaves=20)


def _yaml_text(value: object) -> bytes:
    import yaml

    return yaml.safe_dump(value).encode()


_urdf_parts = st.lists(st.sampled_from([
    '<link name="a"/>', '<link name="b">', "</link>", '<inertial><mass value="1"/>',
    '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>', '<mass value="-1"/>',
    '<joint name="j" type="revolute">', '<joint name="k" type="prismatic">', '<joint name="f" type="fixed">',
    '<joint name="c" type="continuous">', "</joint>", '<parent link="a"/>', '<child link="b"/>', '<child link="a"/>',
    '<limit lower="-1" upper="1" effort="1" velocity="1"/>', '<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>',
    '<origin xyz="1 0 0" rpy="0 0 nan"/>', '<link name="base"/>', '<!DOCTYPE r [<!ENTITY e "x">]>', "&e;",
]), max_size=14)


@settings(max_examples=8, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.one_of(
    st.binary(max_size=400).map(lambda b: ("bytes.yaml", b)),
    _yaml_values.map(lambda v: ("random.yaml", _yaml_text(v))),
    _urdf_parts.map(lambda parts: ("random.urdf", ('<robot name="r">' + "".join(parts) + "</robot>").encode())),
))
def test_random_input_to_load_gives_only_robodyn_errors(tmp_path_factory, data):
    name, payload = data
    _load_in_a_limited_process(tmp_path_factory.mktemp("load"), name, payload)


def test_random_input_to_load_in_process():
    """The same contract without a subprocess, on a few fixed hostile texts (fast feedback)."""
    for text in ("kind: [", "!!python/object:os.system x", "kind: first_order\nstates: [x]\ndynamics: {x: x.y}\n",
                 "a: &a [*a]", "\x00\x01"):
        with pytest.raises(RobodynError):
            robodyn.read_model_text(text)
    assert stat.S_ISREG(os.stat(__file__).st_mode)


def test_too_many_output_points_are_refused_before_allocating(capsys):
    code, _, err = run(capsys, "simulate", "joint", "--t-final", "1", "--points", "100000000000")
    assert code == 2 and "GB" in one_line(err)


def test_the_stiff_paths_have_an_evaluation_budget():
    stiff = robodyn.SymbolicSystem(["x"], [], {"x": "-1000*(x - cos(t))"}, name="stiff")
    with pytest.raises(NumericalError, match=r"lsoda: more than 200 evaluations before t = .*\(state x = "):
        robodyn.simulate(stiff, 1000.0, [1.0], method="lsoda", max_steps=100)


def test_a_negative_link_mass_by_param_on_a_chain_is_bad_input(capsys, tmp_path):
    chain = Path(__file__).resolve().parents[1] / "examples" / "planar_arm.yaml"
    code, _, err = run(capsys, "simulate", str(chain), "--t-final", "0.1", "--param", "m1=-1")
    assert code == 2 and "negative mass" in one_line(err)
    code, _, err = run(capsys, "simulate", str(chain), "--t-final", "0.1", "--param", "I2=-0.5")
    assert code == 2 and "negative principal moment" in one_line(err)


def test_no_home_folder_is_bad_input_naming_the_fix(tmp_path):
    script = ("import os, pwd\n"
              "pwd.getpwuid = lambda uid: (_ for _ in ()).throw(KeyError(uid))\n"
              "os.environ.pop('HOME', None); os.environ.pop('XDG_CACHE_HOME', None)\n"
              "os.environ.pop('ROBODYN_CACHE_DIR', None)\n"
              "from robodyn.cli import main\n"
              "raise SystemExit(main(['simulate', 'pendulum', '--t-final', '0.1']))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert "set ROBODYN_CACHE_DIR" in done.stderr and len(done.stderr.strip().splitlines()) == 1
