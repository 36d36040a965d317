"""robodyn.consistent_parameters: physically consistent standard parameters matching identified base parameters.

References: the triangle inequalities of each body's central principal moments and its mass, computed directly
(the projection works on pseudo-inertias; the check does not); the pseudo-inertia's definition against a body
given by point masses (Wensing et al. 2018: J = sum m_k [p_k; 1][p_k; 1]^T); the base parameters' own K.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.identification.rigid_cases import PUMA, UR5, load_quiet

import robodyn
from robodyn.base.errors import InputError, ShapeError
from robodyn.identification.consistency import pseudo_inertia, standard_from_pseudo


def _physical(mass: float, inertia: np.ndarray) -> tuple[bool, float]:
    """Whether a body with ``mass`` and central ``inertia`` is physical (mass > 0, principal moments positive and
    each below the sum of the two others), and its smallest triangle margin."""
    moments = np.linalg.eigvalsh(inertia)
    margin = float(moments.sum() - 2 * moments.max())
    return bool(mass > 0 and moments.min() > 0 and margin > 0), margin


def _standard_from_points(masses: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The ten standard parameters of point masses (about the frame's origin)."""
    m = masses.sum()
    h = masses @ points
    inertia = sum(mk * (p @ p * np.eye(3) - np.outer(p, p)) for mk, p in zip(masses, points))
    return np.array([m, *h, inertia[0, 0], inertia[0, 1], inertia[1, 1], inertia[0, 2], inertia[1, 2],
                     inertia[2, 2]])


@settings(max_examples=40)
@given(st.integers(min_value=1, max_value=6), st.integers(min_value=0, max_value=2**31 - 1))
def test_the_pseudo_inertia_of_point_masses_is_their_second_moment(count: int, seed: int) -> None:
    """J = sum m_k [p_k; 1][p_k; 1]^T for point masses (the definition the chart rests on); the inverse map gives the
    standard parameters back; four or more points in general position make J positive definite."""
    rng = np.random.default_rng(seed)
    masses, points = rng.uniform(0.1, 2.0, count), rng.normal(size=(count, 3))
    theta = _standard_from_points(masses, points)
    lifted = np.hstack([points, np.ones((count, 1))])
    np.testing.assert_allclose(pseudo_inertia(theta), (lifted.T * masses) @ lifted, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(standard_from_pseudo(pseudo_inertia(theta)), theta, rtol=1e-12, atol=1e-12)
    if count >= 4:
        assert np.linalg.eigvalsh(pseudo_inertia(theta)).min() > 0


def test_the_pumas_inconsistent_link_is_made_physical() -> None:
    """The Puma file's link 3 (measured moments 0.066, 0.086, 0.0125: 0.0125 + 0.066 < 0.086) and its massless
    link 1 become physical bodies whose base parameters are still the model's to 1e-8 of each (s_i = 1e-4 |beta_i|
    without standard errors, matched to 1e-4 of s_i: consistent bodies can match them exactly). The correction is
    spread by the unitless metric over the bodies that share base parameters with link 3: each moves by less than
    1 % of its size (measured: link 2 0.2 %), the wrist (links 4 to 6), which shares little, by less than 1e-4."""
    model = load_quiet(PUMA)
    base = robodyn.base_parameters(model)
    found = robodyn.consistent_parameters(model, base, base.values)
    prior = found.prior
    assert not _physical(prior[20], pseudo_inertia(prior[20:30])[:3, :3])[0]  # the file's link 3 (about its origin)
    masses, inertias = found.masses, found.inertias
    for k, link in enumerate(found.bodies):
        assert _physical(masses[k], inertias[k])[0], link
        assert np.linalg.eigvalsh(pseudo_inertia(found.values[10 * k:10 * k + 10])).min() > 0, link
    np.testing.assert_allclose(found.base_values, base.K @ found.values, rtol=1e-14, atol=1e-16)
    assert np.abs(found.base_misfit).max() <= 1e-4 and found.converged
    assert np.all(np.abs(found.base_values - base.values) <= 1e-8 * np.abs(base.values).max())
    for k in range(6):
        block = slice(10 * k, 10 * k + 10)
        bound = 1e-4 if k >= 3 else 1e-2
        assert np.abs(found.values[block] - prior[block]).max() <= bound * np.abs(prior[block]).max()
    centre = found.centres[2]
    np.testing.assert_allclose(masses[2] * centre, found.values[21:24], rtol=1e-12)
    assert not found.values.flags.writeable and found.by_name()["link3.m"] == found.values[20]


def test_a_noisy_identification_with_consistent_true() -> None:
    """identify_rigid(consistent=True) on noisy UR5 torques: every body physical, the joint terms non-negative, the
    consistent parameters' base values within 3 standard errors of the estimate (the truth, physical, lies within 5
    of it), and the masses the torques leave open within a factor 2 of the model's (the prior)."""
    if UR5 is None:
        pytest.skip("example-robot-data is not installed")
    model = load_quiet(UR5)
    base = robodyn.base_parameters(model)
    excitation = robodyn.design_excitation(model, velocity_limits=1.5, period=5.0, harmonics=3, maxiter=5, base=base)
    t = np.arange(0.0, excitation.period, 1 / 200)
    q, qd, qdd = excitation.sample(t)
    tau = robodyn.regressor(model, q, qd, qdd).torques
    sigma = 0.02 * np.sqrt(np.mean(tau**2, axis=0)) + 0.01
    noisy = tau + np.random.default_rng(4).normal(size=tau.shape) * sigma
    found = robodyn.identify_rigid(model, {"t": t, "q": q, "qd": qd, "qdd": qdd, "tau": noisy}, base=base,
                                   consistent=True)
    consistent = found.consistent
    assert consistent is not None and consistent.converged
    for k, link in enumerate(consistent.bodies):
        assert _physical(consistent.masses[k], consistent.inertias[k])[0], link
    joints = [k for k, name in enumerate(consistent.standard) if name.rsplit(".", 1)[1] in ("armature", "viscous")]
    assert np.all(consistent.values[joints] >= 0)
    assert np.all(np.abs(consistent.base_values - found.estimate) <= 3 * found.standard_errors)
    ratio = consistent.masses / consistent.prior[0::10][:len(consistent.bodies)]
    assert np.all((ratio > 0.5) & (ratio < 2.0))


def test_bad_requests() -> None:
    model = load_quiet(PUMA)
    base = robodyn.base_parameters(model)
    with pytest.raises(ShapeError, match="estimate has shape"):
        robodyn.consistent_parameters(model, base, base.values[:-1])
    with pytest.raises(InputError, match="regularization=0"):
        robodyn.consistent_parameters(model, base, base.values, regularization=0)
    with pytest.raises(InputError, match="base= belongs to another model"):
        robodyn.consistent_parameters(load_quiet(None), base, base.values)
    empty = np.array(base.standard_values)
    empty[:10] = 0.0
    with pytest.raises(InputError, match="no mass and no inertia"):
        robodyn.consistent_parameters(model, base, base.values, prior=empty)
