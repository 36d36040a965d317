"""Fused batch kernels (robodyn.integrate.kernels.fused, fused_ir): the shared kernel's runs, bit for bit, or not used
at all.

The reference is the shared adaptive kernel itself (``ROBODYN_FUSED=0``), an independent implementation of the
same controller and dense output: the fused kernel must give identical arrays, counts and failures. The
shared kernel is in turn checked against scipy and closed forms (test_kernels.py, test_simulate.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import NumericalError
from robodyn.integrate.events import resolve_events
from robodyn.integrate.kernels import fused as fused_module
from robodyn.integrate.kernels.fused import fused_batch
from robodyn.integrate.kernels.fused_ir import fused_ir
from robodyn.integrate.kernels.run import kernel_module
from robodyn.integrate.methods.registry import TABLEAUS
from robodyn.signals import Step
from robodyn.signals.inputs import resolve_inputs

pytestmark = pytest.mark.filterwarnings("ignore::robodyn.base.errors.RobodynWarning")


def _both(monkeypatch: pytest.MonkeyPatch, *args, **kwargs):
    """The batch run fused (and checked that it was) and run by the shared kernel."""
    calls = []
    original = fused_module.FusedBatch.chunk

    def spy(self, *a):
        calls.append(a[:2])
        return original(self, *a)

    monkeypatch.setattr(fused_module.FusedBatch, "chunk", spy)
    fused = robodyn.simulate(*args, **kwargs)
    assert calls, "the batch did not run the fused kernel"
    monkeypatch.setenv("ROBODYN_FUSED", "0")
    calls.clear()
    shared = robodyn.simulate(*args, **kwargs)
    assert not calls
    monkeypatch.delenv("ROBODYN_FUSED")
    return fused, shared


def _same(a, b) -> None:
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.x, b.x)  # bit for bit: the same operations in the same order
    np.testing.assert_array_equal(a.u, b.u)
    assert (a.stats.steps, a.stats.nfev, a.stats.rejected) == (b.stats.steps, b.stats.nfev, b.stats.rejected)


@pytest.mark.parametrize("name, n", [("pendulum", 400), ("double_pendulum", 200), ("cart_pole", 100)])
def test_catalog_batches_equal_the_shared_kernel(monkeypatch, name, n):
    model = robodyn.load(name)
    rng = np.random.default_rng(3)
    x0 = rng.uniform(-1.5, 1.5, (n, model.n_states))
    a, b = _both(monkeypatch, model, 4.0, x0, method="dopri5", rtol=1e-7, atol=1e-9)
    _same(a, b)
    assert a.stats.rejected > 0  # the rejection branch ran too


def test_parameters_inputs_tolerances_and_output_times(monkeypatch):
    """Parameters per trajectory, a constant nonzero input, a per-state atol, t0 > 0, outputs at t0, t1 and
    between on an uneven grid: everything the fused kernel takes."""
    model = robodyn.load("pendulum")
    n = 64
    params = {"l": np.linspace(0.5, 2.0, n), "m": np.linspace(1.0, 3.0, n)}
    t_eval = np.array([0.5, 0.5000001, 0.7, 1.9, 3.0, 3.25])
    a, b = _both(monkeypatch, model, (0.5, 3.25), {"theta": np.linspace(-3, 3, n)}, {"tau": 0.7}, method="dopri5",
                 rtol=1e-9, atol=[1e-11, 1e-8], t_eval=t_eval, params=params)
    _same(a, b)
    np.testing.assert_array_equal(a.u[:, :, 0], 0.7)


def test_an_input_that_steps_before_the_run_is_constant_over_it(monkeypatch):
    model = robodyn.load("joint")
    a, b = _both(monkeypatch, model, (1.0, 3.0), np.zeros((8, 2)) + np.arange(8)[:, None] * 0.1,
                 Step(at=0.5, before=-1.0, after=2.0), method="dopri5")
    _same(a, b)
    np.testing.assert_array_equal(a.u, 2.0)


@pytest.mark.parametrize("max_steps", [3, 40])
def test_failures_are_the_shared_kernels(monkeypatch, max_steps):
    """A run that needs more steps than allowed fails with the same trajectory index and message."""
    model = robodyn.load("pendulum")
    x0 = {"theta": np.array([0.1, 3.0, 0.2])}
    errors = []
    for env in ("1", "0"):
        monkeypatch.setenv("ROBODYN_FUSED", env)
        with pytest.raises(NumericalError) as caught:
            robodyn.simulate(model, 50.0, x0, method="dopri5", rtol=1e-10, max_steps=max_steps)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert "trajectory" in errors[0]


def test_a_state_that_blows_up_fails_as_in_the_shared_kernel(monkeypatch, tmp_path):
    path = tmp_path / "blowup.yaml"
    path.write_text("name: blowup\nkind: first_order\nstates: [y]\nparameters: {k: 1.0}\ndynamics:\n  y: k*y**2\n")
    model = robodyn.load(str(path))
    errors, runs = [], []
    for env in ("1", "0"):
        monkeypatch.setenv("ROBODYN_FUSED", env)
        with pytest.raises(NumericalError) as caught:
            robodyn.simulate(model, 2.0, {"y": np.array([0.1, 0.2, 1.0])}, method="dopri5")
        errors.append(str(caught.value))
        runs.append(robodyn.simulate(model, 0.9, {"y": np.array([0.1, 0.2, 1.0])}, method="dopri5"))
    assert errors[0] == errors[1] and "trajectory 2" in errors[0]
    _same(*runs)


def _setup(model, u=None, events=None):
    return kernel_module(model, resolve_inputs(model.inputs, u), resolve_events(model, events))


def test_what_the_fused_kernel_does_not_cover_runs_the_shared_one():
    model = robodyn.load("pendulum")
    none = np.empty(0)
    assert fused_batch(_setup(model), "dopri5", (0.0, 1.0), none, 4) is not None
    assert fused_batch(_setup(model), "dop853", (0.0, 1.0), none, 4) is None  # DOP853's error estimate
    assert fused_batch(_setup(model), "radau", (0.0, 1.0), none, 4) is None
    assert fused_batch(_setup(model, events=["theta"]), "dopri5", (0.0, 1.0), none, 4) is None
    assert fused_batch(_setup(model), "dopri5", (0.0, 1.0), np.array([0.5]), 4) is None  # a stop point inside
    assert fused_batch(_setup(model), "dopri5", (0.0, 1.0), np.array([0.0, 1.0]), 4) is not None  # at the ends
    assert fused_batch(_setup(model, u=Step(at=0.5, before=0.0, after=1.0)), "dopri5", (0.0, 1.0), none, 4) \
        is not None  # the step is a stop point, given separately (run_batch passes it; then not fused)
    interpreted = kernel_module(model, resolve_inputs(model.inputs, None), resolve_events(model, None),
                                backend="interpreted")
    assert fused_batch(interpreted, "dopri5", (0.0, 1.0), none, 4) is None


def test_the_stages_stay_in_registers_and_the_tableau_is_constant():
    """The IR text holds the tableau's nonzero weights as exact constants and no loop over them; the model's
    function is inlined (internal, alwaysinline) under its own name."""
    from robodyn.model.compiled import rhs_ir

    model = robodyn.load("pendulum")
    text, symbol = fused_ir(*rhs_ir(model), 2, 1, 3, TABLEAUS["dopri5"].kernel_method()[0])
    assert symbol.startswith("robodyn_tape_rk_") and f"@{symbol}(" in text
    assert "define internal void @rk_model(" in text and "alwaysinline" in text
    assert "0x3FC999999999999A" in text  # 1/5 = A[1, 0], c[1]
    assert text.count("call void @rk_model(") == 1 + 1 + 6  # f(t0), the first-step probe, six stages
    assert fused_ir(*rhs_ir(model), 2, 1, 3, TABLEAUS["dopri5"].kernel_method()[0]) == (text, symbol)
