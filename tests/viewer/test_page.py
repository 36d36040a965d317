"""robodyn.viewer.page: names and colours carrying HTML or script stay text (in the file and in Chromium, where no
script from the model runs); the JSON block reads back exactly; both three.js builds draw the page."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from chromium_session import Chromium, available

import robodyn
from robodyn.base.errors import InputError
from robodyn.viewer.page import LIBRARIES, json_block, library_script, page_html, script_safe
from robodyn.viewer.view import view

pytest.importorskip("trimesh")

HOSTILE = '</script><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">&amp;\u2028'
URDF = """<robot name="{name}">
  <material name="{name}"><color rgba="1 0 0 1"/></material>
  <link name="base"><visual><geometry><box size="0.1 0.1 0.1"/></geometry><material name="{name}"/></visual></link>
  <link name="{name}"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial><visual><origin xyz="0 0 0.2"/><geometry><cylinder radius="0.02" length="0.4"/></geometry></visual>
  </link>
  <joint name="j" type="revolute"><parent link="base"/><child link="{name}"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""


def _hostile_robot(folder: Path) -> robodyn.Model:
    path = folder / "hostile.urdf"
    path.write_text(URDF.format(name=html.escape(HOSTILE, quote=True)))
    return robodyn.load(str(path))


def test_json_block_cannot_end_its_script_and_reads_back_exactly() -> None:
    data = {"name": HOSTILE, "values": [1.5, -2.0], "nested": {"<>": "&"}}
    text = json_block(data)
    assert not re.search(r"[<>&\u2028]", text)
    assert json.loads(text) == data


def test_script_safe_keeps_scripts_inside_their_element() -> None:
    assert "</script" not in script_safe("var s = '</script><b>'; var r = /<\\/SCRIPT>/;").lower()
    for name in LIBRARIES:
        try:
            text = library_script(name)
        except InputError:
            continue  # that package is not installed
        assert "</script" not in text.lower() and len(text) > 100_000
    with pytest.raises(InputError, match="unknown 3-D library"):
        library_script("babylon")


def test_names_from_the_model_are_text_in_the_file(tmp_path: Path) -> None:
    page = view(_hostile_robot(tmp_path)).html
    head, scene = page.split('<script id="robodyn-scene" type="application/json">', 1)
    block = scene.split("</script>", 1)[0]
    assert "<script" not in head and "<img" not in head  # the title is escaped
    assert html.escape(HOSTILE) in head
    assert json.loads(block)["links"][-1] == HOSTILE  # the JSON carries the name itself, escaped for the block
    assert page.count("<script") == 3  # the scene, the library, robodyn's viewer: nothing else opens a script


@pytest.mark.skipif(not available(), reason="chromium is not installed (make test installs it)")
@pytest.mark.parametrize("library", list(LIBRARIES))
def test_no_script_from_the_model_runs_and_each_library_draws_the_page(tmp_path: Path, library: str) -> None:
    try:
        library_script(library)
    except InputError:
        pytest.skip(f"{library} is not installed")
    page = tmp_path / "hostile.html"
    view(_hostile_robot(tmp_path), at=[0.5], library=library, out=page)
    with Chromium(width=640, height=480) as browser:
        browser.open(page)
        assert browser.wait_for("window.robodynView && (window.robodynView.rendered >= 1 || window.robodynView.error)")
        assert browser.evaluate("window.robodynView.error") is None and browser.errors() == []
        assert browser.evaluate("typeof window.pwned") == "undefined"
        assert browser.evaluate("document.title") == f"{HOSTILE} - robodyn"
        assert browser.evaluate("document.getElementById('robodyn-title').textContent") == f"{HOSTILE} - robodyn"
        assert browser.evaluate("document.querySelectorAll('img').length") == 0
        assert browser.evaluate("window.robodynView.links")[-1] == HOSTILE
        assert browser.requests() == [page.as_uri()]
        image = browser.screenshot().astype(int)
        red = (image[..., 0] > 150) & (image[..., 1] < 60) & (image[..., 2] < 60)
        assert red.sum() > 50  # the base's box in its named material's colour


def test_the_page_shows_the_slider_only_for_a_trajectory() -> None:
    scene = {"title": "x", "links": [], "times": [0.0], "poses": {}, "shapes": [], "meshes": [], "missing": [],
             "tool": None, "target": None}
    still, moving = page_html(scene, title="x"), page_html(scene, title="x", trajectory=True, target=True)
    assert 'id="robodyn-play" hidden' in still and 'id="robodyn-play">' in moving
    assert "robodyn-target" in moving and "robodyn-target" not in still
    assert "Content-Security-Policy" in still and "connect-src 'none'" in still
