"""robodyn.design_excitation: finite Fourier excitations within the limits that condition the base regressor.

References: the series' derivatives against central differences of its own positions; the limits checked on a
grid ten times finer than the design's; the condition number recomputed by numpy from the regressor; the same seed
giving the same coefficients.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.identification.rigid_cases import PUMA, UR5, load_quiet

import robodyn
from robodyn.base.errors import InputError, ShapeError


@pytest.fixture(scope="module")
def ur5() -> robodyn.Model:
    if UR5 is None:
        pytest.skip("example-robot-data is not installed")
    return load_quiet(UR5)


def test_the_excitation_stays_within_the_limits_and_conditions_the_regressor(ur5: robodyn.Model) -> None:
    """On a grid ten times finer than the design's, the positions stay within the URDF's limits less the margin and
    the speeds within the velocity limits; the condition number reported is numpy's cond of the stacked base
    regressor at the design's samples, and lower than the random start's; one period ends where it began."""
    base = robodyn.base_parameters(ur5)
    velocity = {joint: 1.0 + 0.1 * k for k, joint in enumerate(ur5.coordinates)}
    found = robodyn.design_excitation(ur5, velocity_limits=velocity, period=5.0, harmonics=3, maxiter=8, base=base,
                                      margin=0.1)
    limits = ur5.position_limits()
    t = np.linspace(0.0, found.period, 10 * found.samples + 1)
    q, qd, _ = found.sample(t)
    for i, joint in enumerate(ur5.coordinates):
        lower, upper = limits[joint]
        span = upper - lower
        assert lower + 0.1 * span - 1e-12 <= q[:, i].min() and q[:, i].max() <= upper - 0.1 * span + 1e-12, joint
        assert np.abs(qd[:, i]).max() <= velocity[joint] * (1 + 1e-12), joint
    np.testing.assert_allclose(q[0], q[-1], atol=1e-12)
    grid = np.arange(found.samples) * found.period / found.samples
    Yb = base.base_regressor(robodyn.regressor(ur5, *found.sample(grid)).Y).reshape(-1, base.count)
    assert found.condition == pytest.approx(np.linalg.cond(Yb), rel=1e-9)
    assert found.condition < found.initial_condition
    assert found.frequencies.tolist() == pytest.approx([0.2, 0.4, 0.6])
    assert found.to_dict()["samples"] == found.samples and not found.a.flags.writeable


def test_the_series_derivatives_are_its_velocities_and_accelerations(ur5: robodyn.Model) -> None:
    """q' and q'' of ``sample`` against fourth-order central differences of q and q' at h = 1e-3 s (truncation
    ~ h^4 (2 pi 0.6)^5 q / 30 ~ 1e-12, round-off ~ eps q / h ~ 1e-13)."""
    found = robodyn.design_excitation(ur5, velocity_limits=1.5, period=5.0, harmonics=3, maxiter=2)
    t, h = np.linspace(0.3, 4.7, 23), 1e-3

    def difference(index: int) -> np.ndarray:
        values = [found.sample(t + k * h)[index] for k in (-2, -1, 1, 2)]
        return (values[0] - 8 * values[1] + 8 * values[2] - values[3]) / (12 * h)

    _, qd, qdd = found.sample(t)
    np.testing.assert_allclose(difference(0), qd, rtol=0, atol=1e-9)
    np.testing.assert_allclose(difference(1), qdd, rtol=0, atol=1e-9)


def test_the_design_is_reproducible_and_honours_acceleration_limits() -> None:
    """The Puma (no limits in its file: given), with an acceleration bound: the same seed gives the same
    coefficients bit for bit, another seed others; |q''| stays below the bound on a fine grid."""
    model = load_quiet(PUMA)
    limits = {joint: (-2.0, 2.0) for joint in model.coordinates}
    kwargs = {"velocity_limits": 1.0, "acceleration_limits": 2.0, "position_limits": limits, "period": 6.0,
              "harmonics": 2, "maxiter": 4}
    first, again = (robodyn.design_excitation(model, **kwargs) for _ in range(2))  # type: ignore[arg-type]
    other = robodyn.design_excitation(model, seed=1, **kwargs)  # type: ignore[arg-type]
    assert np.array_equal(first.a, again.a) and np.array_equal(first.b, again.b)
    assert first.condition == again.condition and not np.array_equal(first.a, other.a)
    _, _, qdd = first.sample(np.linspace(0.0, first.period, 2001))
    assert np.abs(qdd).max() <= 2.0 * (1 + 1e-12)


def test_bad_requests_name_the_fix() -> None:
    model = load_quiet(PUMA)
    with pytest.raises(InputError, match=r"joint 'q1' has no finite position limits.*position_limits=\{'q1'"):
        robodyn.design_excitation(model, velocity_limits=1.0)
    limits = {joint: (-1.0, 1.0) for joint in model.coordinates}
    with pytest.raises(InputError, match="velocity_limits has no entry for 'q2'"):
        robodyn.design_excitation(model, velocity_limits={"q1": 1.0}, position_limits=limits)
    with pytest.raises(InputError, match=r"velocity_limits \[-1.0"):
        robodyn.design_excitation(model, velocity_limits=-1.0, position_limits=limits)
    with pytest.raises(InputError, match="harmonics=0"):
        robodyn.design_excitation(model, velocity_limits=1.0, position_limits=limits, harmonics=0)
    with pytest.raises(InputError, match=r"margin=0.6 must lie in \[0, 0.5\)"):
        robodyn.design_excitation(model, velocity_limits=1.0, position_limits=limits, margin=0.6)
    with pytest.raises(InputError, match="no rigid-body regressor"):
        robodyn.design_excitation(robodyn.load("pendulum"), velocity_limits=1.0)
    found = robodyn.design_excitation(model, velocity_limits=1.0, position_limits=limits, harmonics=1, maxiter=1)
    with pytest.raises(InputError, match="finite times"):
        found.sample([0.0, np.nan])
    with pytest.raises(ShapeError, match=r"Excitation\.a has shape"):
        robodyn.Excitation(found.coordinates, 1.0, found.offsets, found.a[:2], found.b, 1.0, 1.0, 10,
                           found.position_limits, found.velocity_limits)
