"""robodyn.viewer.centre: the centre of mass the page draws, against Pinocchio's centerOfMass (the Panda, its mimic
finger coupled as in the file) and the closed form of the two-link arm."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.kinematics.frames import kinematics
from robodyn.viewer.centre import centre_of_mass

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pinocchio_reference import ROBOTS, coupling


def test_the_panda_centre_of_mass_is_pinocchios() -> None:
    pin = pytest.importorskip("pinocchio")
    path = None if ROBOTS is None else ROBOTS / "panda_description" / "urdf" / "panda.urdf"
    if path is None or not path.is_file():
        pytest.skip("example-robot-data is not installed")
    model = robodyn.load(str(path))
    kin = kinematics(model)
    reference = pin.buildModelFromUrdf(str(path))
    data = reference.createData()
    G, offset = coupling(path, reference, kin.coordinates)
    q = np.random.default_rng(5).uniform(-1.5, 1.5, (6, len(kin.coordinates)))
    centres = centre_of_mass(model, kin.coordinates, q)
    assert centres is not None
    for qk, centre in zip(q, centres):
        # the same masses and centres summed two ways: agreement to round-off (1 m arm, 1e-12 m)
        np.testing.assert_allclose(centre, pin.centerOfMass(reference, data, G @ qk + offset), atol=1e-12)


def test_the_two_link_arms_centre_of_mass_is_its_closed_form() -> None:
    model = robodyn.load("two_link_arm")
    kin = kinematics(model)
    p = model.parameters
    q = np.array([[0.3, -0.7], [1.2, 0.4]])
    centres = centre_of_mass(model, kin.coordinates, q)
    assert centres is not None
    for (a, b), centre in zip(q, centres):
        # each link's centre on its own line, lc from its joint; fk gives the elbow and the direction of the forearm
        elbow = kin.position([a, b], "forearm")
        along = (kin.position([a, b], "tool") - elbow) / np.linalg.norm(kin.position([a, b], "tool") - elbow)
        shoulder = kin.position([a, b], "upper_arm")
        first = shoulder + p["lc1"] / p["l1"] * (elbow - shoulder)
        second = elbow + p["lc2"] * along
        np.testing.assert_allclose(centre, (p["m1"] * first + p["m2"] * second) / (p["m1"] + p["m2"]), atol=1e-14)
