"""Joint position limits in simulate (issue 23): a warning when a run leaves them, terminal events on request."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError, RobodynWarning
from robodyn.cli import main

ARM = Path(__file__).resolve().parents[2] / "examples" / "two_link_arm.urdf"  # shoulder in [-3.14, 3.14]


def test_a_run_past_a_joint_limit_warns_with_the_joint_the_time_and_the_value():
    arm = robodyn.load(str(ARM))
    with pytest.warns(RobodynWarning, match=r"shoulder went below its limit -3.14 at t = 1\.0\d+ \(-3\.2") as caught:
        run = robodyn.simulate(arm, 3.0, {"shoulder": 0.3})
    assert len(caught) == 1
    first = np.flatnonzero(run.state("shoulder") < -3.14)[0]  # the sentence names the first stored time past it
    assert f"t = {run.t[first]:.6g}" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RobodynWarning)
        robodyn.simulate(arm, 0.2, {"shoulder": 0.3})  # stays inside: no warning
        robodyn.simulate(arm, 3.0, {"shoulder": 0.3}, limits="ignore")


def test_limits_as_events_stop_the_run_exactly_at_the_limit():
    arm = robodyn.load(str(ARM))
    run = robodyn.simulate(arm, 3.0, {"shoulder": 0.3}, limits="events", rtol=1e-10, atol=1e-12)
    (event,) = run.events
    assert event.name == "shoulder_lower" and event.terminal
    assert event.x[0] == pytest.approx(-3.14, abs=1e-9) and run.t[-1] == pytest.approx(event.t)
    free = robodyn.simulate(arm, event.t, {"shoulder": 0.3}, rtol=1e-10, atol=1e-12, limits="ignore")
    assert free.final[0] == pytest.approx(-3.14, abs=1e-7)  # the same motion reaches the limit then
    both = robodyn.simulate(arm, 3.0, {"shoulder": 0.3}, events=["elbow - 10"], limits="events")
    assert [e.name for e in both.events] == ["shoulder_lower"]  # the user's events are kept beside the limits'


def test_limits_of_a_batch_count_the_runs_that_left_them():
    arm = robodyn.load(str(ARM))
    with pytest.warns(RobodynWarning, match="in 1 of 2 runs"):
        robodyn.simulate(arm, 3.0, np.array([[0.3, 0.0, 0.0, 0.0], [-1.5707963, 0.0, 0.0, 0.0]]))


def test_limits_is_checked():
    with pytest.raises(InputError, match="use warn, events, ignore"):
        robodyn.simulate(robodyn.load("pendulum"), 1.0, limits="stop")


def test_the_cli_prints_the_warning_and_stops_at_the_limit_on_request(capsys):
    assert main(["simulate", str(ARM), "--t-final", "3", "--x0", "shoulder=0.3"]) == 0
    out = capsys.readouterr().out
    assert "warning: model 'two_link_arm': the run left the joints' position limits" in out
    assert main(["simulate", str(ARM), "--t-final", "3", "--x0", "shoulder=0.3", "--limits", "events"]) == 0
    out = capsys.readouterr().out
    assert "event shoulder_lower at t = 1.0" in out and "warning" not in out
