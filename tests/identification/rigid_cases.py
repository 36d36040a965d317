"""Robots of the rigid-body identification tests (robodyn.regressor, base_parameters, identify_rigid): the Puma 560
chain file, the UR5 and the Panda from example-robot-data, and Pinocchio models of the same bodies."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from tests.pinocchio_reference import ROBOTS, chain_to_pinocchio

import robodyn

ROOT = Path(__file__).resolve().parents[2]
PUMA = ROOT / "tests" / "data" / "puma560.yaml"
UR5 = None if ROBOTS is None else ROBOTS / "ur_description" / "urdf" / "ur5_robot.urdf"
PANDA = None if ROBOTS is None else ROBOTS / "panda_description" / "urdf" / "panda.urdf"


def load_quiet(path: Path | str | None) -> robodyn.Model:
    """The model at ``path`` (None: the catalog's two-link arm), without the Puma file's plausibility warning (its
    link 3 breaks the triangle inequality, as measured)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", robodyn.RobodynWarning)
        return robodyn.load("two_link_arm" if path is None else str(path))


def panda_arm(folder: Path) -> Path:
    """The Panda's URDF with its fingers made fixed joints, written into ``folder``: Pinocchio moves a mimic finger
    as a joint of its own, so the arm alone has the same bodies in both."""
    assert PANDA is not None
    text = PANDA.read_text(encoding="utf-8")
    path = folder / "panda_arm.urdf"
    path.write_text(re.sub(r'(<joint name="panda_finger_joint[12]" type=)"prismatic"', r'\1"fixed"', text),
                    encoding="utf-8")
    return path


def pinocchio_cases(folder: Path) -> list[tuple[str, robodyn.Model, Any, np.ndarray]]:
    """(label, model, Pinocchio model, Pinocchio joint -> model coordinate) for the Puma (built joint by joint
    from the chain's bodies), the UR5 and the Panda arm (read by Pinocchio's URDF parser)."""
    import pinocchio as pin

    puma = load_quiet(PUMA)
    reference, _, order = chain_to_pinocchio(puma)
    cases = [("puma560", puma, reference, order)]
    if ROBOTS is not None:
        assert UR5 is not None
        for label, path in (("ur5", UR5), ("panda arm", panda_arm(folder))):
            model = load_quiet(path)
            reference = pin.buildModelFromUrdf(str(path))
            assert list(reference.names)[1:] == list(model.coordinates)
            cases.append((label, model, reference, np.arange(model.n_coordinates)))
    return cases


def random_motion(n: int, count: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` samples of q in [-1.5, 1.5], q' in [-2, 2] and q'' in [-3, 3] (count, n) each."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.5, 1.5, (count, n)), rng.uniform(-2.0, 2.0, (count, n)), rng.uniform(-3.0, 3.0, (count, n))
