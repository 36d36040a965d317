"""robodyn.identify: output-error fits on exact sensitivities, checked against the truth that made the data.

The data are simulations of the model at known parameters (robodyn.simulate at rtol 1e-10, an independent run from
the fit's own) plus seeded Gaussian noise. Without noise the fit returns the truth to the integrators' accuracy;
with noise the estimates scatter around it as the standard errors say (coverage over seeded repetitions).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError, NumericalError, UnknownNameError
from robodyn.identification.identify import identify
from robodyn.signals import Step
from swing_files import write_swing  # tests/swing_files.py

TRUTH = {"J": 0.01, "b": 0.1, "k": 1.0}  # the seed joint: omega_n = 10 rad/s, zeta = 0.5
GUESS = {"J": 0.02, "b": 0.05, "k": 1.5}


def _step_response(times: np.ndarray, noise: float = 0.0, seed: int = 0) -> dict[str, np.ndarray]:
    """The joint's angle after a unit torque step from rest at the first sample from t = 0.1 s on (so that the
    torque column held between samples is the torque applied), sampled at ``times``, plus noise of ``noise`` times
    the response's peak; the applied torque as a column."""
    joint = robodyn.load("joint")
    at = float(times[np.searchsorted(times, 0.1)])
    run = robodyn.simulate(joint, (float(times[0]), float(times[-1])), {"q": 0.0, "q_dot": 0.0},
                           {"u": Step(at=at, before=0.0, after=1.0)}, method="dopri5", rtol=1e-10, atol=1e-12,
                           t_eval=times)
    q = run.state("q")
    rng = np.random.default_rng(seed)
    return {"t": times, "q": q + noise * np.abs(q).max() * rng.standard_normal(times.size),
            "u": np.where(times >= at, 1.0, 0.0)}


@pytest.fixture(scope="module")
def joint_guess() -> robodyn.Model:
    return robodyn.load("joint").with_parameters(GUESS)


def test_noise_free_data_give_the_truth(joint_guess):
    """A step response without noise: J, b, k to 1e-6 (the data's and the fit's integration errors at rtol 1e-10
    and 1e-8 bound it)."""
    result = identify(joint_guess, _step_response(np.linspace(0.0, 2.0, 201)), ["J", "b", "k"])
    for name, value in TRUTH.items():
        assert result.values[name] == pytest.approx(value, rel=1e-6)
    assert result.cost < 1e-12 and result.degrees_of_freedom == 201 - 3
    assert set(result.model.parameters) >= set(TRUTH)
    assert result.model.parameters["k"] == pytest.approx(1.0, rel=1e-6)  # the model carries the estimates


def test_estimates_and_standard_errors_agree_with_the_monte_carlo_spread(joint_guess):
    """1% output noise, 100 seeded repetitions: each estimate within 3 standard errors of the truth in at least
    95 of them (a Gaussian gives 99.7), and the mean standard error within 20% of the estimates' spread."""
    times = np.linspace(0.0, 2.0, 201)
    estimates, errors = [], []
    for seed in range(100):
        result = identify(joint_guess, _step_response(times, 0.01, seed), ["J", "b", "k"])
        estimates.append([result.values[n] for n in TRUTH])
        errors.append([result.standard_errors[n] for n in TRUTH])
    estimates, errors = np.array(estimates), np.array(errors)
    truth = np.array(list(TRUTH.values()))
    covered = np.abs(estimates - truth) <= 3 * errors
    assert covered.mean(axis=0).min() >= 0.95, covered.mean(axis=0)
    spread = estimates.std(axis=0, ddof=1)
    # 100 repetitions: the spread itself is known to ~7% (1/sqrt(2 (N-1))), so 20% is three of its own errors
    np.testing.assert_allclose(errors.mean(axis=0), spread, rtol=0.2)


def test_the_correlation_matrix_is_symmetric_with_a_unit_diagonal(joint_guess):
    result = identify(joint_guess, _step_response(np.linspace(0.0, 2.0, 201), 0.01, 3), ["J", "b", "k"])
    C = result.correlation
    np.testing.assert_allclose(C, C.T, atol=1e-12)
    np.testing.assert_allclose(np.diag(C), 1.0)
    assert np.all(np.abs(C) <= 1.0 + 1e-12)
    sigma = np.sqrt(np.diag(result.covariance))
    np.testing.assert_allclose(sigma, [result.standard_errors[n] for n in TRUTH])
    assert result.noise["q"] == pytest.approx(0.01 * np.abs(_step_response(np.linspace(0, 2, 201))["q"]).max(),
                                              rel=0.2)  # the estimated noise level: 201 samples, ~5% of itself


def test_irregular_samples_and_two_data_sets(joint_guess):
    """Samples at irregular times, split into two runs (the second from its own rest): the truth again."""
    rng = np.random.default_rng(4)
    times = np.sort(rng.uniform(0.0, 2.0, 300))
    times[0] = 0.0
    first = _step_response(times)
    second = _step_response(np.linspace(0.0, 1.0, 60))
    result = identify(joint_guess, [first, second], ["J", "b", "k"])
    for name, value in TRUTH.items():
        assert result.values[name] == pytest.approx(value, rel=1e-6)
    assert len(result.fitted) == 2 and result.samples == 300 + 60


def test_initial_states_are_fitted_with_the_parameters():
    """A pendulum released from an unknown angle: its length and theta(0) from the angle alone."""
    pendulum = robodyn.load("pendulum")
    times = np.linspace(0.0, 3.0, 151)
    true = pendulum.with_parameters({"l": 0.8})
    run = robodyn.simulate(true, 3.0, {"theta": 0.6}, rtol=1e-10, atol=1e-12, t_eval=times)
    data = {"t": times, "theta": run.state("theta")}
    result = identify(pendulum, data, ["l"], x0=["theta"], initial={"theta": 0.4})
    assert result.values["l"] == pytest.approx(0.8, rel=1e-6)
    assert result.values["theta(0)"] == pytest.approx(0.6, rel=1e-6)


def test_a_trajectory_is_data_too(joint_guess):
    joint = robodyn.load("joint")
    times = np.linspace(0.0, 2.0, 101)
    run = robodyn.simulate(joint, 2.0, {"q": 0.0}, {"u": Step(at=0.1, before=0.0, after=1.0)}, rtol=1e-10,
                           atol=1e-12, t_eval=times)
    # a trajectory's columns: every state (here also the outputs q, q_dot) and the input u
    result = identify(joint_guess.with_parameters({"J": 0.01, "b": 0.1}), run, ["k"])
    assert result.values["k"] == pytest.approx(1.0, rel=1e-6)


def test_the_report_shows_the_fit(joint_guess, tmp_path):
    result = identify(joint_guess, _step_response(np.linspace(0.0, 2.0, 201), 0.01, 1), ["J", "b", "k"])
    path = tmp_path / "fit.html"
    result.report(path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.count("<svg") == 1
    for name in ("J", "b", "k", "standard error", "measured - fitted"):
        assert name in text
    assert "J" in result.text() and "+/-" in result.text()


def test_the_report_plays_the_fitted_run_in_3d_when_given_its_view(tmp_path):
    """``result.report(path, view=robodyn.view(...))`` shows the robot file's shapes playing the fitted run, as
    ``robodyn identify --report`` does; without ``view`` the report has none, and a view that is no page is refused
    before anything is written."""
    import html
    import json
    import re

    pytest.importorskip("trimesh")
    write_swing(tmp_path)
    model = robodyn.load(str(tmp_path / "swing_driven.yaml"))
    times = np.linspace(0.0, 1.0, 51)
    step = {"u": Step(at=0.1, before=0.0, after=1.0)}
    measured = robodyn.simulate(model.with_parameters({"drive.k": 0.5}), 1.0, None, step, t_eval=times, rtol=1e-10,
                                atol=1e-12)
    data = {"t": times, "q": measured.y[:, 0], "u": np.where(times >= 0.1, 1.0, 0.0)}
    result = identify(model, data, ["drive.k"])
    path, plain = tmp_path / "fit.html", tmp_path / "plain.html"
    result.report(path, view=robodyn.view(result.model, result.fitted[0]))
    result.report(plain)
    page = path.read_text(encoding="utf-8")
    assert page.count("<iframe") == 1 and "<h2>The robot in 3-D</h2>" in page and page.count("<svg") == 1
    assert "<iframe" not in plain.read_text(encoding="utf-8")
    (srcdoc,) = re.findall(r'<iframe srcdoc="([^"]*)"', page)
    scene = json.loads(re.search(r'<script id="robodyn-scene" type="application/json">(.*?)</script>',
                                 html.unescape(srcdoc), flags=re.S).group(1))
    assert scene["links"][-1] == "arm.rod" and scene["shapes"][0]["shape"] == "cylinder"
    assert scene["times"][0] == 0.0 and scene["times"][-1] == 1.0  # the fitted run, from its first to last sample
    with pytest.raises(InputError, match=r"view must be a page made by robodyn\.view"):
        result.report(tmp_path / "refused.html", view="<script>")
    assert not (tmp_path / "refused.html").exists()


# --- bad input ---------------------------------------------------------------------------------------------------
def test_columns_that_match_no_output_or_input_are_named(joint_guess):
    data = _step_response(np.linspace(0.0, 1.0, 50))
    data["angle"] = data.pop("q")
    with pytest.raises(UnknownNameError, match="'angle' is neither an output nor an input"):
        identify(joint_guess, data, ["k"])


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: d["t"].__setitem__(5, d["t"][4]), "repeats"),
    (lambda d: d["t"].__setitem__(5, d["t"][3]), "goes back"),
    (lambda d: d["q"].__setitem__(7, np.nan), "row 7"),
])
def test_bad_times_and_nan_are_refused_with_their_row(joint_guess, change, words):
    data = _step_response(np.linspace(0.0, 1.0, 50))
    data = {k: np.array(v) for k, v in data.items()}
    change(data)
    with pytest.raises(InputError, match=words):
        identify(joint_guess, data, ["k"])


def test_nan_in_a_csv_names_its_line(joint_guess, tmp_path):
    data = _step_response(np.linspace(0.0, 1.0, 20))
    lines = ["t,q,u", *(f"{t!r},{q!r},{u!r}" for t, q, u in zip(*(data[k].tolist() for k in "tqu")))]
    lines[9] = lines[9].split(",")[0] + ",nan,0.0"
    path = tmp_path / "run.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"run\.csv:10: q not finite"):
        identify(joint_guess, str(path), ["k"])


def test_parameters_the_data_cannot_tell_apart_are_named():
    """y' = -a b y: only the product a b shows in the data; a and b are refused together."""
    model = robodyn.read_model_text("name: decay\nkind: first_order\nparameters: {a: 1.0, b: 2.0}\nstates: [y]\n"
                                    "dynamics: {y: -a*b*y}\n")
    times = np.linspace(0.0, 1.0, 40)
    data = {"t": times, "y": np.exp(-3.0 * times)}
    with pytest.raises(InputError, match=r"cannot tell (a, b|b, a) apart"):
        identify(model, data, ["a", "b"], initial={"y": 1.0})
    assert identify(model, data, ["a"], initial={"y": 1.0}).values["a"] == pytest.approx(1.5, rel=1e-6)


def test_a_fit_that_does_not_converge_says_where_it_stopped(joint_guess):
    data = _step_response(np.linspace(0.0, 2.0, 201), 0.01, 2)
    with pytest.raises(NumericalError, match=r"did not converge.*last cost .*gradient norm"):
        identify(joint_guess, data, ["J", "b", "k"], max_evaluations=2)


@pytest.mark.parametrize(("parameters", "words"), [([], "name the parameters"), (["m"], "not a parameter"),
                                                   (["k", "k"], "twice")])
def test_bad_parameter_lists(joint_guess, parameters, words):
    with pytest.raises(InputError, match=words):
        identify(joint_guess, _step_response(np.linspace(0.0, 1.0, 30)), parameters)


def test_a_derived_parameter_is_not_fitted():
    pendulum = robodyn.load("pendulum")
    derived = next(iter(pendulum.derived_parameters), None)
    if derived is None:
        pytest.skip("the catalog pendulum has no derived parameter")
    with pytest.raises(InputError, match="is derived"):
        identify(pendulum, {"t": [0.0, 1.0, 2.0], "theta": [0.0, 0.0, 0.0]}, [derived])


def test_bounds_hold_the_estimates(joint_guess):
    data = _step_response(np.linspace(0.0, 2.0, 201), 0.01, 5)
    result = identify(joint_guess, data, ["J", "b", "k"], bounds={"k": (1.2, 2.0)})  # the truth (1) left out
    assert result.values["k"] == pytest.approx(1.2, rel=1e-6)  # the best fit within them: on the bound
    assert math.isfinite(result.cost)


def test_input_columns_choose_what_is_applied(joint_guess):
    """A column of an input left out of input_columns is not applied: that input is 0 (or a given signal)."""
    data = _step_response(np.linspace(0.0, 2.0, 201))
    at = float(data["t"][np.searchsorted(data["t"], 0.1)])
    given = identify(joint_guess, data, ["J", "b", "k"], input_columns=[],
                     inputs={"u": Step(at=at, before=0.0, after=1.0)})
    assert given.values["k"] == pytest.approx(1.0, rel=1e-6)  # the same torque, as a signal
    with pytest.raises(UnknownNameError, match="not an input"):
        identify(joint_guess, data, ["k"], input_columns=["torque"])


def test_the_result_displays_itself(joint_guess):
    result = identify(joint_guess, _step_response(np.linspace(0.0, 2.0, 101)), ["k"])
    page = result._repr_html_()
    assert page.startswith('<div class="robodyn">') and "<table" in page and "+/-" in page


def test_a_noise_level_for_an_output_not_measured_is_refused(joint_guess):
    with pytest.raises(UnknownNameError, match="'angle', which is not a measured output"):
        identify(joint_guess, _step_response(np.linspace(0.0, 1.0, 30)), ["k"], noise={"q": 0.01, "angle": 0.01})
