"""The registry of integration methods: complete, consistent with the older name lists, and every entry runs."""

from __future__ import annotations

import argparse
import dataclasses
import math

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError
from robodyn.cli import build_parser
from robodyn.integrate import simulate as simulate_module
from robodyn.integrate.methods import tableaus
from robodyn.integrate.methods.registry import (
    ALIASES,
    FAMILIES,
    METHOD_NAMES,
    REGISTRY,
    TABLEAUS,
    Method,
    lookup,
    names,
)
from robodyn.integrate.paths import stiff

ORDER = ("euler", "heun", "rk4", "dopri5", "dop853", "radau", "rosenbrock", "scipy-radau", "scipy-bdf", "lsoda",
         "exact", "discrete")
CONTINUOUS = ORDER[:-1]  # the methods of continuous-time models ("discrete" steps discrete-time ones only)
FAMILY_OF = {"euler": "fixed", "heun": "fixed", "rk4": "fixed", "dopri5": "adaptive", "dop853": "adaptive",
             "radau": "implicit", "rosenbrock": "implicit", "scipy-radau": "stiff", "scipy-bdf": "stiff",
             "lsoda": "stiff", "exact": "exact", "discrete": "discrete"}
PATH_OF = {"fixed": "compiled", "adaptive": "compiled", "implicit": "compiled", "stiff": "stiff",
           "exact": "exact"}  # for the seed joint
# Largest error at t = 0.5 on the seed joint (dt = 1e-3, default tolerances), measured: euler 1.9e-2, heun 7e-5,
# bdf 8e-6, dopri5 1.1e-6, exact 2e-15.
TOLERANCE = {"fixed": 5e-2, "adaptive": 1e-4, "implicit": 1e-4, "stiff": 1e-4, "exact": 1e-12}
T_FINAL = 0.5
NAMES = ", ".join(ORDER)


def joint_step_response(t: float, J: float = 0.01, b: float = 0.1, k: float = 1.0) -> np.ndarray:
    """[q, q'] of J q'' + b q' + k q = 1 from rest (underdamped), at time t."""
    wn, zeta = math.sqrt(k / J), b / (2.0 * math.sqrt(k * J))
    sigma, wd = zeta * wn, wn * math.sqrt(1.0 - zeta**2)
    decay = math.exp(-sigma * t)
    return np.array([(1.0 - decay * (math.cos(wd * t) + sigma / wd * math.sin(wd * t))) / k,
                     decay * wn**2 / wd * math.sin(wd * t) / k])


def options(method: Method) -> dict[str, float]:
    """The options a method's family needs: fixed steps take dt."""
    return {"dt": 1e-3} if method.family == "fixed" else {}


# --- the registry -------------------------------------------------------------------------------------
def test_registry_lists_every_method_in_order() -> None:
    assert tuple(REGISTRY) == ORDER == METHOD_NAMES
    assert simulate_module.METHOD_NAMES == ORDER
    assert {name: method.family for name, method in REGISTRY.items()} == FAMILY_OF
    assert all(name == method.name and method.description for name, method in REGISTRY.items())
    assert set(FAMILIES) == set(FAMILY_OF.values())


def test_registry_is_read_only() -> None:
    with pytest.raises(TypeError):
        REGISTRY["rk45"] = REGISTRY["dopri5"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        REGISTRY["rk4"].family = "adaptive"  # type: ignore[misc]


def test_explicit_methods_carry_their_tableaus() -> None:
    assert tableaus.METHODS is TABLEAUS  # the old name is the registry's view, not a copy
    assert list(TABLEAUS) == ["euler", "heun", "rk4", "dopri5", "dop853"]
    for name, method in REGISTRY.items():
        if method.family in ("fixed", "adaptive"):
            assert method.tableau is not None and method.tableau.name == name and method.scipy_name is None
            assert TABLEAUS[name] is method.tableau
            assert method.tableau.adaptive == (method.family == "adaptive")
        else:
            assert method.tableau is None and name not in TABLEAUS


def test_old_name_lists_are_derived_from_the_registry() -> None:
    assert tableaus.FIXED_STEP == names("fixed") == ("euler", "heun", "rk4")
    assert tableaus.ADAPTIVE == names("adaptive") == ("dopri5", "dop853")
    assert dict(stiff.STIFF_METHODS) == {"scipy-radau": "Radau", "scipy-bdf": "BDF", "lsoda": "LSODA"}
    assert dict(stiff.STIFF_METHODS) == {n: m.scipy_name for n, m in REGISTRY.items() if m.family == "stiff"}
    assert names("exact") == ("exact",)
    with pytest.raises(AttributeError, match="no attribute 'STIFF'"):
        tableaus.STIFF  # noqa: B018


def test_stiff_methods_name_solvers_scipy_has() -> None:
    from scipy.integrate._ivp.ivp import METHODS as SCIPY_METHODS

    assert all(stiff.STIFF_METHODS[name] in SCIPY_METHODS for name in names("stiff"))


def test_every_family_has_a_runner() -> None:
    assert set(simulate_module._RUNNERS) == set(FAMILIES)


@pytest.mark.parametrize(("fields", "match"), [
    ({"name": "rk4", "family": "semi-implicit", "tableau": tableaus.RK4},
     "not one of fixed, adaptive, implicit, stiff, exact"),
    ({"name": "rk4", "family": "fixed"}, "fixed and adaptive methods have a tableau"),
    ({"name": "radau", "family": "stiff"}, "stiff methods a scipy_name"),
    ({"name": "exact", "family": "exact", "scipy_name": "Radau"}, "no other method either"),
    ({"name": "rk4", "family": "fixed", "tableau": tableaus.RK4, "scipy_name": "RK45"}, "no other method"),
    ({"name": "rk4", "family": "adaptive", "tableau": tableaus.RK4}, "does not fit the family 'adaptive'"),
    ({"name": "dopri5", "family": "fixed", "tableau": tableaus.DOPRI5}, "does not fit the family 'fixed'"),
    ({"name": "euler", "family": "fixed", "tableau": tableaus.HEUN}, "its tableau is 'heun'"),
])
def test_inconsistent_entries_are_refused(fields: dict[str, object], match: str) -> None:
    with pytest.raises(InputError, match=match):
        Method(description="test", **fields)  # type: ignore[arg-type]


# --- lookup ---------------------------------------------------------------------------------------------
def test_lookup_ignores_case() -> None:
    assert lookup("RK4") is REGISTRY["rk4"] and lookup("Dopri5") is REGISTRY["dopri5"]


def test_earlier_names_are_aliases() -> None:
    assert lookup("bdf") is lookup("BDF") is REGISTRY["scipy-bdf"]


@pytest.mark.parametrize(("method", "message"), [
    ("rk45", f"unknown method 'rk45': one of {NAMES}"),
    (4, f"method must be a name, one of {NAMES}; got 4"),
    (None, f"method must be a name, one of {NAMES}; got None"),
])
def test_lookup_errors_name_the_methods(method: object, message: str) -> None:
    with pytest.raises(InputError) as raised:
        lookup(method)
    assert str(raised.value) == message


@pytest.mark.parametrize("method", ["rk45", 4])
def test_simulate_gives_the_lookup_errors(method: object) -> None:
    with pytest.raises(InputError) as expected:
        lookup(method)
    with pytest.raises(InputError) as raised:
        robodyn.simulate(robodyn.load("joint"), 1.0, method=method)  # type: ignore[arg-type]
    assert str(raised.value) == str(expected.value)


# --- every method runs ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", CONTINUOUS)
def test_every_method_simulates_the_seed_joint(name: str) -> None:
    method = REGISTRY[name]
    trajectory = robodyn.simulate(robodyn.load("joint"), T_FINAL, None, 1.0, method=name, **options(method))
    assert trajectory.stats.method == name and trajectory.stats.path == PATH_OF[method.family]
    assert trajectory.t[0] == 0.0 and trajectory.t[-1] == T_FINAL
    np.testing.assert_allclose(trajectory.final, joint_step_response(T_FINAL), rtol=0, atol=TOLERANCE[method.family])


@pytest.mark.parametrize("name", CONTINUOUS)
def test_every_method_simulates_a_batch(name: str) -> None:
    method = REGISTRY[name]
    batch = robodyn.simulate(robodyn.load("joint"), T_FINAL, None, 1.0, method=name, params={"k": [1.0, 4.0]},
                             **options(method))
    assert batch.stats.method == name and batch.stats.path == PATH_OF[method.family]
    assert batch.x.shape[:1] == (2,) and batch.t[-1] == T_FINAL
    for row, k in enumerate((1.0, 4.0)):
        np.testing.assert_allclose(batch.x[row, -1], joint_step_response(T_FINAL, k=k), rtol=0,
                                   atol=TOLERANCE[method.family])


# --- the command line -------------------------------------------------------------------------------------
def test_cli_method_choices_are_the_registry() -> None:
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    simulate_command = commands.choices["simulate"]
    (choices,) = [action.choices for action in simulate_command._actions if action.dest == "method"]
    assert tuple(choices) == (*REGISTRY, *ALIASES)  # the registry, then the earlier names it still accepts
