"""The compiled sample of the estimator blocks (robodyn.control.estimation.compiled) against the blocks' Python path
(``compiled=False``: numpy, scipy's expm and Cholesky per sample) step by step, from the same block state and
inputs at every step: the pendulum, the cart-pole, the Panda (example-robot-data's, fingers fixed; -m slow), a
chain whose measured outputs are not its states (the tool position of examples/arm_with_tip.yaml), the UKF
(robodyn.control.estimation.compiled_ukf) and the linear filter. The compiled filters against filterpy are
tests/control/estimation/test_estimator_blocks.py (the blocks' default path).

Tolerance: 1e-12 of max(1, |value|). The mean is the same RK4 through the same machine code (equal bit for bit);
Phi and Qd come from two backward-stable exponentials of the same matrix (Higham 2005 against Al-Mohy & Higham
2009) and the gain from two Cholesky solves: a few units of roundoff per step (measured: up to 6e-14 on the Panda,
4e-16 on the pendulum).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.base.errors import InputError, NumericalError
from robodyn.control.estimation import compiled, compiled_ukf
from robodyn.control.estimation.blocks import ekf, kalman, ukf
from robodyn.control.optimal.batch.points import ModelPoints

EXAMPLES = Path(__file__).parents[3] / "examples"
TOLERANCE = 1e-12  # of max(1, |value|): see the module docstring


def _spy(monkeypatch: pytest.MonkeyPatch, kind: type[compiled.CompiledSample]) -> list[float]:
    """The times at which ``kind``'s compiled sample runs."""
    calls: list[float] = []
    run = kind._run

    def counted(self: compiled.CompiledSample, t: float, z: np.ndarray, v: np.ndarray) -> bool:
        calls.append(t)
        return run(self, t, z, v)

    monkeypatch.setattr(kind, "_run", counted)
    return calls


def _step_by_step(fast: robodyn.System, python: robodyn.System, measured: list[int], inputs: np.ndarray,
                  noise: float, T: float) -> float:
    """The largest difference, relative to max(1, |value|), of the two blocks' outputs and next states over the
    samples of ``inputs`` (K, m), both from the Python path's state; the measurements are the prior's outputs
    plus seeded noise."""
    rng = np.random.default_rng(7)
    n = len([s for s in python.states if s.endswith("_prior")])
    z, p, worst = np.zeros(python.n_states), python.parameter_vector(), 0.0
    for k, u in enumerate(inputs):
        y = z[:n][measured] + noise * rng.standard_normal(len(measured)) if measured else np.zeros(0)
        v = np.concatenate([y, u])
        worst = max(worst, _gap(fast.h_raw(k * T, z, v, p), python.h_raw(k * T, z, v, p)))
        following = python.f_raw(k * T, z, v, p)
        worst = max(worst, _gap(fast.f_raw(k * T, z, v, p), following))
        z = following
    return worst


def _gap(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))


@pytest.mark.parametrize(("name", "T", "Qn", "Rn", "outputs", "substeps"), [
    ("pendulum", 0.01, {"theta_dot": 0.2}, {"theta": 1e-3}, ["theta"], 1),
    ("pendulum", 0.05, {"theta": 1e-3, "theta_dot": 0.2}, {"theta": 1e-3, "theta_dot": 1e-2}, None, 3),
    ("cart_pole", 0.001, {"x_dot": 0.1, "theta_dot": 0.1}, {"x": 1e-4, "theta": 1e-4}, ["x", "theta"], 1),
])
def test_the_compiled_ekf_is_the_python_ekf(name: str, T: float, Qn: dict, Rn: dict, outputs: list[str] | None,
                                            substeps: int, monkeypatch: pytest.MonkeyPatch) -> None:
    plant = robodyn.load(name)
    calls = _spy(monkeypatch, compiled.CompiledExtended)
    fast = ekf(plant, T, Qn, Rn, outputs=outputs, substeps=substeps, x0=0.1 * np.ones(plant.n_states))
    python = ekf(plant, T, Qn, Rn, outputs=outputs, substeps=substeps, x0=0.1 * np.ones(plant.n_states),
                 compiled=False)
    inputs = 0.5 * np.sin(0.3 * np.arange(150))[:, None] * np.ones(plant.n_inputs)
    measured = [plant.outputs.index(o) for o in (outputs or plant.outputs)]
    assert _step_by_step(fast, python, measured, inputs, 0.02, T) <= TOLERANCE
    assert len(calls) == 150  # one compiled call per sample: outputs and next state at the same (t, z, v)


def _panda(folder: Path) -> robodyn.Model:
    """example-robot-data's Panda with its finger joints fixed (as benchmarks/bench_control.py's)."""
    from pinocchio_reference import ROBOTS
    from robodyn.mechanisms.urdf.chain import chain_from_urdf

    text = (ROBOTS / "panda_description/urdf/panda.urdf").read_text(encoding="utf-8")
    path = folder / "panda_arm.urdf"
    path.write_text(text.replace('type="prismatic"', 'type="fixed"'), encoding="utf-8")
    return chain_from_urdf(path)


@pytest.mark.slow  # ~11 s cold (the arm's own chain compiles); a chain plant by default: the two-link arm below
def test_the_compiled_ekf_is_the_python_ekf_on_the_panda(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plant = _panda(tmp_path)
    assert plant.n_states == 14
    calls = _spy(monkeypatch, compiled.CompiledExtended)
    joints = list(plant.outputs[:7])
    Qn, Rn = 1e-3 * np.eye(14), 1e-6 * np.eye(7)
    fast, python = ekf(plant, 0.001, Qn, Rn, outputs=joints), ekf(plant, 0.001, Qn, Rn, outputs=joints,
                                                                    compiled=False)
    inputs = 0.5 * np.sin(0.5 * np.arange(40))[:, None] * np.ones(7)  # the arm falls a little and is shaken
    assert _step_by_step(fast, python, list(range(7)), inputs, 1e-3, 0.001) <= TOLERANCE
    assert len(calls) == 40


def test_measured_outputs_that_are_not_states_are_the_plants_h() -> None:
    """The tool position of a two-link chain: h and dh/dx at the prior come from the plant (not x[measured])."""
    plant = robodyn.load(str(EXAMPLES / "arm_with_tip.yaml"))
    assert not plant.outputs_are_states
    measured = ["tip_x", "tip_z", "q2"]
    Qn, Rn = 1e-2 * np.eye(4), np.diag([1e-4, 1e-4, 1e-5])
    fast = ekf(plant, 0.005, Qn, Rn, outputs=measured, x0=[0.3, 0.2, 0.0, 0.0])
    python = ekf(plant, 0.005, Qn, Rn, outputs=measured, x0=[0.3, 0.2, 0.0, 0.0], compiled=False)
    inputs = np.column_stack([2.0 * np.sin(0.1 * np.arange(100)), np.cos(0.1 * np.arange(100))])
    rng = np.random.default_rng(3)
    z, p, worst = np.zeros(python.n_states), python.parameter_vector(), 0.0
    pp = plant.parameter_vector()
    for k, u in enumerate(inputs):
        prior = np.array([0.3, 0.2, 0.0, 0.0]) + z[:4]
        y = np.asarray(plant.h_raw(k * 0.005, prior, u, pp))[[4, 6, 1]] + 1e-2 * rng.standard_normal(3)
        v = np.concatenate([y, u])
        worst = max(worst, _gap(fast.h_raw(k * 0.005, z, v, p), python.h_raw(k * 0.005, z, v, p)))
        following = python.f_raw(k * 0.005, z, v, p)
        worst = max(worst, _gap(fast.f_raw(k * 0.005, z, v, p), following))
        z = following
    assert worst <= TOLERANCE
    assert np.max(np.abs(z)) > 1e-3  # the filter moved: the comparison is not of two idle blocks


def test_a_plant_without_compiled_functions_keeps_the_python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spy(monkeypatch, compiled.CompiledExtended)
    monkeypatch.setattr(ModelPoints, "compiled", lambda self: None)
    plant = robodyn.load("pendulum")
    block = ekf(plant, 0.01, {"theta_dot": 0.2}, {"theta": 1e-3}, outputs=["theta"])
    python = ekf(plant, 0.01, {"theta_dot": 0.2}, {"theta": 1e-3}, outputs=["theta"], compiled=False)
    inputs = np.sin(0.3 * np.arange(20))[:, None]
    assert _step_by_step(block, python, [0], inputs, 0.02, 0.01) == 0.0  # the same path: the same bits
    assert calls == []


@pytest.mark.parametrize("discrete", [False, True])
def test_the_compiled_kalman_filter_is_the_python_one(discrete: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    A = np.array([[0.0, 1.0, 0.0], [-4.0, -0.4, 1.0], [0.0, 0.0, -2.0]])
    B, C, D = np.array([[0.0], [1.0], [0.5]]), np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), np.array([[0.0], [0.3]])
    if discrete:
        A = np.eye(3) + 0.01 * A
    plant = robodyn.LinearSystem(A, B, C, D, dt=0.01 if discrete else None, name="three")
    calls = _spy(monkeypatch, compiled.CompiledKalman)
    G = np.array([[0.0], [1.0], [0.2]])
    fast = kalman(plant, 0.01, Qn=[[0.3]], Rn=np.diag([1e-3, 1e-2]), G=G, P0=0.5 * np.eye(3))
    python = kalman(plant, 0.01, Qn=[[0.3]], Rn=np.diag([1e-3, 1e-2]), G=G, P0=0.5 * np.eye(3), compiled=False)
    inputs = np.sin(0.2 * np.arange(80))[:, None]
    assert _step_by_step(fast, python, [0, 2], inputs, 0.05, 0.01) <= TOLERANCE
    assert len(calls) == 80


def test_an_indefinite_covariance_is_the_same_error_on_both_paths() -> None:
    z = np.array([0.0, 0.0, -2.0, 0.0, 0.0])  # P_{0|-1}[0, 0] = 1 - 2
    messages = []
    for flag in (True, False):
        block = ekf(robodyn.load("pendulum"), 0.01, Qn=np.zeros((2, 2)), Rn=1e-4, outputs=["theta"],
                    P0=np.eye(2), compiled=flag)
        with pytest.raises(NumericalError, match=r"innovation covariance .* not positive definite") as caught:
            block.h_raw(0.0, z, np.zeros(2), np.zeros(0))
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def test_compiled_must_be_a_flag() -> None:
    with pytest.raises(InputError, match="compiled must be true or false"):
        ekf(robodyn.load("pendulum"), 0.01, {"theta_dot": 0.2}, {"theta": 1e-3}, outputs=["theta"],
            compiled="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "T", "Qn", "Rn", "outputs", "sigma"), [
    ("pendulum", 0.01, {"theta_dot": 0.2}, {"theta": 1e-3}, ["theta"], {}),
    ("pendulum", 0.01, {"theta_dot": 0.2}, {"theta": 1e-3}, ["theta"], {"alpha": 0.5, "kappa": 1.0}),
    ("cart_pole", 0.001, {"x_dot": 0.1, "theta_dot": 0.1}, {"x": 1e-4, "theta": 1e-4}, ["x", "theta"], {}),
])
def test_the_compiled_ukf_is_the_python_ukf(name: str, T: float, Qn: dict, Rn: dict, outputs: list[str],
                                            sigma: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    plant = robodyn.load(name)
    calls = _spy(monkeypatch, compiled_ukf.CompiledUnscented)
    fast = ukf(plant, T, Qn, Rn, outputs=outputs, substeps=2, **sigma)
    python = ukf(plant, T, Qn, Rn, outputs=outputs, substeps=2, compiled=False, **sigma)
    inputs = 0.5 * np.sin(0.3 * np.arange(100))[:, None] * np.ones(plant.n_inputs)
    measured = [plant.outputs.index(o) for o in outputs]
    assert _step_by_step(fast, python, measured, inputs, 0.02, T) <= TOLERANCE
    assert len(calls) == 100


def test_a_ukf_of_outputs_that_are_not_states_keeps_the_python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spy(monkeypatch, compiled_ukf.CompiledUnscented)
    plant = robodyn.load(str(EXAMPLES / "arm_with_tip.yaml"))
    block = ukf(plant, 0.005, 1e-2 * np.eye(4), np.diag([1e-4, 1e-4]), outputs=["tip_x", "tip_z"])
    block.h_raw(0.0, np.zeros(block.n_states), np.array([1.0, 0.5, 0.0, 0.0]), block.parameter_vector())
    assert calls == []


def test_a_ukf_without_sigma_points_is_the_same_error_on_both_paths() -> None:
    z = np.array([0.0, 0.0, -2.0, 0.0, 0.0])  # P_{0|-1}[0, 0] = 1 - 2
    messages = []
    for flag in (True, False):
        block = ukf(robodyn.load("pendulum"), 0.01, Qn=np.zeros((2, 2)), Rn=1e-4, outputs=["theta"], P0=np.eye(2),
                    compiled=flag)
        with pytest.raises(NumericalError, match=r"not positive definite .* no sigma points") as caught:
            block.h_raw(0.0, z, np.zeros(2), np.zeros(0))
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
