"""A chain's ball joint (``type: ball``) written in Python or a chain file: its names, inputs and start, the terms a
ball does not take refused naming it, and the dynamics against the same tree's three hinges about orthogonal axes at
the configuration where the two coincide (the ball turned by nothing: its velocity entries are the hinges' rates)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError
from robodyn.mechanisms.chain.system import ChainSystem

LINK = {"mass": 1.2, "com": [0.1, 0.02, -0.3], "inertia": {"ixx": 0.02, "iyy": 0.03, "izz": 0.015, "ixy": 0.001}}
LINKS = [{"name": "base"}, {"name": "arm", **LINK}]
BALL = {"name": "s", "parent": "base", "child": "arm", "type": "ball", "xyz": [0, 0, 0.5], "rpy": [0.1, 0.2, 0.3],
        "damping": 0.3, "rotor_inertia": 0.01}


def test_names_inputs_and_start() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chain = ChainSystem([BALL], LINKS)
    assert chain.coordinates == ("s_qx", "s_qy", "s_qz", "s_qw")
    assert chain.velocities == chain.rates == ("s_wx", "s_wy", "s_wz")
    assert chain.inputs == ("s_tx", "s_ty", "s_tz") and chain.n_velocities == 3 and chain.n_states == 7
    np.testing.assert_array_equal(chain.initial_state(), [0, 0, 0, 1, 0, 0, 0])


def test_at_the_identity_a_ball_is_three_orthogonal_hinges() -> None:
    """z, y, x hinges through the same point with massless links between them, all at angle 0 and at rest: the same
    placement, the hinges' axes the child's, so M and v' (under gravity and torques about the child's axes) agree to
    rounding (measured 1e-16; 1e-13 its scale); moving, the two differ by the hinges' velocity products."""
    ball = ChainSystem([BALL], LINKS)
    hinges = ChainSystem(
        [{**BALL, "name": "hz", "type": "revolute", "axis": [0, 0, 1], "child": "m1"},
         {"name": "hy", "parent": "m1", "child": "m2", "axis": [0, 1, 0], "damping": 0.3, "rotor_inertia": 0.01},
         {"name": "hx", "parent": "m2", "child": "arm", "axis": [1, 0, 0], "damping": 0.3, "rotor_inertia": 0.01}],
        [{"name": "base"}, {"name": "m1"}, {"name": "m2"}, {"name": "arm", **LINK}])
    u = np.array([0.2, -0.3, 0.5])  # torques about the child's x y z
    f_ball = ball.f(0.0, [0, 0, 0, 1, 0, 0, 0], u)
    f_hinges = hinges.f(0.0, np.zeros(6), u[::-1])
    np.testing.assert_allclose(f_ball[4:], f_hinges[3:][::-1], rtol=0, atol=1e-13)
    w = np.array([0.4, -1.1, 0.7])
    np.testing.assert_allclose(ball.f(0.0, [0, 0, 0, 1, *w], u)[:4], [*(0.5 * w), 0.0], rtol=0, atol=1e-15)
    mass_ball = ball.mass_matrix([0, 0, 0, 1])
    np.testing.assert_allclose(mass_ball, hinges.mass_matrix([0, 0, 0])[::-1, ::-1], rtol=0, atol=1e-13)


@pytest.mark.parametrize("term", [{"friction": 0.1}, {"stiffness": 1.0}, {"dh": {"a": 1}}, {"force": "1"}])
def test_terms_a_ball_does_not_take_are_refused_by_name(term: dict[str, object]) -> None:
    with pytest.raises(InputError, match=f"joint 's' is a ball: its {next(iter(term))}"):
        ChainSystem([{**BALL, **term}], LINKS)


def test_mimic_and_frame_outputs_beside_a_ball_are_refused() -> None:
    links = [*LINKS, {"name": "tip", **LINK}, {"name": "tip2", **LINK}]
    joints = [BALL, {"name": "h", "parent": "arm", "child": "tip"},
              {"name": "g", "parent": "arm", "child": "tip2", "mimic": {"joint": "h"}}]
    with pytest.raises(InputError, match="mimic joints are not built beside ball joints"):
        ChainSystem(joints, links)
    with pytest.raises(InputError, match="frame outputs is not built for ball joints yet \\(joint 's'"):
        ChainSystem([BALL], LINKS, outputs={"p": {"frame": "arm", "quantity": "position"}})


def test_a_chain_file_with_a_ball_joint(tmp_path: Path) -> None:
    """A file's ball joint: its names, its three torque inputs and the identity at the start."""
    path = tmp_path / "spherical.yaml"
    path.write_text("kind: chain\nname: spherical\njoints:\n  - {name: s, type: ball, parent: base, child: bob, "
                    "xyz: [0, 0, 1], damping: 0.1}\nlinks:\n  - {name: base}\n  - {name: bob, mass: 1.0, "
                    "com: [0, 0, -0.5], inertia: {ixx: 0.01, iyy: 0.01, izz: 0.002}}\n")
    model = robodyn.load(str(path))
    assert model.states == ("s_qx", "s_qy", "s_qz", "s_qw", "s_wx", "s_wy", "s_wz")
    assert model.inputs == ("s_tx", "s_ty", "s_tz")
    np.testing.assert_array_equal(model.initial_state(), [0, 0, 0, 1, 0, 0, 0])
