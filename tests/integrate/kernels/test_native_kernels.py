"""robodyn.integrate.kernels.native: the adaptive kernels' exported machine code against numba's kernel module.

Reference: the numba kernel module compiled from the same templates and called with the same model
functions (the same ``fns``). The C entry rebuilds the same arrays and runs the same code, so results
must be equal bit for bit: trajectories, inputs, events, counts and failures.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import NumericalError
from robodyn.integrate.events import resolve_events
from robodyn.integrate.kernels.module import kernel_module as numba_kernels
from robodyn.integrate.kernels.native import NativeKernels
from robodyn.integrate.kernels.run import kernel_module, run_adaptive, run_batch
from robodyn.signals import Sine, Step
from robodyn.signals.inputs import resolve_inputs

MODEL = robodyn.SymbolicSystem(["q", "w"], ["tau"], {"q": "w", "w": "-k*sin(q) - c*w + tau"},
                               parameters={"k": 9.81, "c": 0.3}, name="native_probe")
STIFF = robodyn.SymbolicSystem(["a", "b"], ["v"], {"a": "-1000*(a - cos(t)) + b", "b": "-b + v"}, name="stiff_probe")


def _setups(model: robodyn.Model, u: object, events: object, jacobian: bool):
    setup = kernel_module(model, resolve_inputs(model.inputs, u), resolve_events(model, events), jacobian=jacobian)
    assert isinstance(setup.module, NativeKernels)
    return setup, dataclasses.replace(setup, module=numba_kernels())


def _equal(a: object, b: object) -> None:
    for name in ("t", "x", "u"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), strict=True)
    assert (a.nfev, a.steps, a.rejected, a.njev, a.nlu) == (b.nfev, b.steps, b.rejected, b.njev, b.nlu)
    assert [(e.name, e.t, e.x.tolist()) for e in a.events] == [(e.name, e.t, e.x.tolist()) for e in b.events]


@pytest.mark.parametrize("method", ["dopri5",  # the other kernels (dop853 ~10 s, the implicit ~25 s cold): -m slow
                                    pytest.param("dop853", marks=pytest.mark.slow),
                                    pytest.param("radau", marks=pytest.mark.slow),
                                    pytest.param("rosenbrock", marks=pytest.mark.slow)])
def test_the_exported_kernels_equal_numbas_bit_for_bit(method: str) -> None:
    model = STIFF if method in ("radau", "rosenbrock") else MODEL
    u = Step(0.7, 0.0, 0.5) + Sine(amplitude=0.2, frequency=1.5)
    events = [robodyn.Event(f"{model.states[0]} - 0.5", terminal=False), robodyn.Event(f"{model.states[1]} + 2")]
    native, reference = _setups(model, u, events, jacobian=method in ("radau", "rosenbrock"))
    x0, p = np.array([1.0, 0.0]), model.parameter_vector()
    for t_eval in (np.empty(0), np.linspace(0.0, 3.0, 31)):
        stops = resolve_inputs(model.inputs, u).breakpoints(0.0, 3.0)
        args = (method, (0.0, 3.0), x0, p, stops, t_eval, 1e-7, np.full(2, 1e-9), 100_000)
        _equal(run_adaptive(native, *args), run_adaptive(reference, *args))


def test_a_batch_in_threads_equals_numbas_batch() -> None:
    native, reference = _setups(MODEL, None, None, jacobian=False)
    rng = np.random.default_rng(4)
    x0, p = rng.uniform(-2, 2, (40, 2)), np.tile(MODEL.parameter_vector(), (40, 1))
    t_eval = np.linspace(0.0, 5.0, 51)
    args = ("dopri5", (0.0, 5.0), x0, p, np.empty(0), t_eval, 1e-8, np.full(2, 1e-10), 100_000, None)
    t_a, xs_a, us_a, totals_a, _ = run_batch(native, *args)
    t_b, xs_b, us_b, totals_b, _ = run_batch(reference, *args)
    np.testing.assert_array_equal(t_a, t_b)
    np.testing.assert_array_equal(xs_a, xs_b)
    np.testing.assert_array_equal(us_a, us_b)
    assert {k: totals_a[k] for k in ("nfev", "steps", "rejected")} == {k: totals_b[k] for k in ("nfev", "steps",
                                                                                                   "rejected")}


def test_a_failure_is_the_same_status_and_message() -> None:
    native, reference = _setups(MODEL, None, None, jacobian=False)
    args = ("dopri5", (0.0, 10.0), np.array([1.0, 0.0]), MODEL.parameter_vector(), np.empty(0), np.empty(0), 1e-9,
            np.full(2, 1e-12), 20)
    with pytest.raises(NumericalError) as first:
        run_adaptive(native, *args)
    with pytest.raises(NumericalError) as second:
        run_adaptive(reference, *args)
    assert str(first.value) == str(second.value)


def test_fixed_step_kernels_are_numbas() -> None:
    native, _ = _setups(MODEL, None, None, jacobian=False)
    assert native.module.fixed_run is numba_kernels().fixed_run


def test_simulate_runs_the_exported_kernels_and_switching_them_off_gives_the_same_result(monkeypatch) -> None:
    on = robodyn.simulate(MODEL, (0.0, 4.0), x0=[1.0, 0.0], u=0.1)
    monkeypatch.setenv("ROBODYN_NATIVE", "0")
    off = robodyn.simulate(MODEL, (0.0, 4.0), x0=[1.0, 0.0], u=0.1)
    np.testing.assert_allclose(on.x, off.x, rtol=1e-13, atol=1e-13)  # the rhs compiled by LLVM or by numba
    assert on.stats.steps == off.stats.steps
