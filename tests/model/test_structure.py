"""A model's structure (robodyn.model.structure): the five structural answers as one value, and the path of
``simulate()`` it chooses."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

import robodyn
from robodyn import blocks
from robodyn.integrate import simulate as simulate_module
from robodyn.model.structure import Structure, structure_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _sampled() -> robodyn.Diagram:
    return robodyn.Diagram({"plant": robodyn.load("joint"), "pd": blocks.pid(kp=5.0, kd=0.2, tf=0.02, sample=0.01)},
                           ["pd.u -> plant.u", "plant.q -> pd.y"], inputs={"r": "pd.r"}, outputs={"q": "plant.q"})


@pytest.mark.parametrize(("source", "path", "reasons"), [
    ("pendulum", "plain", []),
    ("four_bar.yaml", "plain", ["it has closed loops or held points (constraints)"]),
    ("quadruped_standing.yaml", "chart", ["its states lie on a manifold (a floating base)"]),
    ("bouncing_ball.yaml", "impacts", ["its velocities jump at impacts"]),
    ("sampled", "sampled", ["it has sampled blocks (discrete states jump at the instants)"]),
])
def test_the_structure_names_the_path_and_what_sensitivities_cannot_integrate(source: str, path: str,
                                                                               reasons: list[str]) -> None:
    model = _sampled() if source == "sampled" else robodyn.load(str(EXAMPLES / source) if "." in source else source)
    structure = structure_of(model)
    assert structure.path == path
    assert structure.obstacles() == reasons
    assert (structure.chart is None) == (model.chart() is None)
    assert (structure.constraints is None) == (model.constraints() is None)
    assert structure.diagram == (source == "sampled")
    assert (structure.drawing() is None) == (source != "sampled")


def test_a_diagrams_drawing_is_its_block_diagram() -> None:
    model = robodyn.load(str(EXAMPLES / "pendulum_lqr_diagram.yaml"))
    structure = structure_of(model)
    assert structure.diagram and structure.path == "plain" and structure.obstacles() == []
    assert structure.drawing() == model.block_diagram()


def test_a_structure_is_frozen() -> None:
    structure = structure_of(robodyn.load("pendulum"))
    with pytest.raises(AttributeError):
        structure.chart = object()  # type: ignore[misc]
    assert isinstance(structure, Structure)


def test_simulate_has_one_path_for_every_structure() -> None:
    assert set(simulate_module._PATHS) == set(typing.get_args(robodyn.model.structure.Path))
