"""Wrong-type and wrong-shape arguments at the API boundary (issue 22): robodyn's own errors, never a library's
TypeError, ValueError or AttributeError. Each case is one call a careless user could make."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import RobodynError


@pytest.fixture(scope="module")
def models():
    warnings.simplefilter("ignore", robodyn.RobodynWarning)
    pendulum, joint, arm = robodyn.load("pendulum"), robodyn.load("joint"), robodyn.load("two_link_arm")
    return {"p": pendulum, "arm": arm, "lin": robodyn.linearize(joint, [0, 0]),
            "run": robodyn.simulate(pendulum, 1.0)}


CASES = {
    "simulate with x0 of shape (0, 2)": lambda m: robodyn.simulate(m["p"], 1.0, np.zeros((0, 2))),
    "simulate with t_span of 3 values": lambda m: robodyn.simulate(m["p"], (0, 1, 2)),
    "simulate with a number as method": lambda m: robodyn.simulate(m["p"], 1.0, method=5),
    "simulate with text as rtol": lambda m: robodyn.simulate(m["p"], 1.0, rtol="a"),
    "simulate with text as t_eval": lambda m: robodyn.simulate(m["p"], 1.0, t_eval="a"),
    "simulate with a number as events": lambda m: robodyn.simulate(m["p"], 1.0, events=5),
    "simulate a catalog name": lambda m: robodyn.simulate("pendulum", 1.0),
    "linearize at text": lambda m: robodyn.linearize(m["p"], "a"),
    "linearize None": lambda m: robodyn.linearize(None, [0, 0]),
    "find_equilibrium with a list as fix": lambda m: robodyn.find_equilibrium(m["p"], fix=[1, 2]),
    "validity with text as tolerance": lambda m: robodyn.validity(m["p"], [0, 0], tolerance="a"),
    "modes of text": lambda m: robodyn.modes("a"),
    "existence with text as radius": lambda m: robodyn.existence(m["p"], [0, 0], "a"),
    "load a number": lambda m: robodyn.load(5),
    "load_file of a number": lambda m: robodyn.load_file(5),
    "read_model_text of a number": lambda m: robodyn.read_model_text(5),
    "with_parameters of text": lambda m: m["p"].with_parameters({"m": "a"}),
    "f at text time": lambda m: m["p"].f("a", [0, 0]),
    "SymbolicSystem with a number as states": lambda m: robodyn.SymbolicSystem(5, None, {}),
    "lqr with text as Q": lambda m: robodyn.lqr(m["lin"], "a", 1),
    "discretize with text as dt": lambda m: m["lin"].discretize("a"),
    "step_info with text as T": lambda m: m["lin"].step_info(T="a"),
    "LinearSystem of text": lambda m: robodyn.LinearSystem("a"),
    "StateFeedback of text": lambda m: robodyn.StateFeedback("a"),
    "pose at text": lambda m: robodyn.Kinematics(m["arm"]).pose("a"),
    "inverse_kinematics to a text target": lambda m: robodyn.inverse_kinematics(m["arm"], "1,0,0"),
    "animate text": lambda m: robodyn.animate("run"),
    "sweep a number": lambda m: robodyn.sweep(5, {}, 1),
    "Trajectory.plot of a number": lambda m: m["run"].plot(names=5),
    "Trajectory.at text": lambda m: m["run"].at("a"),
    "Trajectory.to_csv to /dev/null": lambda m: m["run"].to_csv("/dev/null"),
    "Trajectory.state of a number": lambda m: m["run"].state(5),
    "mass_matrix at text": lambda m: m["arm"].mass_matrix("a"),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_bad_argument_is_robodyns_own_error(models, case):
    with pytest.raises(RobodynError):
        CASES[case](models)
