"""``kind: diagram`` model files (robodyn.files.diagram): the same diagram as the Python API, through
the CLI with dotted names, and one located line for every bad file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import ModelFileError
from robodyn.cli import main
from robodyn.model.quantities import parse_assignments

PI = """name: pi_controller
kind: first_order
states: [xc]
inputs: [r, y]
parameters: {a: 2.0, kp: 10.0, ki: 5.0}
dynamics:
  xc: -a*xc + r - y
outputs: {u: kp*(r - y) + ki*xc}
"""
LOOP = """name: joint_pi
kind: diagram
description: the joint closed by a lag-PI controller
blocks:
  plant: joint
  pi: {model: controllers/pi.yaml, parameters: {kp: 20}}
connect:
  - pi.u -> plant.u
  - plant.q -> pi.y
inputs: {r: pi.r}
outputs: {q: plant.q}
"""


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    (tmp_path / "controllers").mkdir()
    (tmp_path / "controllers" / "pi.yaml").write_text(PI)
    (tmp_path / "loop.yaml").write_text(LOOP)
    return tmp_path


def test_the_file_is_the_diagram_of_the_python_api(folder):
    model = robodyn.load(str(folder / "loop.yaml"))
    assert model.kind == "diagram" and model.name == "joint_pi"
    assert model.states == ("plant.q", "plant.q_dot", "pi.xc") and model.inputs == ("r",)
    assert model.parameters["pi.kp"] == 20.0  # the block's parameters as the file set them
    pi = robodyn.load(str(folder / "controllers" / "pi.yaml")).with_parameters(kp=20.0)
    same = robodyn.Diagram({"plant": robodyn.load("joint"), "pi": pi}, ["pi.u -> plant.u", "plant.q -> pi.y"],
                           inputs={"r": "pi.r"}, outputs={"q": "plant.q"})
    x, u = np.array([0.1, -0.2, 0.05]), np.array([0.3])
    np.testing.assert_array_equal(model.f(0.0, x, u), same.f(0.0, x, u))
    ours, theirs = robodyn.linearize(model, x, u), robodyn.linearize(same, x, u)
    np.testing.assert_array_equal(ours.A, theirs.A)
    # the controller's own closed form: d(xc')/dy = -1, du/dy = -kp, so A[1] = [(-k - kp)/J, -b/J, ki/J]
    np.testing.assert_allclose(ours.A[1], [(-1.0 - 20.0) / 0.01, -0.1 / 0.01, 5.0 / 0.01], rtol=1e-14)


def test_the_cli_takes_diagrams_with_dotted_names(folder, capsys):
    path = str(folder / "loop.yaml")
    assert main(["simulate", path, "--t-final", "1", "--x0", "plant.q=0.1", "--param", "pi.kp=30", "--input",
                 "r=1"]) == 0
    assert "final state: plant.q = " in capsys.readouterr().out
    assert main(["linearize", path, "--at", "plant.q=0.2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["states"] == ["plant.q", "plant.q_dot", "pi.xc"] and data["method"] == "diagram"
    assert main(["equilibrium", path, "--target", "q=0.5", "--json"]) == 0
    point = json.loads(capsys.readouterr().out)["equilibria"][0]
    assert point["x"]["plant.q"] == pytest.approx(0.5, abs=1e-10)
    assert main(["show", path]) == 0
    assert "joint_pi (diagram)" in capsys.readouterr().out


def test_dotted_names_in_assignments():
    assert parse_assignments("plant.q=0.1, pi.xc=pi") == {"plant.q": 0.1, "pi.xc": pytest.approx(np.pi)}
    with pytest.raises(robodyn.InputError):
        parse_assignments("plant..q=1")


@pytest.mark.parametrize(("change", "match"), [
    (("plant.q -> pi.y", "plant.qq -> pi.y"), r"loop\.yaml: diagram 'joint_pi': block 'plant' has no output port "
                                              r"'qq' .*did you mean 'q'"),
    (("plant: joint", "plant: jiont"), r"loop\.yaml:5: blocks\.plant: block 'plant': .*jiont"),
    (("parameters: {kp: 20}", "parameters: {kpp: 20}"), r"blocks\.pi: block 'pi': model 'pi_controller' has no "
                                                        r"parameter 'kpp'.*did you mean 'kp'"),
    (("  - plant.q -> pi.y\n", "  - plant.q -> pi.y\n  - 3\n"), r"connect\[2\]: a connection is text"),
    (("inputs: {r: pi.r}", "inputs: {r: pi.r, s: pi.r}"), "input pi.r is driven twice"),
    (("inputs: {r: pi.r}", "inputs: {}"), r"left unconnected: pi\.r"),
    (("connect:", "wires:"), "unknown key 'wires' for kind diagram"),
    (("blocks:\n  plant: joint\n  pi: {model: controllers/pi.yaml, parameters: {kp: 20}}\n", "blocks: {}\n"),
     "needs at least one block"),
])
def test_bad_diagram_files_name_the_file_and_the_key(folder, change, match):
    path = folder / "loop.yaml"
    path.write_text(LOOP.replace(*change))
    with pytest.raises(ModelFileError, match=match):
        robodyn.load(str(path))


def test_a_diagram_that_includes_itself_is_refused(folder, capsys):
    (folder / "a.yaml").write_text("name: a\nkind: diagram\nblocks:\n  inner: b.yaml\n")
    (folder / "b.yaml").write_text("name: b\nkind: diagram\nblocks:\n  outer: a.yaml\n")
    with pytest.raises(ModelFileError, match=r"includes itself \(.*a\.yaml -> .*b\.yaml -> .*a\.yaml\)"):
        robodyn.load(str(folder / "a.yaml"))
    with pytest.raises(SystemExit) as exit_code:
        main(["show", str(folder / "a.yaml")])
    assert exit_code.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


PID_LOOP = """name: loop
kind: diagram
blocks:
  plant: joint
  pid: {model: pid, parameters: {kp: 20, ki: 5}}
connect:
  - pid.u -> plant.u
  - plant.q -> pid.y
inputs: {r: pid.r}
"""


@pytest.mark.parametrize("old, new, match", [
    ("pid.u -> plant.u", "pdi.u -> plant.u", r"unknown block 'pdi'.*did you mean 'pid'"),
    ("model: pid,", "model: pdi,", r"blocks\.pid: block 'pid': unknown model 'pdi'.*library block.*did you mean"),
    ("plant.q -> pid.y", "plant.qq -> pid.y", r"block 'plant' has no output port 'qq'"),
    ("inputs: {r: pid.r}", "inputs: {r: [pid.r, plant.u]}", r"input plant\.u is driven twice"),
    ("inputs: {r: pid.r}", "inputs: {}", r"block inputs left unconnected: pid\.r"),
    ("model: pid, parameters: {kp: 20, ki: 5}", "model: lti, parameters: {A: [[1]], B: [[1, 2]], C: [[1]], "
     "D: [[0]]}", r"block 'pid': D has shape \(1, 1\), expected \(1, 2\)"),
    ("ki: 5}}", "ki: 5}, sample: 0}", r"blocks\.pid: block 'pid': the sample period must be"),
    ("ki: 5}}", "ki: 5}, sample: 0.01}\n  k: {model: gain, sample: 0.015, default: 0}",
     r"the sample period 0\.015 s of block 'k' is not an integer multiple of 0\.01 s \(block 'pid'\)"),
    ("  - plant.q -> pid.y\n", "  - plant.q -> pid.y\n  - k1.y -> k2.u\n  - k2.y -> k1.u\n",
     r"algebraic loop k(1|2) -> k(1|2) -> k(1|2)"),
])
def test_bad_diagrams_on_the_command_line(tmp_path, capsys, old, new, match):
    import re

    from cli_run import one_line, run

    text = PID_LOOP.replace(old, new)
    if "k1" in new:
        text = text.replace("blocks:\n", "blocks:\n  k1: {model: gain}\n  k2: {model: gain}\n")
    assert text != PID_LOOP
    (tmp_path / "bad.yaml").write_text(text)
    code, _, err = run(capsys, "simulate", str(tmp_path / "bad.yaml"), "--t-final", "0.1", "--input", "r=1")
    assert code == 2
    line = one_line(err)
    assert "bad.yaml" in line and re.search(match, line), line


def test_a_block_may_be_written_inside_the_diagram(tmp_path):
    inline = PID_LOOP.replace("  plant: joint\n", "  plant:\n    model:\n      name: lag\n      kind: first_order\n"
                              "      states: [q]\n      inputs: [u]\n      parameters: {a: 2.0}\n"
                              "      dynamics: {q: -a*q + u}\n    parameters: {a: 3.0}\n")
    diagram = robodyn.read_model_text(inline, str(tmp_path / "inline.yaml"))
    assert diagram.states == ("plant.q", "pid.xi") and diagram.parameters["plant.a"] == 3.0


def test_the_bundled_text_of_a_diagram_is_the_whole_system(tmp_path):
    from robodyn.base.errors import InputError
    from robodyn.files.diagram import bundled_text

    (tmp_path / "lag.yaml").write_text("name: lag\nkind: first_order\nstates: [q]\ninputs: [u]\n"
                                       "parameters: {a: 2.0}\ndynamics: {q: -a*q + u}\n")
    text = PID_LOOP.replace("plant: joint", "plant: lag.yaml")
    (tmp_path / "loop.yaml").write_text(text)
    bundled = bundled_text(text, str(tmp_path / "loop.yaml"))
    assert "lag.yaml" not in bundled and "-a*q + u" in bundled
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    rebuilt = robodyn.read_model_text(bundled, str(elsewhere / "loop.yaml"))  # no block file needed any more
    original = robodyn.load(tmp_path / "loop.yaml")
    x, u = np.array([0.3, 0.1]), np.array([1.0])
    np.testing.assert_array_equal(rebuilt.f(0.0, x, u), original.f(0.0, x, u))
    (tmp_path / "lag.yaml").write_text((tmp_path / "lag.yaml").read_text().replace("a: 2.0", "a: 5.0"))
    assert bundled_text(text, str(tmp_path / "loop.yaml")) != bundled  # a block's edit changes the system's text
    assert bundled_text("name: j\nkind: first_order\nstates: [x]\ndynamics: {x: -x}\n", "j.yaml").startswith("name")
    with pytest.raises(InputError, match="is a robot file"):
        bundled_text(PID_LOOP.replace("plant: joint", "plant: arm.urdf"), str(tmp_path / "loop.yaml"))


def test_a_diagram_of_files_is_swept(tmp_path):
    pytest.importorskip("pyarrow")
    (tmp_path / "lag.yaml").write_text("name: lag\nkind: first_order\nstates: [q]\ninputs: [u]\n"
                                       "parameters: {a: 2.0}\ndynamics: {q: -a*q + u}\n")
    (tmp_path / "loop.yaml").write_text(PID_LOOP.replace("plant: joint", "plant: lag.yaml"))
    table = robodyn.sweep(tmp_path / "loop.yaml", {"pid.kp": [10.0, 20.0]}, 0.5)
    assert len(table) == 2 and "final_plant.q" in table.columns


def test_sample_and_discretization_may_be_given_as_parameters(tmp_path):
    text = PID_LOOP.replace("parameters: {kp: 20, ki: 5}", "parameters: {kp: 20, ki: 5, sample: 0.01, "
                            "discretization: tustin}")
    diagram = robodyn.read_model_text(text, str(tmp_path / "d.yaml"))
    assert diagram.blocks["pid"].sample_period == 0.01
    assert "0.005*r" in diagram.blocks["pid"].show_text()  # Tustin's half step on the integral


ARM_PD = """name: arm_pd
kind: diagram
blocks:
  arm: ARM
  pd_shoulder: {model: pid, parameters: {kp: 40, kd: 8, tf: 0.02}}
  pd_elbow: {model: pid, parameters: {kp: 20, kd: 4, tf: 0.02}}
connect:
  - pd_shoulder.u -> arm.shoulder_tau
  - pd_elbow.u -> arm.elbow_tau
  - arm.shoulder -> pd_shoulder.y
  - arm.elbow -> pd_elbow.y
inputs: {r_shoulder: pd_shoulder.r, r_elbow: pd_elbow.r}
"""


def test_a_block_may_be_an_mjcf_robot_as_it_may_be_a_urdf_one(tmp_path):
    from robodyn.files.loading import model_text
    from robodyn.files.records import model_record_key

    examples = Path(__file__).resolve().parents[2] / "examples"
    models = {}
    for suffix in ("urdf", "xml"):
        (tmp_path / f"arm.{suffix}").write_text((examples / f"two_link_arm.{suffix}").read_text(encoding="utf-8"),
                                                encoding="utf-8")
        (tmp_path / f"loop_{suffix}.yaml").write_text(ARM_PD.replace("ARM", f"arm.{suffix}"), encoding="utf-8")
        models[suffix] = robodyn.load(str(tmp_path / f"loop_{suffix}.yaml"))
    urdf, mjcf = models["urdf"], models["xml"]
    assert mjcf.states == urdf.states and mjcf.inputs == ("r_shoulder", "r_elbow")
    rng = np.random.default_rng(5)
    for _ in range(5):  # the two files describe one arm: the same f, up to the order of floating-point sums
        x, u = rng.uniform(-1, 1, urdf.n_states), rng.uniform(-1, 1, 2)
        np.testing.assert_allclose(mjcf.f(0.0, x, u), urdf.f(0.0, x, u), rtol=1e-12, atol=1e-12)
    x0 = {"arm.shoulder": 0.3, "arm.elbow": -0.4}
    runs = [robodyn.simulate(m, (0.0, 2.0), x0, {"r_shoulder": 0.5, "r_elbow": 0.2}, rtol=1e-10, atol=1e-10)
            for m in (urdf, mjcf)]
    # one right-hand side integrated by one method at 1e-10: the runs agree far below the tolerance's scale
    np.testing.assert_allclose(runs[1].x[-1], runs[0].x[-1], atol=1e-8)
    # an MJCF robot is made of other files too (includes, meshes): its diagram is not recorded, always read whole
    assert model_record_key(*model_text(str(tmp_path / "loop_xml.yaml"))) is None
    assert model_record_key(*model_text(str(tmp_path / "loop_urdf.yaml"))) is not None
