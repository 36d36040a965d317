"""Sampled blocks in diagrams (robodyn.diagrams.sampled, robodyn.integrate.paths.sampled) against closed forms: the
exact
ZOH discretization of the plant composed with the controller's difference equation, the recursion it defines,
python-control's and scipy's discretizations of the library blocks, and the bad inputs the issue lists."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.signal

import robodyn
from robodyn import blocks
from robodyn.base.errors import InputError, ModelFileError

T = 0.01
J, b, k = 0.01, 0.1, 1.0  # the catalog joint
kp, kd, tf = 5.0, 0.2, 0.02


def sampled_pd() -> robodyn.Diagram:
    return robodyn.Diagram({"plant": robodyn.load("joint"), "pd": blocks.pid(kp=kp, kd=kd, tf=tf, sample=T)},
                           ["pd.u -> plant.u", "plant.q -> pd.y"], inputs={"r": "pd.r"},
                           outputs={"q": "plant.q", "u": "pd.u"})


def closed_form() -> tuple[np.ndarray, np.ndarray]:
    """The plant discretized exactly (ZOH) and closed by the backward-Euler PD's difference equation, by hand:
    f_k = (tf xf + T e)/(tf + T), u_k = kp e + kd (e - f_k)/tf, xf <- f_k, e = r - q."""
    Ac = np.array([[0.0, 1.0], [-k / J, -b / J]])
    Bc = np.array([[0.0], [1.0 / J]])
    Ad = scipy.linalg.expm(Ac * T)
    Bd = np.linalg.solve(Ac, (Ad - np.eye(2)) @ Bc)
    a, c = tf / (tf + T), T / (tf + T)
    gain_e, gain_x = kp + kd / tf * (1 - c), -kd * a / tf  # u = gain_e e + gain_x xf
    A, B = np.zeros((3, 3)), np.zeros((3, 1))
    A[:2, :2] = Ad - Bd @ np.array([[gain_e, 0.0]])
    A[:2, 2:] = Bd * gain_x
    B[:2] = Bd * gain_e
    A[2, 0], A[2, 2], B[2, 0] = -c, a, c
    return A, B


def test_the_discrete_linear_model_is_the_exact_zoh_composition() -> None:
    lin = robodyn.linearize(sampled_pd(), np.zeros(3), [0.0])
    assert lin.dt == T and lin.states == ("plant.q", "plant.q_dot", "pd.xd")
    A, B = closed_form()
    np.testing.assert_allclose(lin.A, A, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lin.B, B, rtol=1e-12, atol=1e-12)
    assert "discrete" in robodyn.modes(lin).explanation


def test_the_simulation_is_the_recursion_at_the_sample_instants() -> None:
    A, B = closed_form()
    trajectory = robodyn.simulate(sampled_pd(), 0.5, np.zeros(3), {"r": 1.0}, method="dop853", rtol=1e-13,
                                  atol=1e-15)
    np.testing.assert_allclose(trajectory.t, np.arange(51) * T, rtol=0, atol=1e-15)  # the instants, and t1
    z, expected = np.zeros(3), [np.zeros(3)]
    for _ in range(50):
        z = A @ z + B[:, 0]
        expected.append(z)
    np.testing.assert_allclose(trajectory.x, np.array(expected), rtol=0, atol=1e-12)


def test_outputs_are_held_between_instants() -> None:
    grid = np.linspace(0.0, 0.1, 41)  # four rows per period
    trajectory = robodyn.simulate(sampled_pd(), 0.1, np.zeros(3), {"r": 1.0}, t_eval=grid, rtol=1e-10)
    u = trajectory.y[:, 1]
    for start in range(0, 40, 4):
        assert np.all(u[start:start + 4] == u[start])  # a zero-order hold
    assert len(set(u[:-1].tolist())) == 10
    assert np.all(np.diff(trajectory.x[:12, 0]) > 0)  # the plant moves continuously in between (rising)
    assert np.all(trajectory.x[:4, 2] == trajectory.x[0, 2])  # the discrete state shows x[k] until t_{k+1}


@pytest.mark.parametrize("discretization, method", [("backward_euler", "backward_diff"), ("tustin", "bilinear")])
def test_pid_difference_equations_are_the_textbook_transforms(discretization, method) -> None:
    gains = dict(kp=3.0, ki=2.0, kd=0.4, tf=0.05)
    block = blocks.pid(**gains, sample=T, discretization=discretization)
    lin = robodyn.linearize(block, np.zeros(2), [0.0, 0.0])
    assert lin.dt == T
    s = [1.0, 0.0]
    num = np.polyadd(np.polyadd(np.polymul([gains["kp"]], np.polymul(s, [gains["tf"], 1.0])),
                                np.polymul([gains["ki"]], [gains["tf"], 1.0])), np.polymul([gains["kd"]], [1.0, 0, 0]))
    den = np.polymul(s, [gains["tf"], 1.0])  # kp + ki/s + kd s/(tf s + 1) over s (tf s + 1)
    numd, dend, _ = scipy.signal.cont2discrete((num, den), T, method=method)
    w = np.linspace(1.0, 0.9 * np.pi / T, 9)
    zz = np.exp(1j * w * T)
    expected = np.polyval(numd[0], zz) / np.polyval(dend, zz)
    n = lin.A.shape[0]
    found = np.array([(lin.C @ np.linalg.solve(z * np.eye(n) - lin.A, lin.B) + lin.D)[0, 0] for z in zz])
    np.testing.assert_allclose(found, expected, rtol=1e-10)


@pytest.mark.parametrize("make, continuous", [
    (lambda s: blocks.first_order(K=2.0, tau=0.03, sample=s), lambda: blocks.first_order(K=2.0, tau=0.03)),
    (lambda s: blocks.dc_motor(R=2.0, L=5e-3, kt=0.1, ke=0.1, N=3.0, sample=s),
     lambda: blocks.dc_motor(R=2.0, L=5e-3, kt=0.1, ke=0.1, N=3.0)),
    (lambda s: blocks.lti(num=[1.0, 2.0], den=[1.0, 3.0, 5.0], sample=s), lambda: blocks.lti(num=[1.0, 2.0],
                                                                                             den=[1.0, 3.0, 5.0])),
    (lambda s: blocks.integrator(sample=s), lambda: blocks.integrator()),
])
def test_linear_blocks_are_discretized_exactly_by_zoh(make, continuous) -> None:
    sampled, plain = make(T), continuous()
    x, u = np.zeros(plain.n_states), np.zeros(plain.n_inputs)
    ours = robodyn.linearize(sampled, x, u)
    theirs = robodyn.linearize(plain, x, u)
    Ad, Bd, Cd, Dd, _ = scipy.signal.cont2discrete((theirs.A, theirs.B, theirs.C, theirs.D), T, method="zoh")
    for got, want in zip((ours.A, ours.B, ours.C, ours.D), (Ad, Bd, Cd, Dd)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_several_rates_linearize_over_the_hyperperiod() -> None:
    """A PD at 100 Hz behind a sensor lag sampled at 50 Hz: the model maps one 0.02 s period to the next, and
    small deviations evolve by it exactly (the loop is linear)."""
    diagram = robodyn.Diagram({"plant": robodyn.load("joint"), "pd": blocks.pid(kp=2.0, kd=0.05, tf=0.02, sample=T),
                               "lag": blocks.first_order(K=1.0, tau=0.01, sample=2 * T)},
                              ["pd.u -> plant.u", "plant.q -> lag.u", "lag.y -> pd.y"], inputs={"r": "pd.r"})
    lin = robodyn.linearize(diagram, np.zeros(4), [0.0])
    assert lin.dt == pytest.approx(2 * T)
    x0 = np.array([0.01, -0.02, 0.003, 0.004])
    trajectory = robodyn.simulate(diagram, 0.2, x0, {"r": 0.0}, method="dop853", rtol=1e-13, atol=1e-15,
                                  t_eval=np.arange(11) * 2 * T)
    z, expected = x0, [x0]
    for _ in range(10):
        z = lin.A @ z
        expected.append(z)
    np.testing.assert_allclose(trajectory.x, np.array(expected), rtol=0, atol=1e-12)


def test_bad_sampling_is_refused() -> None:
    plant = robodyn.load("joint")
    with pytest.raises(InputError, match=r"not an integer multiple of 0\.01 s"):
        robodyn.Diagram({"plant": plant, "a": blocks.pid(kp=1.0, sample=0.01), "g": blocks.gain(1.0, sample=0.015)},
                        ["a.u -> g.u", "g.y -> plant.u", "plant.q -> a.y"], inputs={"r": "a.r"})
    with pytest.raises(InputError, match="sample period must be a finite number of seconds > 0"):
        blocks.pid(kp=1.0, sample=0.0)
    with pytest.raises(InputError, match="discretization must be one of backward_euler, tustin"):
        blocks.pid(kp=1.0, ki=1.0, sample=0.01, discretization="zoh")
    with pytest.raises(InputError, match="made for the period"):
        blocks.gain(1.0, sample=0.01).with_sample_period(0.02)


def test_sampled_blocks_in_files(tmp_path) -> None:
    (tmp_path / "pd.yaml").write_text(
        "name: pd_discrete\nkind: discrete\nsample: 0.01\nstates: [e_prev]\ninputs: [r, y]\n"
        "parameters: {kp: 5, kd: 0.02}\nupdate: {e_prev: r - y}\n"
        "outputs: {u: 'kp*(r - y) + kd*(r - y - e_prev)/0.01'}\n")
    alone = robodyn.load(tmp_path / "pd.yaml")
    assert alone.sample_period == 0.01 and alone.kind == "discrete"
    steps = robodyn.simulate(alone, 0.03, [0.0], {"r": 1.0, "y": 0.0})
    np.testing.assert_array_equal(steps.x[:, 0], [0.0, 1.0, 1.0, 1.0])
    text = ("name: d\nkind: diagram\nblocks:\n  plant: joint\n  pd: {model: pd.yaml}\n"
            "  pid: {model: pid, parameters: {kp: 1, ki: 1}, sample: 0.02, discretization: tustin}\n"
            "connect: [pd.u -> plant.u, plant.q -> pd.y, plant.q -> pid.y]\ninputs: {r: [pd.r, pid.r]}\n")
    (tmp_path / "d.yaml").write_text(text)
    diagram = robodyn.load(tmp_path / "d.yaml")
    assert diagram.sampling().every == {"pd": 1, "pid": 2}
    bad = {"sample: 0.02": "sample: -1", "pd: {model: pd.yaml}": "pd: {model: pd.yaml, sample: 0.015}",
           "plant: joint": "plant: {model: joint, sample: 0.01}", "discretization: tustin": "discretization: fast"}
    messages = ["sample period must be", "not an integer multiple", "joint' is continuous-time",
                "discretization must be one of"]
    for (old, new), message in zip(bad.items(), messages):
        (tmp_path / "bad.yaml").write_text(text.replace(old, new))
        with pytest.raises(ModelFileError, match=message):
            robodyn.load(tmp_path / "bad.yaml")


def test_analyses_of_differential_equations_refuse_a_sampled_diagram() -> None:
    diagram = sampled_pd()
    with pytest.raises(InputError, match="has sampled blocks: its f joins derivatives and discrete updates"):
        robodyn.validity(diagram, np.zeros(3), [0.0])
    with pytest.raises(InputError, match="has sampled blocks"):
        robodyn.existence(diagram, np.zeros(3), 0.1)
    rest = robodyn.find_equilibrium(diagram, targets={"q": 0.2})[0]  # operating points are found (f = 0 there)
    assert rest.x[0] == pytest.approx(0.2) and rest.converged


def test_a_batch_is_its_trajectories_one_by_one() -> None:
    diagram = sampled_pd()
    x0 = np.array([[0.0, 0.0, 0.0], [0.1, -0.2, 0.0]])
    batch = robodyn.simulate(diagram, 0.2, x0, {"r": 1.0}, params={"pd.kp": [4.0, 6.0]}, rtol=1e-10)
    assert batch.x.shape == (2, 21, 3)  # the base instants
    for i in range(2):
        one = robodyn.simulate(diagram.with_parameters({"pd.kp": [4.0, 6.0][i]}), 0.2, x0[i], {"r": 1.0},
                               rtol=1e-10, t_eval=batch.t)
        np.testing.assert_array_equal(batch.x[i], one.x)
        np.testing.assert_array_equal(batch.y[i], one.y)


def test_discrete_files_accept_dynamics_and_dt_for_update_and_sample() -> None:
    model = robodyn.read_model_text("name: d\nkind: discrete\ndt: 0.1\nstates: [x]\ndynamics: {x: 0.5*x}\n", "d.yaml")
    assert model.sample_period == 0.1 and model.f(0.0, [2.0])[0] == 1.0
    with pytest.raises(ModelFileError, match="give sample or dt, not both"):
        robodyn.read_model_text("name: d\nkind: discrete\nsample: 0.1\ndt: 0.1\nstates: [x]\nupdate: {x: x}\n",
                                "d.yaml")
    with pytest.raises(ModelFileError, match="missing key 'sample'"):
        robodyn.read_model_text("name: d\nkind: discrete\nstates: [x]\nupdate: {x: x}\n", "d.yaml")
