"""Hostile input to the small commands (brief H4): ``ik``, ``animate``, ``simulate --output/--plot/--out``,
``verify`` and ``validity --plot``, and model text on the figures of ``robodyn.results.plots``.

The contract: one line on stderr, exit code 2 for bad input, checked before any work (the simulation is
not run: ``robodyn.simulate`` is replaced by a function that fails the test if it is called), nothing
written; free text from a model file (``$\\frac{$`` as a unit or a name) is drawn literally.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib
import pytest

import robodyn
from cli_run import one_line, run  # tests/cli_run.py
from robodyn.results import plots
from robodyn.signals import Sine

ARM = "examples/planar_arm.yaml"  # two joints q1, q2; the tool frame "tip"
DOLLAR = r"$\frac{$"  # math text matplotlib cannot parse: shown literally, or the figure raises when drawn
DOLLAR_JOINT = f"""\
name: 'arm {DOLLAR}'
kind: mechanical
description: 'a {DOLLAR} joint'
coordinates: [q]
parameters: {{J: 0.01, b: 0.1, k: 1.0}}
inputs: [u]
mass: [[J]]
damping: [[b]]
stiffness: [[k]]
units: {{q: '{DOLLAR}', q_dot: '{DOLLAR}/s', u: '{DOLLAR} m'}}
"""


@pytest.fixture
def no_simulation(monkeypatch: pytest.MonkeyPatch) -> None:
    """robodyn.simulate fails the test: what is checked must be checked before the run."""
    def simulate(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated before the arguments were checked")

    monkeypatch.setattr(robodyn, "simulate", simulate)


def dollar_joint(tmp_path: Path) -> str:
    path = tmp_path / "dollar.yaml"
    path.write_text(DOLLAR_JOINT, encoding="utf-8")
    return str(path)


# --- ik ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("starts", ["1000000000", "1000000000000000000"])
def test_ik_with_more_starts_than_the_limit(capsys, starts):
    """Defect: --starts 1000000000 allocated 14.9 GiB (MemoryError); 10**18 gave 'internal error ValueError'."""
    code, out, err = run(capsys, "ik", ARM, "--target", "1,0.5,0", "--starts", starts)
    assert code == 2 and out == ""
    assert f"--starts {starts}: the number of starts must be a whole number from 1 to 100,000" in one_line(err)


def test_ik_with_starts_beyond_the_memory_estimate(capsys, monkeypatch):
    from robodyn.kinematics import ik

    monkeypatch.setattr(ik, "MAX_WORK_BYTES", 2**20, raising=False)
    code, _, err = run(capsys, "ik", ARM, "--target", "1,0.5,0", "--starts", "5000")
    assert code == 2 and "--starts 5000 on 2 joints would need about" in one_line(err) and "give at most" in err


@pytest.mark.parametrize("seed", ["-1", "-100"])
def test_ik_with_a_negative_seed(capsys, seed):
    """Defect: --seed -1 gave 'internal error ValueError: expected non-negative integer'."""
    code, _, err = run(capsys, "ik", ARM, "--target", "1,0.5,0", "--seed", seed)
    assert code == 2 and f"--seed {seed}: the seed must be a whole number >= 0" in one_line(err)


# --- animate ----------------------------------------------------------------------------------------------
def test_animate_into_proc_is_one_line_before_any_work(capsys, no_simulation):
    """Defect: the error was followed by two lines of matplotlib's 'Animation was deleted' warning."""
    code, out, err = run(capsys, "animate", ARM, "--t-final", "0.2", "--out", "/proc/x.gif")
    assert code == 2 and out == "" and "--out /proc/x.gif" in one_line(err)


@pytest.mark.parametrize(("options", "phrase"), [
    (["--fps", "0"], "--fps must be an integer from 1 to 100, got 0"),
    (["--fps", "1000"], "--fps must be an integer from 1 to 100"),
    (["--frames", "1"], "--frames must be an integer from 2 to 10,000"),
    (["--frames", "5000"], "5000 frames at 100 dpi would hold about 4,768 MiB in memory for a GIF"),
    (["--frame", "hand"], "no frame 'hand'"),
])
def test_animate_options_are_checked_before_the_simulation(capsys, tmp_path, no_simulation, options, phrase):
    """Defect: --fps, --frames and --frame were checked after the model had been simulated."""
    out = tmp_path / "arm.gif"
    code, _, err = run(capsys, "animate", ARM, "--t-final", "0.2", "--out", str(out), *options)
    assert code == 2 and phrase in one_line(err)
    assert not list(tmp_path.iterdir())


def test_animate_of_a_model_named_in_math_text(capsys, tmp_path):
    text = Path(ARM).read_text(encoding="utf-8").replace("name: planar_arm", f"name: 'arm {DOLLAR}'")
    (tmp_path / "arm.yaml").write_text(text, encoding="utf-8")
    out = tmp_path / "arm.gif"
    code, _, err = run(capsys, "animate", str(tmp_path / "arm.yaml"), "--t-final", "0.1", "--frames", "2",
                       "--out", str(out))
    assert (code, err) == (0, "") and out.stat().st_size > 0


# --- simulate -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("names", ["", " , ", ","])
def test_simulate_with_an_empty_output_list(capsys, tmp_path, no_simulation, names):
    """Defect: --output "" gave 'internal error ValueError: need at least one array to concatenate'."""
    code, _, err = run(capsys, "simulate", "joint", "--t-final", "1", "--output", names)
    assert code == 2 and "--output" in one_line(err) and "no output named" in err


@pytest.mark.parametrize(("model", "name", "phrase"), [
    (ARM, "hand.position", "--output hand.position: model 'planar_arm' has no frame 'hand'"),
    ("joint", "tool0.position", "--output tool0.position: model 'joint' (mechanical) has no frames"),
    (ARM, "tip.spin", "FRAME.QUANTITY"),
])
def test_simulate_output_names_are_checked_before_the_run(capsys, no_simulation, model, name, phrase):
    """Defect: an unknown frame or quantity in --output was found only after the simulation."""
    code, _, err = run(capsys, "simulate", model, "--t-final", "1", "--output", name)
    assert code == 2 and phrase in one_line(err)


@pytest.mark.parametrize("option", ["--out", "--plot"])
def test_simulate_with_an_empty_path(capsys, no_simulation, option):
    """Defect: --out "" and --plot "" were silently ignored (the run done, nothing written, exit 0)."""
    code, _, err = run(capsys, "simulate", "joint", "--t-final", "1", option, "")
    assert code == 2 and f"{option} '': the path is empty" in one_line(err)


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_simulate_plot_of_a_model_with_math_text_units_and_name(capsys, tmp_path, suffix):
    """Defect: units '$\\frac{$' and a name with '$' made matplotlib's math text raise: 'internal error
    ValueError' from simulate --plot."""
    plot = tmp_path / f"run{suffix}"
    code, out, err = run(capsys, "simulate", dollar_joint(tmp_path), "--t-final", "1", "--input",
                         "u=sine(1, 2, 0, 0)", "--plot", str(plot))
    assert (code, err) == (0, "") and plot.stat().st_size > 0 and f"wrote {plot}" in out


def test_validity_plot_of_a_model_with_math_text_name(capsys, tmp_path):
    plot = tmp_path / "validity.png"
    code, _, err = run(capsys, "validity", dollar_joint(tmp_path), "--plot", str(plot))
    assert (code, err) == (0, "") and plot.stat().st_size > 0


def test_analyze_of_a_model_with_math_text_units_and_name(tmp_path):
    from robodyn.report import analyze

    analyze(robodyn.load(dollar_joint(tmp_path)))


def test_time_response_and_phase_portrait_show_model_text_literally(tmp_path):
    """The labels, legends and titles carry the units and names as written (SVG text, to read them back)."""
    model = robodyn.load(dollar_joint(tmp_path))
    trajectory = robodyn.simulate(model, 0.5, {"q": 0.1}, {"u": Sine(1.0, 2.0)})  # a varying input: a legend
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        for figure in (plots.time_response(trajectory), plots.phase_portrait(model, points=5)):
            buffer = io.StringIO()
            figure.savefig(buffer, format="svg")
            assert f"arm {DOLLAR}" in buffer.getvalue() and f"[{DOLLAR}]" in buffer.getvalue()


def test_literal_escapes_every_dollar_and_keeps_the_text():
    assert plots.literal(DOLLAR) == r"\$\frac{\$"
    assert plots.literal("N m") == "N m"
    assert plots.literal(r"a\$b") == r"a\\$b"  # matplotlib shows it as a\$b: the text as written


# --- verify -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("t_final", "phrase"), [
    ("1e-9", "euler's five step sizes round to 1 different step count"),
    ("0.07", "dop853's five step sizes round to 2 different step counts"),
])
def test_verify_with_a_run_too_short_to_observe_an_order(capsys, tmp_path, t_final, phrase):
    """Defect: --t-final 1e-9 printed a table of FAIL verdicts fitted through five equal step sizes and exited 1
    with nothing on stderr; now bad input, exit 2, naming a run long enough (0.152 s for the joint, whose
    fastest time scale is 1/omega_n = 0.1 s)."""
    code, out, err = run(capsys, "verify", "--t-final", t_final, "--out", str(tmp_path))
    assert code == 2 and out == ""
    assert "too short to observe an order" in one_line(err) and phrase in err and "give t_final = 0.152 or more" in err
    assert not list(tmp_path.iterdir())


def test_verify_at_the_run_it_suggests_passes(capsys, tmp_path):
    code, _, err = run(capsys, "verify", "--t-final", "0.152", "--out", str(tmp_path), "--json")
    assert (code, err) == (0, "")


def test_verify_of_a_model_named_like_a_path_writes_inside_out(capsys, tmp_path):
    """Defect: the plot was DIR/verify_{name}.png with the name as given: 'x/../y' made a folder verify_x and
    wrote DIR/y.png (a longer climb leaves DIR). The name is reduced to one safe file name, and the '$' of the
    title is drawn literally."""
    model = tmp_path / "model.yaml"
    model.write_text(DOLLAR_JOINT.replace(f"name: 'arm {DOLLAR}'", "name: 'x/../y $\\frac{$'"), encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run(capsys, "verify", str(model), "--out", str(out), "--json")
    assert (code, err) == (0, "")
    written = list(out.iterdir())
    assert len(written) == 1 and written[0].is_file() and written[0].name.startswith("verify_x_")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.yaml", "out"]


def test_verify_with_an_empty_out(capsys, tmp_path, monkeypatch):
    """Defect: --out "" wrote verify_joint.png into the working folder."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "verify", "--out", "")
    assert code == 2 and "--out" in one_line(err) and "empty" in err
    assert not list(tmp_path.iterdir())
