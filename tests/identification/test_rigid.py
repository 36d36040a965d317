"""robodyn.identify_rigid: base parameters from measured motion and torques by weighted least squares.

References: the model's own base parameters (K times its standard parameters) as the truth behind torques computed
along a Fourier excitation by the regressor (tau = Y theta, itself equal to the model's inverse dynamics:
test_regressor.py); a second excitation, never seen by the fit, for validation; Gaussian noise of known deviation
per joint; hand-made bad data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.identification.rigid_cases import PANDA, PUMA, UR5, load_quiet

import robodyn
from robodyn.base.errors import InputError, ShapeError
from robodyn.results.trajectory import SimulationStats, Trajectory

RATE = 200.0  # Hz: 0.2 to 1 Hz excitations, sampled 200 to 1000 times per period


@pytest.fixture(scope="module")
def ur5() -> dict[str, Any]:
    """The UR5, its base parameters, an excitation to fit (two periods) and another to validate on."""
    if UR5 is None:
        pytest.skip("example-robot-data is not installed")
    model = load_quiet(UR5)
    base = robodyn.base_parameters(model)
    fit = robodyn.design_excitation(model, velocity_limits=1.5, period=5.0, harmonics=3, maxiter=5, base=base)
    check = robodyn.design_excitation(model, velocity_limits=1.5, period=4.0, harmonics=3, maxiter=3, base=base,
                                      seed=9)
    t = np.arange(0.0, 2 * fit.period, 1 / RATE)
    q, qd, qdd = fit.sample(t)
    tv = np.arange(0.0, check.period, 1 / RATE)
    qv, qdv, qddv = check.sample(tv)
    return {"model": model, "base": base, "t": t, "q": q, "qd": qd, "qdd": qdd,
            "tau": robodyn.regressor(model, q, qd, qdd).torques, "validation": (qv, qdv, qddv),
            "validation_tau": robodyn.regressor(model, qv, qdv, qddv).torques}


def test_noise_free_data_give_the_base_parameters(ur5: dict[str, Any]) -> None:
    """Torques without noise along the excitation (q'' given): the estimate equals K theta to 1e-9 (absolute below
    1, relative above; the solve's error is about cond(W_b) eps |beta| ~ 1e-13 here), the residuals vanish and the
    standard errors with them."""
    data = {key: ur5[key] for key in ("t", "q", "qd", "qdd", "tau")}
    found = robodyn.identify_rigid(ur5["model"], data, base=ur5["base"])
    truth = ur5["base"].values
    assert np.all(np.abs(found.estimate - truth) <= 1e-9 * np.maximum(1.0, np.abs(truth)))
    assert found.names == ur5["base"].names and found.by_name()[found.names[0]] == found.estimate[0]
    assert np.all(found.rms <= 1e-9 * np.sqrt(np.mean(ur5["tau"] ** 2, axis=0)))
    assert found.condition < 1e4 and found.method.startswith("q'' as given")


@pytest.mark.parametrize("name", ["puma560", "panda"])
def test_the_puma_and_the_panda_from_a_noise_free_excitation(name: str) -> None:
    """The same on the Puma chain (no limits in its file: given here) and the Panda with its coupled fingers (its
    URDF's limits): their 52 and 70 base parameters to 1e-9."""
    if name == "panda" and PANDA is None:
        pytest.skip("example-robot-data is not installed")
    model = load_quiet(PUMA if name == "puma560" else PANDA)
    limits = {joint: (-2.5, 2.5) for joint in model.coordinates} if name == "puma560" else None
    excitation = robodyn.design_excitation(model, velocity_limits=1.0, position_limits=limits, period=6.0,
                                           harmonics=3, maxiter=3)
    t = np.arange(0.0, excitation.period, 1 / RATE)
    q, qd, qdd = excitation.sample(t)
    tau = robodyn.regressor(model, q, qd, qdd).torques
    found = robodyn.identify_rigid(model, {"t": t, "q": q, "qd": qd, "qdd": qdd, "tau": tau})
    truth = found.base.values
    assert found.base.count == {"puma560": 52, "panda": 70}[name]
    assert np.all(np.abs(found.estimate - truth) <= 1e-9 * np.maximum(1.0, np.abs(truth)))


def test_with_noise_the_validation_torques_are_predicted_within_the_noise(ur5: dict[str, Any]) -> None:
    """Gaussian torque noise of a different deviation per joint (2 % of its torque plus 0.01 N m): the estimate is
    within 5 standard errors of the truth; the torques it predicts on the other excitation differ from the true ones
    by less than the noise (rms per joint below sigma_j) and from the measured ones by about the noise (below 1.15
    sigma_j: sqrt(1 + 0.5^2)); the two-step weights find each joint's deviation within 25 % (the first, unweighted
    fit leaves a quiet joint's residual some of the loud joints' noise through the parameters they share)."""
    tau = ur5["tau"]
    sigma = 0.02 * np.sqrt(np.mean(tau**2, axis=0)) + 0.01
    rng = np.random.default_rng(1)
    data = {"t": ur5["t"], "q": ur5["q"], "qd": ur5["qd"], "qdd": ur5["qdd"],
            "tau": tau + rng.normal(size=tau.shape) * sigma}
    found = robodyn.identify_rigid(ur5["model"], data, base=ur5["base"])
    assert np.all(np.abs(found.estimate - ur5["base"].values) <= 5 * found.standard_errors)
    assert np.all(np.abs(found.weights * sigma - 1.0) <= 0.25)
    predicted = found.predict(ur5["model"], *ur5["validation"])
    truth = ur5["validation_tau"]
    measured = truth + rng.normal(size=truth.shape) * sigma
    assert np.all(np.sqrt(np.mean((predicted - truth) ** 2, axis=0)) <= sigma)
    assert np.all(np.sqrt(np.mean((predicted - measured) ** 2, axis=0)) <= 1.15 * sigma)
    C = found.correlation
    assert np.allclose(C, C.T) and np.allclose(np.diag(C), 1.0) and np.abs(C).max() <= 1.0
    assert not found.estimate.flags.writeable and found.to_dict()["samples"] == len(ur5["t"])


def test_accelerations_from_the_zero_phase_filter(ur5: dict[str, Any]) -> None:
    """Without q'' (and without q': both from the filtered q), a Butterworth filter at 10 Hz on 0.2 to 0.6 Hz motion
    sampled at 200 Hz: the torques predicted on the validation excitation are within 1e-3 of their rms (measured
    1e-4: q'' from central differences twice errs by about 2 (2 pi f dt)^2 / 6 ~ 1e-4 of itself at 0.6 Hz). The
    rows kept are decimated (1 in 8) and cut by the filter's start-up at each end (5 periods of the cutoff)."""
    data = {"t": ur5["t"], "q": ur5["q"], "tau": ur5["tau"]}
    found = robodyn.identify_rigid(ur5["model"], data, base=ur5["base"], cutoff=10.0)
    truth = ur5["validation_tau"]
    error = np.sqrt(np.mean((found.predict(ur5["model"], *ur5["validation"]) - truth) ** 2, axis=0))
    assert np.all(error <= 1e-3 * np.sqrt(np.mean(truth**2, axis=0)))
    assert "Butterworth" in found.method and "1 row in 8" in found.method
    assert np.array_equal(found.t, ur5["t"][100:-100:8])


def test_a_csv_file_named_columns_and_a_trajectory_give_the_same_fit(ur5: dict[str, Any], tmp_path: Path) -> None:
    """The same samples as arrays, as named columns (a mapping and a CSV file) and as a Trajectory (q, q' its
    states, the torques its inputs <joint>_tau, q'' given apart): the same estimate, bit for bit from the columns
    and the trajectory, to the CSV's 17 digits from the file."""
    model, joints = ur5["model"], ur5["model"].coordinates
    columns = {"t": ur5["t"], **{j: ur5["q"][:, i] for i, j in enumerate(joints)},
               **{f"{j}_dot": ur5["qd"][:, i] for i, j in enumerate(joints)},
               **{f"{j}_ddot": ur5["qdd"][:, i] for i, j in enumerate(joints)},
               **{f"{j}_tau": ur5["tau"][:, i] for i, j in enumerate(joints)}}
    arrays = robodyn.identify_rigid(model, {k: ur5[k] for k in ("t", "q", "qd", "qdd", "tau")}, base=ur5["base"])
    named = robodyn.identify_rigid(model, columns, base=ur5["base"])
    assert np.array_equal(named.estimate, arrays.estimate)
    path = tmp_path / "run.csv"
    table = np.column_stack(list(columns.values()))
    path.write_text(",".join(columns) + "\n" + "\n".join(",".join(f"{v:.17g}" for v in row) for row in table) + "\n",
                    encoding="utf-8")
    from_file = robodyn.identify_rigid(model, path, base=ur5["base"])
    np.testing.assert_allclose(from_file.estimate, arrays.estimate, rtol=1e-12, atol=1e-12)
    states = (*joints, *(f"{j}_dot" for j in joints))
    run = Trajectory(ur5["t"], np.hstack([ur5["q"], ur5["qd"]]), ur5["tau"], np.zeros((len(ur5["t"]), 0)), states,
                     tuple(f"{j}_tau" for j in joints), (), "ur5", SimulationStats("given", "none"))
    traced = robodyn.identify_rigid(model, run, qdd=ur5["qdd"], base=ur5["base"])
    assert np.array_equal(traced.estimate, arrays.estimate)


def _excited(ur5: dict[str, Any], count: int = 400) -> dict[str, np.ndarray]:
    return {key: np.array(ur5[key][:count]) for key in ("t", "q", "qd", "qdd", "tau")}


def test_bad_data_is_refused_with_the_row_and_the_fix(ur5: dict[str, Any], tmp_path: Path) -> None:
    model, base = ur5["model"], ur5["base"]
    data = _excited(ur5)
    data["tau"][7, 2] = np.nan
    with pytest.raises(InputError, match=r"row 7 \(t = 0.035\): tau is not finite.*remove or repair"):
        robodyn.identify_rigid(model, data, base=base)
    path = tmp_path / "run.csv"
    joints = model.coordinates
    header = ["t", *joints, *(f"{j}_dot" for j in joints), *(f"{j}_tau" for j in joints)]
    rows = [",".join(["0.0"] * len(header)), ",".join(["0.005", "nan"] + ["1.0"] * (len(header) - 2))]
    path.write_text(",".join(header) + "\n\n" + "\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"run.csv: line 4 \(t = 0.005\): q is not finite"):
        robodyn.identify_rigid(model, path, base=base)
    data = _excited(ur5)
    data["t"][10] = data["t"][9]
    with pytest.raises(InputError, match=r"row 10: the time t = 0.045 repeats t = 0.045.*increase strictly"):
        robodyn.identify_rigid(model, data, base=base)
    data["t"][10] = 0.0
    with pytest.raises(InputError, match=r"row 10: the time t = 0 goes back from t = 0.045"):
        robodyn.identify_rigid(model, data, base=base)
    data = _excited(ur5)
    data.pop("qdd")
    data["t"][5:] += 1e-4
    with pytest.raises(InputError, match=r"sampling is not uniform.*resample to a uniform grid or give qdd"):
        robodyn.identify_rigid(model, data, base=base, cutoff=5.0)
    data = _excited(ur5)
    data.pop("qdd")
    with pytest.raises(InputError, match=r"cutoff= \(Hz\) must lie in \(0, 100\).*got None"):
        robodyn.identify_rigid(model, data, base=base)
    data = _excited(ur5)
    data.pop("qd")
    with pytest.raises(InputError, match="q'' is given but not q'"):
        robodyn.identify_rigid(model, data, base=base)
    with pytest.raises(ShapeError, match=r"tau has shape \(400, 5\), expected \(400, 6\)"):
        robodyn.identify_rigid(model, {**_excited(ur5), "tau": np.zeros((400, 5))}, base=base)
    with pytest.raises(InputError, match="unknown key 'torque'"):
        robodyn.identify_rigid(model, {**_excited(ur5), "torque": 1}, base=base)
    with pytest.raises(InputError, match="base= was computed for another model"):
        robodyn.identify_rigid(model, _excited(ur5), base=robodyn.base_parameters(load_quiet(PUMA)))
    with pytest.raises(InputError, match="data of type int"):
        robodyn.identify_rigid(model, 3, base=base)  # type: ignore[arg-type]


def test_data_that_cannot_tell_parameters_apart_are_named(ur5: dict[str, Any]) -> None:
    """The last wrist held still: its joint terms act on nothing, and the wrist link's inertias about that axis
    merge with the joint's rotor; the message names them instead of returning numbers for them."""
    data = _excited(ur5, 800)
    for key in ("qd", "qdd"):
        data[key][:, 5] = 0.0
    data["q"][:, 5] = 0.3
    with pytest.raises(InputError, match="cannot tell some base parameters apart") as caught:
        robodyn.identify_rigid(ur5["model"], data, base=ur5["base"])
    message = str(caught.value)
    for name in ("wrist_3_joint.armature (no effect in these data)", "wrist_3_joint.viscous (no effect in these data)",
                 "wrist_3_joint.coulomb (no effect in these data)"):
        assert name in message
    assert "robodyn.design_excitation" in message
    with pytest.raises(InputError, match="12 equations for 52 base parameters: record more samples"):
        robodyn.identify_rigid(ur5["model"], _excited(ur5, 2), base=ur5["base"])
