"""robodyn.view in a real browser (headless Chromium through the DevTools protocol): the stock Panda and UR5 open
without console errors and without one request; a marker at fk's tool position is drawn where the page's camera
projects it and where the tool frame's origin is drawn (2 pixels); a trajectory's instants differ on screen and
place the tool where fk does; the Panda's page is at most 10 MB. The request log is itself checked on a page that
asks for an image from the network."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError
from robodyn.kinematics.frames import kinematics
from robodyn.viewer.view import View, view

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from chromium_session import Chromium, available

from pinocchio_reference import ROBOTS

pytest.importorskip("trimesh")
needs_chromium = pytest.mark.skipif(not available(), reason="chromium is not installed (make test installs it)")
ROBOT_FILES = {"panda": "panda_description/urdf/panda.urdf", "ur5": "ur_description/urdf/ur5_robot.urdf",
               "solo12": "solo_description/robots/solo12.urdf", "talos": "talos_data/robots/talos_reduced.urdf"}
#: the large robots' pages take seconds more (fk compiled for 17 and 52 links, 94 meshes for Talos)
CASES = ["panda", "ur5", pytest.param("solo12", marks=pytest.mark.slow), pytest.param("talos", marks=pytest.mark.slow)]
PIXELS = 2.0  # the bound between a marker's projection and where it is drawn


def _robot(name: str) -> robodyn.Model:
    path = None if ROBOTS is None else ROBOTS / ROBOT_FILES[name]
    if path is None or not path.is_file():
        pytest.skip("example-robot-data is not installed")
    return robodyn.load(str(path))


@pytest.fixture(scope="module")
def browser() -> Chromium:
    if not available():
        pytest.skip("chromium is not installed (make test installs it)")
    with Chromium(width=800, height=600) as chromium:
        yield chromium


def _open(browser: Chromium, page: View, folder: Path, name: str = "robot.html") -> None:
    path = page.write(folder / name)
    browser.open(path)
    assert browser.wait_for("window.robodynView && (window.robodynView.rendered >= 1 || window.robodynView.error)")
    assert browser.evaluate("window.robodynView.error") is None
    assert browser.errors() == []
    assert browser.requests() == [path.as_uri()]  # the file itself, nothing else


def _centroid(image: np.ndarray, colour: str) -> np.ndarray:
    """(x, y) mean pixel of the markers' colour (magenta target, cyan tool), pixel centres at +0.5."""
    r, g, b = (image[..., k].astype(int) for k in range(3))
    mask = (r > 220) & (g < 40) & (b > 220) if colour == "magenta" else (r < 40) & (g > 170) & (b > 220)
    ys, xs = np.nonzero(mask)
    assert len(xs) > 10, f"no {colour} marker on the screen"
    return np.array([xs.mean() + 0.5, ys.mean() + 0.5])


@needs_chromium
@pytest.mark.parametrize("name", CASES)
def test_the_marker_at_fks_tool_position_is_drawn_where_the_tool_frame_is(browser: Chromium, tmp_path: Path,
                                                                         name: str) -> None:
    model = _robot(name)
    kin = kinematics(model)
    q = np.linspace(0.3, -0.6, len(kin.coordinates))
    tool = kin.position(q, kin.default_frame)
    page = view(model, at=q, target=tool)
    _open(browser, page, tmp_path)
    browser.evaluate("window.robodynView.toggle('frames', true)")
    projected = np.array(browser.evaluate(f"window.robodynView.project({tool.tolist()})"))
    drawn = np.array(browser.evaluate("window.robodynView.toolPosition()"))
    np.testing.assert_allclose(drawn, tool, atol=1e-6)  # the page's poses are fk's, as float32 (1 m: 6e-8)
    target = _centroid(browser.screenshot(), "magenta")
    assert np.linalg.norm(target - projected) <= PIXELS
    browser.evaluate("window.robodynView.toggle('target', false)")
    frame = _centroid(browser.screenshot(), "cyan")  # the tool frame's origin, drawn from the scene graph
    assert np.linalg.norm(frame - projected) <= PIXELS and np.linalg.norm(frame - target) <= PIXELS


@needs_chromium
def test_a_trajectory_plays_at_the_display_rate_and_its_instants_are_fks(browser: Chromium, tmp_path: Path) -> None:
    model = _robot("panda")
    kin = kinematics(model)
    n = len(kin.coordinates)
    t = np.linspace(0.0, 10.0, 10_001)  # 10 s at 1 kHz
    q = np.zeros((len(t), n))
    q[:, 0] = 1.2 * np.sin(0.3 * t)
    q[:, 1] = -0.5 * t / 10
    run = SimpleNamespace(t=t, x=np.hstack([q, np.zeros_like(q)]), states=model.states)
    page = view(model, trajectory=run)
    assert len(page.scene.times) == 601  # decimated to 60 instants a second
    _open(browser, page, tmp_path)
    browser.evaluate("window.robodynView.toggle('com', true)")
    shots = []
    for index in (0, 300, 600):
        browser.evaluate(f"window.robodynView.setTime({index})")
        instant = page.scene.times[index]
        expected = kin.position(np.interp(instant, t, q[:, 0]) * np.eye(n)[0] + np.interp(instant, t, q[:, 1])
                                * np.eye(n)[1], kin.default_frame)
        np.testing.assert_allclose(browser.evaluate("window.robodynView.toolPosition()"), expected, atol=1e-6)
        assert page.scene.com is not None  # the centre of mass follows the instant (float32 in the page)
        np.testing.assert_allclose(browser.evaluate("window.robodynView.comPosition()"), page.scene.com[index],
                                   atol=1e-6)
        shots.append(browser.screenshot().astype(int))
    for a, b in ((0, 1), (1, 2)):
        changed = np.abs(shots[a] - shots[b]).sum(axis=2) > 30
        assert changed.sum() > 500  # the arm moved on the screen
    assert browser.evaluate("document.getElementById('robodyn-play').hidden") is False
    assert browser.evaluate("document.getElementById('robodyn-plot').clientHeight") > 100  # the run plotted


@needs_chromium
def test_the_request_log_catches_a_page_that_asks_the_network(browser: Chromium, tmp_path: Path) -> None:
    page = tmp_path / "asks.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://example.com/robot.png"></body></html>')
    browser.open(page)
    assert "http://example.com/robot.png" in browser.requests()


def test_the_panda_page_with_meshes_is_at_most_10_mb(tmp_path: Path) -> None:
    page = view(_robot("panda"))
    assert len(page.html.encode("utf-8")) <= 10_000_000
    written = page.write(tmp_path / "panda.html")
    assert written.read_bytes() == page.html.encode("utf-8")
    assert page._repr_html_().startswith("<iframe srcdoc=") and "<script" not in page._repr_html_()


def test_view_checks_its_arguments() -> None:
    model = robodyn.load("two_link_arm")
    with pytest.raises(InputError, match="not both"):
        view(model, trajectory=SimpleNamespace(t=[0.0], x=[[0, 0, 0, 0]], states=model.states), at=[0, 0])
    with pytest.raises(InputError, match="target"):
        view(model, target=[1.0, 2.0])
    with pytest.raises(InputError, match="no states"):
        view(model, trajectory=SimpleNamespace(t=[0.0], x=[[0.0]], states=("other",)))
    with pytest.raises(InputError, match="no robot file"):
        view(model, collision=True)
    page = view(model, at={"shoulder": 0.5})
    np.testing.assert_allclose(page.scene.poses[0, -1, 9:],
                               kinematics(model).position([0.5, 0.0], page.scene.links[-1]), atol=1e-12)


def test_a_diagrams_robot_block_is_drawn_with_its_meshes_under_its_prefix() -> None:
    panda = _robot("panda")
    diagram = robodyn.Diagram({"arm": panda}, [], inputs={u: f"arm.{u}" for u in panda.inputs},
                              outputs={"q1": f"arm.{panda.outputs[0]}"}, name="panda_in_a_diagram")
    page = view(diagram, at={f"arm.{panda.states[0]}": 0.4})
    alone = view(panda, at={panda.states[0]: 0.4})
    assert page.scene.links == tuple(f"arm.{link}" for link in alone.scene.links)
    assert [v.link for v in page.scene.geometry.visuals] == [f"arm.{v.link}" for v in alone.scene.geometry.visuals]
    np.testing.assert_allclose(page.scene.poses, alone.scene.poses, atol=1e-15)


def test_a_urdf_without_shapes_is_drawn_from_its_frames() -> None:
    model = robodyn.load(str(Path(__file__).resolve().parents[2] / "examples" / "two_link_arm.urdf"))
    shapes = {v.shape for v in view(model).scene.geometry.visuals}
    assert shapes == {"capsule", "sphere"}


def test_a_trajectory_file_is_read_by_its_path(tmp_path: Path) -> None:
    model = robodyn.load("two_link_arm")
    run = robodyn.simulate(model, 1.0, {"shoulder": 0.5})
    run.to_csv(tmp_path / "run.csv")
    from_file, from_run = view(model, trajectory=tmp_path / "run.csv"), view(model, trajectory=run)
    np.testing.assert_allclose(from_file.scene.poses, from_run.scene.poses, atol=1e-9)  # the CSV's 17 digits


@needs_chromium
def test_the_notebook_display_draws_the_robot_inside_its_iframe(browser: Chromium, tmp_path: Path) -> None:
    notebook = tmp_path / "notebook.html"
    notebook.write_text("<!DOCTYPE html><html><body style='margin:0'>"
                        + view(robodyn.load("two_link_arm"), at=[0.6, -0.9])._repr_html_() + "</body></html>")
    browser.open(notebook)
    blue = 0
    for _ in range(100):  # the iframe's page draws after its own load: wait for the arm's colour to appear
        image = browser.screenshot().astype(int)
        r, g, b = image[..., 0], image[..., 1], image[..., 2]
        blue = int(((b > 150) & (b > r + 60) & (g > r + 20)).sum())  # the capsules' (0.35, 0.55, 0.8), shaded
        if blue > 200:
            break
    assert blue > 200
    assert browser.errors() == [] and browser.requests() == [notebook.as_uri()]


# --- the pictures of docs/viewer.md, taken here ---------------------------------------------------------------------
DOCS_FIGURES = Path(__file__).resolve().parents[2] / "docs" / "figures"
#: robot -> (its SRDF in example-robot-data, the pose named there): the Panda ready, solo12 standing, Talos half-sitting
POSES = {"panda": ("panda_description/srdf/panda.srdf", "default"),
         "solo12": ("solo_description/srdf/solo.srdf", "standing"),
         "talos": ("talos_data/srdf/talos.srdf", "half_sitting")}
PICTURES = ["panda", pytest.param("solo12", marks=pytest.mark.slow), pytest.param("talos", marks=pytest.mark.slow)]
PICTURE_BYTES = 150_000  # a picture in the repository stays small
#: pixels that may differ between the stored picture and the page drawn now: SwiftShader's rasterization of the same
#: scene differs by a pixel along some edges between Chromium versions; a moved link changes far more (> 2 %)
PICTURE_CHANGE = 0.01


def _pose(name: str, coordinates: tuple[str, ...]) -> dict[str, float]:
    """The pose ``POSES[name]`` from the robot's SRDF, for the joints the model has as coordinates."""
    import xml.etree.ElementTree as ET

    assert ROBOTS is not None
    srdf, state = POSES[name]
    (group,) = [g for g in ET.parse(ROBOTS / srdf).getroot().iter("group_state") if g.get("name") == state]
    pose = {j.get("name"): float(j.get("value", "nan")) for j in group.iter("joint") if j.get("name") in coordinates}
    assert len(pose) >= 7
    return pose


def _palette_png(image: np.ndarray) -> bytes:
    """``image`` as a PNG of 256 colours (the pictures are flat shading on a plain background)."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).quantize(256, method=Image.Quantize.MEDIANCUT).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


@needs_chromium
@pytest.mark.parametrize("name", PICTURES)
def test_the_docs_pictures_are_what_the_page_draws(browser: Chromium, tmp_path: Path, name: str) -> None:
    """docs/figures/viewer_<robot>.png is the page's own screenshot (``ROBODYN_DOCS_FIGURES=write`` takes it again),
    and fk's tool position falls on the robot drawn."""
    model = _robot(name)
    kin = kinematics(model)
    pose = _pose(name, kin.coordinates)
    _open(browser, view(model, at=pose), tmp_path)
    browser.evaluate("window.robodynView.bare()")
    browser.evaluate("window.robodynView.setTime(0)")
    shot = browser.screenshot()
    q = np.array([pose.get(c, 0.0) for c in kin.coordinates])
    x, y = np.array(browser.evaluate(f"window.robodynView.project({kin.position(q, kin.default_frame).tolist()})"))
    background = shot[2, -2].astype(int)  # a corner: the page's background
    robot = np.any(np.abs(shot.astype(int) - background) > 3, axis=2)
    assert 0.03 < robot.mean() < 0.8  # the robot fills part of the picture
    assert robot[int(y) - 3:int(y) + 4, int(x) - 3:int(x) + 4].any()  # the tool is drawn where fk puts it
    _stored_picture(shot, name)


def _stored_picture(shot: np.ndarray, name: str) -> None:
    """docs/figures/viewer_<name>.png is ``shot`` (to SwiftShader's differences), or is taken again from it."""
    import io

    from PIL import Image

    png = _palette_png(shot)
    picture = DOCS_FIGURES / f"viewer_{name}.png"
    if os.environ.get("ROBODYN_DOCS_FIGURES") == "write":
        picture.write_bytes(png)
    assert picture.is_file(), f"{picture} is missing: run this test with ROBODYN_DOCS_FIGURES=write"
    assert len(picture.read_bytes()) <= PICTURE_BYTES
    stored = np.asarray(Image.open(picture).convert("RGB")).astype(int)
    now = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    assert stored.shape == now.shape
    changed = np.mean(np.abs(stored - now).sum(axis=2) > 60)
    assert changed < PICTURE_CHANGE, f"{picture} is stale: run this test with ROBODYN_DOCS_FIGURES=write"


# --- a moving base ----------------------------------------------------------------------------------------------------
def test_a_floating_base_moves_every_link_as_pinocchio_places_it() -> None:
    pin = pytest.importorskip("pinocchio")
    assert ROBOTS is not None
    path = ROBOTS / ROBOT_FILES["solo12"]
    if not path.is_file():
        pytest.skip("example-robot-data is not installed")
    model = robodyn.load(str(path), base="floating")
    t = np.arange(13) / 60  # the display's instants: no interpolation between the samples
    heading = 2.0 * t
    joints = np.tile([0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6], (len(t), 1))
    joints[:, 1] += np.sin(5 * t)
    q = np.column_stack([0.1 * t, 0.05 * t, 0.3 - 0.2 * t, 0.1 * np.sin(t), np.zeros_like(t), np.sin(heading / 2),
                         np.cos(heading / 2), joints])
    q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    run = SimpleNamespace(t=t, x=np.hstack([q, np.zeros((len(t), model.n_states - q.shape[1]))]), states=model.states)
    page = view(model, trajectory=run)
    scene = page.scene
    assert len(scene.times) == len(t)
    reference = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    data = reference.createData()
    assert scene.com is not None and scene.com.shape == (len(t), 3)
    masses = model.base_masses()
    assert masses is not None  # the root link and the rest weigh what Pinocchio's whole robot weighs (round-off)
    assert masses.root + masses.rest == pytest.approx(pin.computeTotalMass(reference), rel=1e-14)
    for k in range(len(t)):
        pin.framesForwardKinematics(reference, data, q[k])
        for j, link in enumerate(scene.links):
            placement = data.oMf[reference.getFrameId(link)]
            np.testing.assert_allclose(scene.poses[k, j, 9:], placement.translation, atol=1e-12)
            np.testing.assert_allclose(scene.poses[k, j, :9], placement.rotation.ravel(), atol=1e-12)
        # the whole robot's centre of mass, root link included: the same masses and centres summed two ways (the
        # twin's plus the root's, placed by the base; Pinocchio's over its free flyer), to round-off on a 0.4 m robot
        np.testing.assert_allclose(scene.com[k], pin.centerOfMass(reference, data, q[k]), atol=1e-12)
    assert 'id="robodyn-com"' in page.html  # the page offers its toggle
    standing = view(model, at={"base_z": 0.3, "FL_HFE": 0.8}).scene
    np.testing.assert_allclose(standing.poses[0, standing.links.index("base_link"), 9:], [0, 0, 0.3], atol=1e-15)


@needs_chromium
def test_a_moving_base_plays_in_the_browser_with_the_signals_chosen(browser: Chromium, tmp_path: Path) -> None:
    assert ROBOTS is not None
    path = ROBOTS / ROBOT_FILES["solo12"]
    if not path.is_file():
        pytest.skip("example-robot-data is not installed")
    model = robodyn.load(str(path), base="floating")
    t = np.linspace(0.0, 1.0, 11)
    x = np.zeros((len(t), model.n_states))
    x[:, model.states.index("base_x")] = 0.5 * t  # the body walks 0.5 m along x, turning about z
    x[:, model.states.index("base_qz")], x[:, model.states.index("base_qw")] = np.sin(t / 2), np.cos(t / 2)
    run = SimpleNamespace(t=t, x=x, y=x, u=np.zeros((len(t), 0)), states=model.states, outputs=model.states,
                          inputs=())
    page = view(model, trajectory=run, plot=["base_x", "base_qz"])
    _open(browser, page, tmp_path)
    tool = page.scene.links.index(page.scene.tool)
    for index in (0, 30, 60):
        browser.evaluate(f"window.robodynView.setTime({index})")
        np.testing.assert_allclose(browser.evaluate("window.robodynView.toolPosition()"),
                                   page.scene.poses[index, tool, 9:], atol=1e-6)  # float32 in the page
    body = page.scene.links.index("base_link")
    assert page.scene.poses[60, body, 9] - page.scene.poses[0, body, 9] == pytest.approx(0.5, abs=1e-9)
    assert browser.evaluate("document.getElementById('robodyn-plot').clientHeight") > 100


# --- contacts: the points and the forces on the robot --------------------------------------------------------------
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


def _standing_solo() -> tuple[robodyn.Model, SimpleNamespace, np.ndarray]:
    """solo12 on a floating base with its feet against the floor, and a run whose outputs carry the feet's forces
    (written here: the view only reads them), with its configurations q (T, 19)."""
    from robodyn.mechanisms.floating.chain import FloatingChain

    assert ROBOTS is not None
    path = ROBOTS / ROBOT_FILES["solo12"]
    if not path.is_file():
        pytest.skip("example-robot-data is not installed")
    robot = robodyn.load(str(path), base="floating")
    normal = np.array([0.0, 0.6, 0.8])  # a tilted floor
    model = FloatingChain(robot.chain, "floating", contacts=[
        {"frame": foot, "name": foot.lower(), "plane": {"point": [0, 0, 0], "normal": [0, 3, 4]}, "stiffness": 1e4,
         "friction": 0.5} for foot in FEET])
    t = np.arange(7) / 60
    q = np.zeros((len(t), 19))
    q[:, 2], q[:, 6] = 0.25 + 0.1 * t, 1.0
    q[:, 7:] = [0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6]
    y = np.zeros((len(t), len(model.outputs)))
    for k, foot in enumerate(FEET):
        name = foot.lower()
        y[:, model.outputs.index(f"{name}_normal_force")] = 20.0 + k - 10 * t
        y[:, model.outputs.index(f"{name}_friction_x")] = 1.0 + k
        y[:, model.outputs.index(f"{name}_friction_z")] = -0.5
    x = np.hstack([q, np.zeros((len(t), model.n_states - 19))])
    run = SimpleNamespace(t=t, x=x, y=y, u=np.zeros((len(t), 0)), states=model.states, outputs=model.outputs,
                          inputs=())
    assert [c.name for c in model.contact_points()] == [foot.lower() for foot in FEET]
    np.testing.assert_allclose(model.contact_points()[0].normal, normal, atol=1e-15)
    return model, run, q


def test_the_contacts_are_drawn_at_the_feet_pinocchio_places_with_the_runs_forces() -> None:
    pin = pytest.importorskip("pinocchio")
    model, run, q = _standing_solo()
    scene = view(model, trajectory=run).scene
    assert scene.contacts == tuple(foot.lower() for foot in FEET)
    assert scene.contact_points is not None and scene.contact_forces is not None
    reference = pin.buildModelFromUrdf(str(model.geometry_file), pin.JointModelFreeFlyer())
    data = reference.createData()
    for k in range(len(run.t)):
        pin.framesForwardKinematics(reference, data, q[k])
        for j, foot in enumerate(FEET):
            np.testing.assert_allclose(scene.contact_points[k, j], data.oMf[reference.getFrameId(foot)].translation,
                                       atol=1e-12)
            force = (20.0 + j - 10 * run.t[k]) * np.array([0.0, 0.6, 0.8]) + [1.0 + j, 0.0, -0.5]
            np.testing.assert_allclose(scene.contact_forces[k, j], force, atol=1e-12)
    still = view(model).scene  # no run: the points only
    assert still.contact_points is not None and still.contact_forces is None


@needs_chromium
def test_the_contacts_forces_are_arrows_in_the_browser(browser: Chromium, tmp_path: Path) -> None:
    model, run, _ = _standing_solo()
    page = view(model, trajectory=run)
    _open(browser, page, tmp_path)
    browser.evaluate("window.robodynView.setTime(3)")
    arrows = browser.evaluate("window.robodynView.contactArrows()")
    scale = browser.evaluate("window.robodynView.contactScale()")
    assert page.scene.contact_points is not None and page.scene.contact_forces is not None
    for j, arrow in enumerate(arrows):
        force = page.scene.contact_forces[3, j]
        np.testing.assert_allclose(arrow[:3], page.scene.contact_points[3, j], atol=1e-6)  # float32 in the page
        np.testing.assert_allclose(arrow[3:6], force / np.linalg.norm(force), atol=1e-5)
        assert arrow[6] == pytest.approx(np.linalg.norm(force) * scale, rel=1e-5)
    browser.evaluate("window.robodynView.toggle('contacts', false)")
    assert browser.evaluate("window.robodynView.contactArrows()") == [None] * 4


def test_a_moving_base_with_other_parameters_shows_its_own_centre_of_mass() -> None:
    """The quadruped of examples/quadruped_standing.yaml with a heavier body and longer legs: the view's centre of
    mass (the twin's at these parameters joined with the root link's) is the floating model's own (its tape's, over
    the free base), to round-off."""
    dog = robodyn.load(str(Path(__file__).resolve().parents[2] / "examples" / "quadruped_standing.yaml"))
    heavy = dog.with_parameters(m_b=12.0, m_s=0.6, l=0.2)
    twin = heavy.fixed_base()
    assert twin is not None and twin.parameters["l"] == 0.2 and heavy.fixed_base() is twin
    at = {"base_x": 0.1, "base_z": 0.3, "base_qy": np.sin(0.1), "base_qw": np.cos(0.1), "lf_hip": 0.4,
          "rh_knee": -1.0}
    scene = view(heavy, at=at).scene
    assert scene.com is not None
    q = {name: at.get(name, 0.0) for name in heavy.coordinates}
    np.testing.assert_allclose(scene.com[0], heavy.center_of_mass(q), atol=1e-12)
    assert not np.allclose(scene.com[0], dog.center_of_mass(q), atol=1e-3)


def test_a_fixed_bases_compliant_contacts_are_drawn_at_their_frames_with_the_runs_forces() -> None:
    """examples/box_on_incline.yaml (a fixed base, two compliant corners): the points are robodyn's fk of the contact
    frames (and the corners' closed form), the forces the run's outputs along the incline's normal plus friction."""
    box = robodyn.load(str(Path(__file__).resolve().parents[2] / "examples" / "box_on_incline.yaml"))
    theta, w, h = box.parameters["theta"], box.parameters["w"], box.parameters["h"]
    normal = np.array([-np.sin(theta), 0.0, np.cos(theta)])
    assert [(c.name, c.frame) for c in box.contact_points()] == [("back", "back"), ("front", "front")]
    np.testing.assert_allclose(box.contact_points()[0].normal, normal, atol=1e-15)
    times = np.arange(13) / 60  # the display's instants: no interpolation between the samples
    run = robodyn.simulate(box, float(times[-1]), {"z": 0.05, "pitch": 0.2}, t_eval=times)
    page = view(box, trajectory=run)
    scene = page.scene
    assert scene.contacts == ("back", "front") and len(scene.times) == len(times)
    assert scene.contact_points is not None and scene.contact_forces is not None
    kin = kinematics(box)
    for k in range(len(times)):
        q = run.x[k, :3]
        x, z, pitch = q
        turn = np.array([[np.cos(pitch), 0, np.sin(pitch)], [0, 1, 0], [-np.sin(pitch), 0, np.cos(pitch)]])
        for j, (c, side) in enumerate(zip(box.contact_points(), (-1.0, 1.0))):
            # fk and the closed form agree to round-off on a 0.2 m box
            np.testing.assert_allclose(scene.contact_points[k, j], kin.position(q, c.frame), atol=1e-12)
            np.testing.assert_allclose(scene.contact_points[k, j], [x, 0, z] + turn @ [side * w / 2, 0, -h / 2],
                                       atol=1e-12)
            force = run.output(f"{c.name}_normal_force")[k] * normal + [
                run.output(f"{c.name}_friction_{axis}")[k] for axis in "xyz"]
            np.testing.assert_allclose(scene.contact_forces[k, j], force, rtol=1e-12, atol=1e-9)  # N, round-off
    assert np.any(scene.contact_forces[:, :, 2] > 0.0)  # the incline pushes the box up at some instant
    assert 'id="robodyn-contacts" checked' in page.html
    steeper = box.with_parameters(theta=0.5).contact_points()  # the planes at the model's own parameters
    np.testing.assert_allclose(steeper[1].normal, [-np.sin(0.5), 0.0, np.cos(0.5)], atol=1e-15)
    assert robodyn.load("pendulum").contact_points() == ()  # a model without contacts draws none


def test_a_chain_files_moving_base_is_drawn_from_its_frames_with_its_contacts() -> None:
    dog = robodyn.load(str(Path(__file__).resolve().parents[2] / "examples" / "quadruped_standing.yaml"))
    twin = dog.fixed_base()
    assert twin is not None and dog.kinematics() is None  # the moving base has no frames of its own
    legs = {f"{leg}_{joint}": angle for leg in ("lf", "rf", "lh", "rh") for joint, angle in (("hip", 0.6),
                                                                                                 ("knee", -1.2))}
    heading = 0.4
    page = view(dog, at={"base_x": 0.2, "base_z": 0.274, "base_qz": np.sin(heading / 2),
                         "base_qw": np.cos(heading / 2), **legs})
    kin = kinematics(twin)
    q = np.array([legs.get(c, 0.0) for c in kin.coordinates])
    turn = np.array([[np.cos(heading), -np.sin(heading), 0], [np.sin(heading), np.cos(heading), 0], [0, 0, 1]])
    assert page.scene.contact_points is not None and page.scene.contact_forces is None
    for j, contact in enumerate(dog.contact_points()):  # the feet: the twin's fk turned and moved by the base
        expected = turn @ kin.position(q, contact.frame) + [0.2, 0.0, 0.274]
        np.testing.assert_allclose(page.scene.contact_points[0, j], expected, atol=1e-12)
    assert {v.shape for v in page.scene.geometry.visuals} == {"capsule", "sphere"}
    assert 'id="robodyn-contacts" checked' in page.html


@needs_chromium
def test_the_standing_quadrupeds_picture_shows_its_feet_and_their_forces(browser: Chromium, tmp_path: Path) -> None:
    """docs/figures/viewer_quadruped.png: examples/quadruped_standing.yaml dropped 1 cm, after 0.3 s, its feet's
    contact points (green, drawn over the legs) where the page's camera projects them, and their forces."""
    dog = robodyn.load(str(Path(__file__).resolve().parents[2] / "examples" / "quadruped_standing.yaml"))
    legs = ("lf", "rf", "lh", "rh")
    start = {"base_z": 0.274, **{f"{leg}_hip": 0.6 for leg in legs}, **{f"{leg}_knee": -1.2 for leg in legs}}
    run = robodyn.simulate(dog, 0.3, start, rtol=1e-6, atol=1e-8)
    page = view(dog, trajectory=run)
    _open(browser, page, tmp_path)
    browser.evaluate("window.robodynView.bare()")
    last = len(page.scene.times) - 1
    browser.evaluate(f"window.robodynView.setTime({last})")
    shot = browser.screenshot()
    assert page.scene.contact_points is not None and page.scene.contact_forces is not None
    assert np.all(page.scene.contact_forces[last, :, 2] > 10)  # standing: every foot pushed up by the floor
    arrows = browser.evaluate("window.robodynView.contactArrows()")
    assert all(arrow is not None and arrow[5] > 0.9 for arrow in arrows)  # drawn, pointing up
    for point in page.scene.contact_points[last]:
        x, y = browser.evaluate(f"window.robodynView.project({point.tolist()})")
        patch = shot[int(y) - 2:int(y) + 3, int(x) - 2:int(x) + 3].astype(int)
        green = (patch[..., 1] > 120) & (patch[..., 0] < 60) & (patch[..., 2] < 120)  # the marker's (0, 160, 80)
        assert green.any()
    _stored_picture(shot, "quadruped")
