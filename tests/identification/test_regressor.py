"""robodyn.regressor: inverse dynamics as Y(q, q', q'') theta over the standard inertial parameters and joint terms.

References: the model's own inverse dynamics (Newton-Euler on the tape, checked against Pinocchio elsewhere),
Pinocchio's ``computeJointTorqueRegressor`` and ``Inertia.toDynamicParameters`` for the inertial columns and
values, and closed forms for the joint terms' columns.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.identification.rigid_cases import PANDA, PUMA, ROOT, UR5, load_quiet, pinocchio_cases, random_motion
from tests.pinocchio_reference import configuration

import robodyn
from robodyn.base.errors import InputError, ShapeError

ARMS: dict[str, Path | None] = {"puma560 chain": PUMA, "two-link arm (catalog)": None}
if PANDA is not None and UR5 is not None:
    ARMS["panda URDF (mimic fingers)"] = PANDA
    ARMS["ur5 URDF"] = UR5


@pytest.mark.parametrize("name", sorted(ARMS))
def test_y_theta_is_the_inverse_dynamics(name: str) -> None:
    """Y @ values equals the model's inverse dynamics (gravity, friction, rotors included) to 1e-12 of its size,
    at one point and at samples; the samples' Y is the points' one by one."""
    model = load_quiet(ARMS[name])
    n = model.n_coordinates
    q, qd, qdd = random_motion(n, 20, 3)
    found = robodyn.regressor(model, q, qd, qdd)
    assert found.Y.shape == (20, n, len(found.names)) and found.values.shape == (len(found.names),)
    assert found.coordinates == tuple(model.coordinates) and len(set(found.names)) == len(found.names)
    for k in range(20):
        tau = model.inverse_dynamics(q[k], qd[k], qdd[k])
        scale = max(1.0, np.abs(tau).max())
        assert np.abs(found.torques[k] - tau).max() <= 1e-12 * scale
        single = robodyn.regressor(model, q[k], qd[k], qdd[k])
        np.testing.assert_array_equal(single.Y, found.Y[k])
    assert not found.Y.flags.writeable and not found.values.flags.writeable


def test_joint_terms_have_their_closed_form_columns() -> None:
    """The Puma file's rotor inertia and viscous friction: the armature column is q'', the viscous one q', the
    Coulomb one tanh(q'/eps), each in its own joint's row only; their values are the file's G^2 I_r and b."""
    model = load_quiet(PUMA)
    q, qd, qdd = (row[0] for row in random_motion(model.n_coordinates, 1, 5))
    found = robodyn.regressor(model, q, qd, qdd)
    names = list(found.names)
    for i, joint in enumerate(model.coordinates):
        for term, column in (("armature", qdd), ("viscous", qd), ("coulomb", np.tanh(qd / model.friction_smoothing))):
            k = names.index(f"{joint}.{term}")
            expected = np.zeros(model.n_coordinates)
            expected[i] = column[i]
            np.testing.assert_array_equal(found.Y[:, k], expected)
    terms = model._joint_terms
    for i, joint in enumerate(model.coordinates):
        armature = float(terms[i]["gear_ratio"] ** 2 * terms[i]["rotor_inertia"])
        assert found.values[names.index(f"{joint}.armature")] == pytest.approx(armature, rel=1e-15)
        assert found.values[names.index(f"{joint}.viscous")] == pytest.approx(float(terms[i]["damping"]), rel=1e-15)


def test_the_inertial_columns_and_values_are_pinocchios(tmp_path: Path) -> None:
    """Y's inertial columns equal Pinocchio's computeJointTorqueRegressor and ``values`` its
    Inertia.toDynamicParameters, to 1e-12 of the largest entry (the same parametrization: each joint frame, about
    its origin, fixed links merged into their bodies), on the Puma chain, the UR5 and the Panda arm."""
    pin = pytest.importorskip("pinocchio")
    for label, model, reference, order in pinocchio_cases(tmp_path):
        data = reference.createData()
        n = model.n_coordinates
        q, qd, qdd = random_motion(n, 5, 11)
        found = robodyn.regressor(model, q, qd, qdd)
        inertial = 10 * (reference.njoints - 1)
        theirs_values = np.concatenate([reference.inertias[j].toDynamicParameters()
                                        for j in range(1, reference.njoints)])
        np.testing.assert_allclose(found.values[:inertial], theirs_values, rtol=1e-12, atol=1e-14, err_msg=label)
        for k in range(5):
            theirs = pin.computeJointTorqueRegressor(reference, data, configuration(reference, q[k][order]),
                                                     qd[k][order], qdd[k][order])
            mine = found.Y[k][order, :inertial]
            scale = max(1.0, np.abs(theirs).max())
            assert np.abs(mine - theirs).max() <= 1e-12 * scale, label


def test_parameters_change_the_values_and_the_geometry() -> None:
    """A parameter override reaches Y (a link length) and values (a mass); Y @ values follows the model."""
    model = load_quiet(None)
    q, qd, qdd = (row[0] for row in random_motion(model.n_coordinates, 1, 7))
    base = robodyn.regressor(model, q, qd, qdd)
    heavier = {name: 2.0 * value for name, value in model.parameters.items() if name.startswith("m")}
    assert heavier, "the catalog arm names its masses m..."
    changed = robodyn.regressor(model, q, qd, qdd, params=heavier)
    assert not np.array_equal(changed.values, base.values)
    tau = model.inverse_dynamics(q, qd, qdd, params=heavier)
    np.testing.assert_allclose(changed.torques, tau, rtol=1e-12, atol=1e-12)


def test_bad_input_is_refused_with_the_cause() -> None:
    for other in ("pendulum", "double_pendulum", str(ROOT / "examples" / "four_bar.yaml")):  # no tree on a tape
        with pytest.raises(InputError, match=r"no rigid-body regressor.*load a chain file or a URDF robot"):
            robodyn.regressor(robodyn.load(other), [0.0], [0.0], [0.0])
    with pytest.raises(InputError, match="expected a robodyn model"):
        robodyn.regressor("two_link_arm", [0.0, 0.0], [0.0, 0.0], [0.0, 0.0])  # type: ignore[arg-type]
    arm = load_quiet(None)
    with pytest.raises(ShapeError, match=r"q has shape \(3,\)"):
        robodyn.regressor(arm, [0.0, 0.0, 0.0], [0.0, 0.0], [0.0, 0.0])
    with pytest.raises(ShapeError, match="as many of each"):
        robodyn.regressor(arm, np.zeros((3, 2)), np.zeros((2, 2)), np.zeros((3, 2)))
    with pytest.raises(InputError, match="not finite"):
        robodyn.regressor(arm, [np.nan, 0.0], [0.0, 0.0], [0.0, 0.0])
    rows = np.zeros((4, 2))
    rows[2, 1] = np.inf
    with pytest.raises(InputError, match=r"qdd in row 2 is not finite"):
        robodyn.regressor(arm, np.zeros((4, 2)), np.zeros((4, 2)), rows)
    with pytest.raises(InputError, match="must be numbers"):
        robodyn.regressor(arm, ["a", "b"], [0.0, 0.0], [0.0, 0.0])


def test_a_parsed_model_record_answers_through_the_full_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The numeric path's parsed-model record (robodyn.files.cached.CachedModel, what ``robodyn simulate``
    loads) of the Puma file delegates torque_regressor() to the full model: the same columns and the same Y."""
    import warnings

    from robodyn.files import cached

    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(tmp_path))
    copy = tmp_path / "puma560.yaml"
    copy.write_text(PUMA.read_text(encoding="utf-8"), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", robodyn.RobodynWarning)  # the file's link 3, as in load_quiet
        record = cached.load_cached(copy)
    assert type(record).__name__ == "CachedModel"
    q, qd, qdd = random_motion(6, 3, 13)
    mine, theirs = robodyn.regressor(record, q, qd, qdd), robodyn.regressor(load_quiet(PUMA), q, qd, qdd)
    assert mine.names == theirs.names
    np.testing.assert_array_equal(mine.Y, theirs.Y)
