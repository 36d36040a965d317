"""robodyn.base_parameters: the identifiable combinations of the standard parameters.

References: Pinocchio's ``computeJointTorqueRegressor`` stacked at its own random samples through the same QR
(``regressor_rank``), with the joint terms' columns written in closed form; the published count of W. Khalil's
grouping rules for the Puma 560; the closed-form base parameters of a planar two-link arm; and the regressor itself
at fresh samples (Y theta = Y_b K theta for any theta).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.identification.rigid_cases import PANDA, PUMA, UR5, load_quiet, pinocchio_cases, random_motion
from tests.pinocchio_reference import configuration

import robodyn
from robodyn.base.errors import InputError
from robodyn.identification.base_parameters import regressor_rank

INERTIAL = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
ARMS: dict[str, Path | None] = {"puma560": PUMA, "two_link_arm": None}
if PANDA is not None and UR5 is not None:
    ARMS |= {"panda": PANDA, "ur5": UR5}


def _pinocchio_stack(model: robodyn.Model, reference: object, order: np.ndarray, names: tuple[str, ...],
                     samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Pinocchio's regressor stacked at random samples: its inertial columns alone (rows, 10 B) and with the
    joint terms' columns in robodyn's order, written from their definitions (armature: q''; viscous: q';
    coulomb: tanh(q'/eps) in the joint's own row)."""
    import pinocchio as pin

    data = reference.createData()  # type: ignore[attr-defined]
    n = model.n_coordinates
    rng = np.random.default_rng(seed)
    inertial_rows, rows = [], []
    smoothing = model.friction_smoothing  # type: ignore[attr-defined]
    for _ in range(samples):
        q, qd, qdd = rng.uniform(-np.pi, np.pi, n), rng.standard_normal(n), rng.standard_normal(n)
        theirs = np.empty((n, 10 * n))
        theirs[order] = pin.computeJointTorqueRegressor(reference, data, configuration(reference, q[order]),
                                                        qd[order], qdd[order])
        joint_columns = []
        for name in names[10 * n:]:
            joint, term = name.rsplit(".", 1)
            i = model.coordinates.index(joint)
            column = np.zeros(n)
            column[i] = {"armature": qdd[i], "viscous": qd[i], "coulomb": np.tanh(qd[i] / smoothing)}[term]
            joint_columns.append(column)
        inertial_rows.append(theirs)
        rows.append(np.column_stack([theirs, *joint_columns]))
    return np.vstack(inertial_rows), np.vstack(rows)


def test_the_count_is_pinocchios_regressor_through_the_same_qr(tmp_path: Path) -> None:
    """base_parameters' count equals the rank of Pinocchio's regressor (inertial columns, and with the joint terms)
    stacked at other random samples, by regressor_rank (QR with column pivoting, tolerance max(rows, columns)
    eps |R_11|). The Puma's 36 inertial base parameters are the published count of Khalil's grouping rules for a
    revolute chain whose first axis is vertical: 1 for link 1 (ZZR1), 7 for each further link (XXR, XY, XZ, YZ, ZZR,
    MXR, MYR) (M. Gautier, W. Khalil, "Direct calculation of minimum set of inertial parameters of serial
    robots", IEEE Trans. Robotics and Automation 6(3), 1990). The UR5 and the Panda arm (first axis vertical too)
    follow the same rule: 36 and 43. The joint terms add the viscous and Coulomb columns of every joint and the
    rotor inertia of joints 3 on (1 and 2 group with the links' inertias about their axes)."""
    pytest.importorskip("pinocchio")
    expected = {"puma560": (36, 52), "ur5": (36, 52), "panda arm": (43, 62)}
    for label, model, reference, order in pinocchio_cases(tmp_path):
        found = robodyn.base_parameters(model)
        inertial, full = _pinocchio_stack(model, reference, order, found.standard, 60, seed=17)
        mine = robodyn.regressor(model, *random_motion(model.n_coordinates, 60, 23))
        ours_inertial = mine.Y.reshape(-1, len(mine.names))[:, :10 * model.n_coordinates]
        assert regressor_rank(inertial)[0] == regressor_rank(ours_inertial)[0] == expected[label][0], label
        assert regressor_rank(full)[0] == found.count == expected[label][1], label


@pytest.mark.parametrize("name", sorted(ARMS))
def test_base_parameters_reproduce_the_torques_for_any_standard_ones(name: str) -> None:
    """Y theta = Y_b (K theta) to 1e-12 of the torques' size at fresh samples, for the model's theta and a random
    one (K is geometry alone); the unidentifiable columns are zero there; the base values are K theta."""
    model = load_quiet(ARMS[name])
    found = robodyn.base_parameters(model)
    n, size = model.n_coordinates, len(found.standard)
    r = robodyn.regressor(model, *random_motion(n, 40, 29))
    Y, Yb = r.Y, found.base_regressor(r.Y)
    assert found.K.shape == (found.count, size) and Yb.shape == (40, n, found.count)
    assert np.array_equal(found.K[:, found.independent], np.eye(found.count))
    for theta in (r.values, np.random.default_rng(3).normal(size=size)):
        tau = Y @ theta
        assert np.abs(Yb @ (found.K @ theta) - tau).max() <= 1e-12 * np.abs(tau).max(), name
    np.testing.assert_allclose(found.values, found.K @ r.values, rtol=0, atol=1e-15 * np.abs(r.values).max())
    zero = [found.standard.index(p) for p in found.unidentifiable]
    assert np.abs(Y[..., zero]).max(initial=0.0) <= found.threshold
    assert set(found.names) | set(found.unidentifiable) | set(found.grouped) == set(found.standard)
    assert found.count == len(set(found.names)) and not found.K.flags.writeable


def test_the_two_link_arm_has_its_closed_form_base_parameters() -> None:
    """A planar arm, both axes horizontal (-y), gravity along -z: the shoulder's inertia about its axis collects the
    forearm's mass at l1 (Iyy1 + l1^2 m2 + the shoulder's rotor) and its first moment along the link
    (mx1 + l1 m2); the forearm's Iyy, mx and the z moments stay alone; the elbow's rotor inertia is seen apart
    (q2'' alone in its row): 11 base parameters with the joints' viscous and Coulomb friction. Checked at two
    lengths l1, by name and coefficient."""
    model = load_quiet(None)
    for l1 in (1.0, 0.7):
        found = robodyn.base_parameters(model, params={"l1": l1})
        assert found.count == 11
        K = dict(zip(found.names, found.K))
        column = {name: k for k, name in enumerate(found.standard)}
        assert K["upper_arm.Iyy"][column["forearm.m"]] == pytest.approx(l1**2, rel=1e-12)
        assert K["upper_arm.Iyy"][column["shoulder.armature"]] == pytest.approx(1.0, rel=1e-12)
        assert K["upper_arm.mx"][column["forearm.m"]] == pytest.approx(l1, rel=1e-12)
        assert set(found.names) == {"upper_arm.mx", "upper_arm.mz", "upper_arm.Iyy", "forearm.mx", "forearm.mz",
                                    "forearm.Iyy", "shoulder.viscous", "shoulder.coulomb", "elbow.armature",
                                    "elbow.viscous", "elbow.coulomb"}
        expression = found.expressions[found.names.index("upper_arm.Iyy")]
        assert expression == ("upper_arm.Iyy + forearm.m + shoulder.armature" if l1 == 1.0
                              else "upper_arm.Iyy + 0.49*forearm.m + shoulder.armature")


def test_the_choice_is_reproducible_and_stated() -> None:
    """The same seed gives the same K; another seed the same count and names (the grouping is the geometry's);
    the tolerance used and the threshold are reported; the text shows round-off as 0 (the Puma's wrist
    moments)."""
    model = load_quiet(PUMA)
    first, again, other = (robodyn.base_parameters(model, seed=s) for s in (0, 0, 5))
    assert np.array_equal(first.K, again.K)
    assert other.names == first.names
    np.testing.assert_allclose(other.K, first.K, rtol=0, atol=1e-9)
    assert first.tolerance == max(first.samples * 6, 78) * np.finfo(float).eps and first.threshold > 0
    assert first.to_dict()["count"] == 52
    assert "link4.mx    =  0  = link4.mx" in first.text()


def test_bad_requests_are_refused() -> None:
    with pytest.raises(InputError, match="no rigid-body regressor"):
        robodyn.base_parameters(robodyn.load("pendulum"))
    model = load_quiet(None)
    with pytest.raises(InputError, match="samples=3: give an integer of at least 13"):
        robodyn.base_parameters(model, samples=3)
    with pytest.raises(InputError, match=r"tolerance 2.0 must lie in \(0, 1\)"):
        robodyn.base_parameters(model, tolerance=2.0)


def test_the_results_display_themselves_in_a_notebook() -> None:
    """The regressor, the base parameters, an identification, the consistent parameters and an excitation show an
    HTML table; names are escaped, round-off values show as 0."""
    model = load_quiet(None)
    base = robodyn.base_parameters(model)
    limits = {joint: (-2.0, 2.0) for joint in model.coordinates}
    excitation = robodyn.design_excitation(model, velocity_limits=1.0, position_limits=limits, harmonics=2,
                                           maxiter=2, base=base)
    t = np.arange(0.0, excitation.period, 0.01)
    q, qd, qdd = excitation.sample(t)
    r = robodyn.regressor(model, q, qd, qdd)
    found = robodyn.identify_rigid(model, {"t": t, "q": q, "qd": qd, "qdd": qdd, "tau": r.torques}, base=base,
                                   consistent=True)
    for result in (r, base, found, found.consistent, excitation):
        page = result._repr_html_()  # type: ignore[union-attr]
        assert page.startswith('<div class="robodyn">') and "<table" in page, type(result).__name__
    assert "upper_arm.Iyy + forearm.m + shoulder.armature" in base._repr_html_()
    assert "<td>0</td>" in base._repr_html_()  # upper_arm.mz: 1e-16 of round-off in its value
