"""Physical plausibility, checked one way for every kind (robodyn.model.plausibility): a mass matrix that is not
positive definite with the defaults, a link that moves no mass, an inertia no rigid body has, mimic couplings
out of bounds and repeated joint names are bad input (exit 2, the file and the culprit named) — and the check
at load evaluates M numerically (robodyn.rigid.crba), so large robots load fast.

Each test names the defect it pins.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from tests.example_files import MODEL_FILES

import robodyn
from cli_run import one_line, run  # tests/cli_run.py
from robodyn.base.errors import InputError, ModelFileError, RobodynWarning
from robodyn.mechanisms.chain.system import ChainSystem
from robodyn.model.plausibility import generic_configuration
from robodyn.rigid.crba import NumericTree

ROOT = Path(__file__).resolve().parents[2]
needs_pinocchio = pytest.mark.skipif(importlib.util.find_spec("pinocchio") is None, reason="needs robodyn[urdf]")
BACKENDS = ["tape", pytest.param("pinocchio", marks=needs_pinocchio)]


def write(path: Path, text: str) -> str:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def link(name: str, mass: float, ixx: float, iyy: float, izz: float) -> str:
    return (f'<link name="{name}"><inertial><mass value="{mass}"/><inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" '
            f'iyz="0" izz="{izz}"/></inertial></link>')


JOINT = ('<joint name="{0}" type="revolute"><parent link="{1}"/><child link="{2}"/><origin xyz="{3} 0 0"/>'
         '<axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="10" velocity="5"/>{4}</joint>')


def urdf(path: Path, *parts: str) -> str:
    path.write_text('<robot name="probe">\n' + "\n".join(parts) + "\n</robot>\n", encoding="utf-8")
    return str(path)


def two_joints(path: Path, second_link: str, *, second_joint: str = "j2", extra: str = "") -> str:
    return urdf(path, link("base", 1, 0.1, 0.1, 0.1), link("l1", 1, 0.1, 0.1, 0.1),
                second_link, JOINT.format("j1", "base", "l1", 0, ""), JOINT.format(second_joint, "l1", "l2", 1, extra))


# --- defect 1: a Lagrangian with negative kinetic energy gave M = [-1] with exit 0 ---------------------------
NEGATIVE = """\
kind: lagrangian
coordinates: [th]
kinetic: -th_dot**2/2
"""


def test_negative_kinetic_energy_is_refused_naming_the_file_the_coordinate_and_the_fix(tmp_path):
    path = write(tmp_path / "negative.yaml", NEGATIVE)
    with pytest.raises(ModelFileError) as caught:
        robodyn.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:3: kinetic") and "[[-1.0]] is not positive definite" in message
    assert "for a motion of th" in message and "check the sign of 'kinetic'" in message


def test_negative_kinetic_energy_exits_2_with_one_line(capsys, tmp_path):
    code, out, err = run(capsys, "show", write(tmp_path / "negative.yaml", NEGATIVE))
    assert code == 2 and out == "" and "the kinetic energy must be positive" in one_line(err)


def test_an_indefinite_kinetic_energy_names_the_coordinates_of_the_bad_motion():
    with pytest.raises(InputError, match=r"lowest eigenvalue -1, for a motion of b\b.*check the sign"):
        robodyn.LagrangianSystem(["a", "b"], None, kinetic="a_dot**2/2 - b_dot**2/2")


def test_mass_matrices_singular_only_at_special_points_still_load(tmp_path):
    """The check is at a generic q (then q = 0): polar coordinates are singular at r = 0 only, and a model valid
    only near its rest pose (1 - 4 r^2 > 0 for |r| < 1/2) is not refused for the generic r = 0.71."""
    polar = robodyn.LagrangianSystem(["r", "th"], None, kinetic="m*(r_dot**2 + r**2*th_dot**2)/2",
                                     parameters={"m": 1.0})
    assert polar.mass_matrix([0.0, 0.0])[1, 1] == 0.0
    local = robodyn.LagrangianSystem(["q", "r"], None, kinetic="(q_dot**2 + (1 - 4*r**2)*r_dot**2)/2")
    assert local.mass_matrix([0.0, 0.71])[1, 1] < 0


def test_an_override_that_makes_the_kinetic_energy_negative_is_bad_input(capsys):
    code, _, err = run(capsys, "show", "pendulum", "--param", "m=-1")
    assert code == 2 and "not positive definite" in one_line(err) and "'m': -1.0" in err


# --- defect 2: a chain link with mass 0 and no inertia gave M singular with exit 0 ----------------------------
MASSLESS = """\
kind: chain
parameters: {m2: 1.0}
joints:
  - {name: j1, parent: base, child: l1, axis: [0, 0, 1]}
  - {name: j2, parent: l1, child: l2, axis: [0, 1, 0], xyz: [1, 0, 0]}
links:
  - {name: base}
  - {name: l1, mass: 1, inertia: {ixx: 0.1, iyy: 0.1, izz: 0.1}}
  - {name: l2, mass: MASS}
"""


def test_a_link_without_mass_or_inertia_is_refused_naming_it_and_its_joint(capsys, tmp_path):
    path = write(tmp_path / "massless.yaml", MASSLESS.replace("MASS", "0"))
    with pytest.raises(ModelFileError) as caught:
        robodyn.load(path)
    message = str(caught.value)
    assert message.startswith(path) and "link 'l2' (moved by joint 'j2') has no mass" in message
    assert "give link 'l2' a mass and an inertia" in message
    code, _, err = run(capsys, "show", path)
    assert code == 2 and "give link 'l2' a mass and an inertia" in one_line(err)


def test_an_override_that_takes_the_mass_away_is_bad_input(tmp_path):
    model = robodyn.load(write(tmp_path / "point.yaml", MASSLESS.replace("MASS", "m2, com: [0.5, 0, 0]")))
    assert model.with_parameters(m2=2.0).parameters["m2"] == 2.0
    with pytest.raises(InputError, match=r"with the parameters \{'m2': 0.0\}.*give link 'l2' a mass"):
        model.with_parameters(m2=0.0)


def test_a_point_mass_on_its_joint_axis_is_refused_with_what_to_check(tmp_path):
    with pytest.raises(ModelFileError, match=r"lowest eigenvalue 0, for a motion of j2\): check the masses and "
                       r"inertias .*a point mass on its joint's axis"):
        robodyn.load(write(tmp_path / "point.yaml", MASSLESS.replace("MASS", "1")))


def test_massless_links_that_move_nothing_alone_are_fine():
    """A massless link between two joints whose outer link has mass, and a massless link whose joint drives a
    motor (rotor inertia on M's diagonal), leave M positive definite."""
    joints = [{"name": "j1", "parent": "base", "child": "a", "axis": [0, 0, 1]},
              {"name": "j2", "parent": "a", "child": "b", "axis": [0, 1, 0]},
              {"name": "j3", "parent": "b", "child": "c", "axis": [1, 0, 0], "xyz": [0.5, 0, 0],
               "rotor_inertia": 0.01}]
    links = [{"name": "base"}, {"name": "a"}, {"name": "b", "mass": 1, "com": [0.3, 0, 0],
                                                "inertia": {"ixx": 0.01, "iyy": 0.01, "izz": 0.01}}, {"name": "c"}]
    assert np.linalg.eigvalsh(ChainSystem(joints, links).mass_matrix([0.3, 0.7, 0.1]))[0] > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_urdf_massless_link_is_named_as_the_file_writes_its_joint(tmp_path, backend):
    path = two_joints(tmp_path / "r.urdf", '<link name="l2"/>', second_joint="elbow.joint")
    with pytest.raises(ModelFileError, match=re.escape(path) + r": .*link 'l2' \(moved by joint 'elbow.joint'\) has "
                       r"no mass, so the mass matrix is singular: give link 'l2' an <inertial>"):
        robodyn.load(path, backend=backend)


# --- defect 3: one inertia rule for chains and URDF, with the same opt-out -----------------------------------
CHAIN_INERTIA = """\
kind: chain
CHECK
joints:
  - {name: j1, parent: base, child: l1, axis: [0, 0, 1]}
links:
  - {name: base}
  - {name: l1, mass: 1, inertia: {ixx: IXX, iyy: IYY, izz: IZZ}}
"""
# principal moments: physical; Corke's Puma link 3 (excess 0.046 of the trace); 50 times the triangle; negative
INERTIAS = {"physical": (0.1, 0.1, 0.15), "slight": (0.066, 0.086, 0.0125), "gross": (0.001, 0.001, 0.1),
            "negative": (0.1, 0.1, -0.01)}
VERDICTS = {"physical": "ok", "slight": "warned", "gross": "refused", "negative": "refused"}


def _verdict(load) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            load()
        except ModelFileError as exc:
            assert "triangle inequality" in str(exc) or "negative principal moment" in str(exc), exc
            return "refused"
    return "warned" if any(issubclass(w.category, RobodynWarning) for w in caught) else "ok"


@pytest.mark.parametrize("case", list(INERTIAS))
def test_chain_files_and_urdf_on_both_backends_judge_an_inertia_alike(tmp_path, case):
    ixx, iyy, izz = INERTIAS[case]
    chain = write(tmp_path / "c.yaml", CHAIN_INERTIA.replace("CHECK", "").replace("IXX", str(ixx))
                  .replace("IYY", str(iyy)).replace("IZZ", str(izz)))
    robot = urdf(tmp_path / "r.urdf", link("base", 1, 0.1, 0.1, 0.1), link("l1", 1, ixx, iyy, izz),
                 JOINT.format("j1", "base", "l1", 0, ""))
    loaders = [lambda: robodyn.load(chain), lambda: robodyn.load(robot)]
    if importlib.util.find_spec("pinocchio") is not None:
        loaders.append(lambda: robodyn.load(robot, backend="pinocchio"))
    assert [_verdict(load) for load in loaders] == [VERDICTS[case]] * len(loaders)


def test_an_inertia_50_times_past_the_triangle_inequality_is_refused_in_a_chain_file(capsys, tmp_path):
    text = CHAIN_INERTIA.replace("IXX", "0.001").replace("IYY", "0.001").replace("IZZ", "0.1")
    path = write(tmp_path / "c.yaml", text.replace("CHECK", ""))
    code, _, err = run(capsys, "show", path)
    assert code == 2 and "link 'l1'" in one_line(err) and "0.001 + 0.001 < 0.1" in err
    assert "check_inertia: false" in err
    kept = robodyn.load(write(tmp_path / "kept.yaml", text.replace("CHECK", "check_inertia: false")))
    assert kept.mass_matrix([0.0])[0, 0] == pytest.approx(0.1, rel=1e-12)  # izz about the joint axis


def test_check_inertia_must_be_a_boolean(tmp_path):
    path = write(tmp_path / "c.yaml", CHAIN_INERTIA.replace("CHECK", "check_inertia: 'no'").replace("IXX", "0.1")
                 .replace("IYY", "0.1").replace("IZZ", "0.1"))
    with pytest.raises(ModelFileError, match=r"check_inertia: must be true or false"):
        robodyn.load(path)


def test_the_puma_still_loads_with_its_published_inertias_and_a_warning():
    with pytest.warns(RobodynWarning, match=r"link 'link3'.*0.0125 \+ 0.066 < 0.086.*kept as given"):
        robodyn.load(ROOT / "tests" / "data" / "puma560.yaml")


# --- defect 4: the load-time check compiled a 200 x 200 tape; fk of a 200-joint robot took > 60 s, 875 MB -----
def long_robot(path: Path, joints: int) -> str:
    parts = [link("l0", 1, 0.01, 0.01, 0.01)]
    for i in range(joints):
        axis = "0 0 1" if i % 2 == 0 else "0 1 0"
        parts.append(link(f"l{i + 1}", 1, 0.01, 0.01, 0.01))
        parts.append(JOINT.format(f"j{i}", f"l{i}", f"l{i + 1}", 0.1, "").replace('xyz="0 0 1"', f'xyz="{axis}"'))
    return urdf(path, *parts)


def test_fk_of_a_200_joint_urdf_in_a_fresh_process_is_fast_and_small(tmp_path):
    """Measured ~1.5-3.5 s and ~190 MB on a cold cache (it was > 60 s and 875 MB): bounds with wide margins."""
    path = long_robot(tmp_path / "long.urdf", 200)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    # the peak resident memory of this process's own address space (VmHWM): ru_maxrss keeps the parent's peak
    # across exec, so under a grown pytest process it reported pytest's size, not robodyn's
    script = ("import json, re\nfrom robodyn.cli import main\n"
              f"code = main(['fk', {path!r}, '--at', 'j0=0.1', '--json'])\n"
              "peak = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
              "print(json.dumps({'code': code, 'rss_kb': peak}))\n")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "ROBODYN_CACHE_DIR": str(cache)})
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stderr[-2000:]
    pose, status = (json.loads(line) for line in done.stdout.splitlines()[-2:])
    assert status["code"] == 0 and elapsed < 20.0 and status["rss_kb"] < 500_000
    # j0 = 0.1 turns the 199 links after the first 0.1 m offset: (0.1 + 19.9 cos 0.1, 19.9 sin 0.1, 0)
    np.testing.assert_allclose(pose["position"], [0.1 + 19.9 * np.cos(0.1), 19.9 * np.sin(0.1), 0.0], atol=1e-9)


def test_loading_a_chain_compiles_nothing():
    model = robodyn.load(ROOT / "examples" / "nine_dof_arm.urdf")
    assert not [key for key in model.memo() if isinstance(key, tuple) and key[0] == "native function"]


@pytest.mark.filterwarnings("ignore::robodyn.RobodynWarning")
@pytest.mark.parametrize("source", ["tests/data/puma560.yaml", "tests/data/panda_chain.yaml",
                                    "examples/nine_dof_arm.urdf", "examples/planar_arm.yaml", "mimic"])
def test_the_numpy_mass_matrix_equals_the_tapes(tmp_path, source):
    if source == "mimic":  # a prismatic joint, and a mimic one coupled to it with a multiplier and an offset
        extra = '<mimic joint="j1" multiplier="-0.5" offset="0.2"/>'
        path = tmp_path / "m.urdf"
        urdf(path, link("base", 1, 0.1, 0.1, 0.1), link("l1", 1, 0.1, 0.2, 0.25),
             link("l2", 2, 0.05, 0.06, 0.07),
             JOINT.format("j1", "base", "l1", 0, "").replace("revolute", "prismatic"),
             JOINT.format("j2", "l1", "l2", 0.4, "").replace('xyz="0 0 1"', 'xyz="0 0.6 0.8"'),
             JOINT.format("j3", "l2", "l1x", 0.3, extra).replace("revolute", "prismatic"),
             link("l1x", 0.5, 0.01, 0.02, 0.02))
        source = str(path)
    model = robodyn.load(source if source.startswith("/") else ROOT / source)
    tree = NumericTree.from_program(model._program, model.parameter_vector())
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = rng.uniform(-1.5, 1.5, model.n_coordinates)
        expected = model.mass_matrix(q)
        np.testing.assert_allclose(tree.mass_matrix(q), expected, rtol=0, atol=1e-13 * np.abs(expected).max())


def test_the_generic_configuration_avoids_zero_and_stays_inside_limits():
    q = generic_configuration(200)
    assert np.all(np.abs(q) > 1e-3) and np.all(np.abs(q) <= np.pi)
    lower, upper = np.array([-0.1, np.nan, 0.0]), np.array([0.1, np.nan, 1e308 * 10])
    bounded = generic_configuration(3, lower, upper)
    assert -0.1 < bounded[0] < 0.1 and bounded[1] == pytest.approx(0.71) and np.isfinite(bounded).all()


# --- defect 5: a mimic multiplier of 1e308 gave exit 1 "mass matrix is singular" ------------------------------
@pytest.mark.parametrize(("attribute", "value", "message"), [
    ("multiplier", "1e308", "multiplier 1e+308 must be a number with 0 < |multiplier| <= 1000"),
    ("multiplier", "0", "multiplier 0 must be"),
    ("offset", "-1e300", "offset -1e+300 must be a number with |offset| <= 1000"),
])
def test_mimic_couplings_out_of_bounds_are_bad_input_naming_the_joint(capsys, tmp_path, attribute, value, message):
    extra = f'<mimic joint="j1" {attribute}="{value}"/>'
    path = two_joints(tmp_path / "r.urdf", link("l2", 1, 0.1, 0.1, 0.1), extra=extra)
    code, _, err = run(capsys, "show", path)
    assert code == 2 and f"{path}: joint 'j2': <mimic> {message}" in one_line(err)


def test_mimic_multiplier_out_of_bounds_in_a_chain_file(capsys, tmp_path):
    text = MASSLESS.replace("MASS", "1").replace("xyz: [1, 0, 0]}", "xyz: [1, 0, 0], mimic: {joint: j1, "
                                                                     "multiplier: 1e308}}")
    text = text.replace("axis: [0, 1, 0]", "axis: [0, 0, 1]")
    code, _, err = run(capsys, "show", write(tmp_path / "mimic.yaml", text))
    assert code == 2 and "joint 'j2': mimic multiplier 1e+308 must be" in one_line(err)


# --- defect 6: duplicate joint names were reported as 'j1_2', a name not in the file --------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_duplicate_joint_names_are_named_as_written_with_their_lines(tmp_path, backend):
    path = two_joints(tmp_path / "r.urdf", link("l2", 1, 0.1, 0.1, 0.1), second_joint="j1")
    with pytest.raises(ModelFileError) as caught:
        robodyn.load(path, backend=backend)
    message = str(caught.value)
    assert f"{path}: joint 'j1' is defined twice (lines 5, 6)" in message and "j1_2" not in message


def test_duplicate_joint_names_exit_2(capsys, tmp_path):
    path = two_joints(tmp_path / "r.urdf", link("l2", 1, 0.1, 0.1, 0.1), second_joint="j1")
    code, _, err = run(capsys, "fk", path)
    assert code == 2 and "joint 'j1' is defined twice" in one_line(err)


# --- every kind: the same check -----------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "kind: mechanical\ncoordinates: [a, b]\ninputs: [u, v]\nmass: [[1, 0], [0, -2]]\n",
    "kind: lagrangian\ncoordinates: [a, b]\nkinetic: (a_dot**2 - 2*b_dot**2)/2\n",
])
def test_file_kinds_report_the_same_way(tmp_path, text):
    path = write(tmp_path / "m.yaml", text)
    with pytest.raises(ModelFileError, match=re.escape(path) + r":\d+: .*the mass matrix \[\[1.0, 0.0\], "
                       r"\[0.0, -2.0\]\] is not positive definite \(lowest eigenvalue -2, for a motion of b\)"):
        robodyn.load(path)


def test_catalog_and_example_models_still_load():
    from robodyn.files import catalog

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RobodynWarning)
        for name in catalog.CATALOG:
            robodyn.load(name)
        for path in [*MODEL_FILES, *sorted((ROOT / "tests" / "data").glob("*.yaml"))]:
            robodyn.load(path)


def test_a_point_masss_rounding_noise_is_zero_and_a_real_negative_moment_is_not():
    """Files exported from CAD write a point mass's zero moments as -5.4e-20 (the stock iCub's r_hip_2): within
    INERTIA_FLOOR (1e-15 kg m^2) of 0 a moment is 0, whatever its own trace; a moment of -1e-9 kg m^2 (a 1 g, 1 mm
    part's size) is still refused."""
    from robodyn.mechanisms.chain.parts import INERTIA_FLOOR, inertia_problem

    noise = np.diag([-5.42101e-20, -5.42101e-20, 0.0])
    assert inertia_problem(noise) is None
    off = np.zeros((3, 3))
    off[0, 2] = off[2, 0] = 1.35525e-20  # the stock iCub's l_ankle_2: moments -1.4e-20, 0, 1.4e-20
    assert inertia_problem(off) is None
    assert inertia_problem(np.diag([-10 * INERTIA_FLOOR, 0.0, 0.0]))[0] == "negative"
    assert inertia_problem(np.diag([-1e-9, 0.0, 0.0]))[0] == "negative"
