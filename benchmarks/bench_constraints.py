"""Closed chains side by side in one run (issue 28): the four-bar linkage simulated 10 s at rtol 1e-8.

- robodyn: ``robodyn.simulate(examples/four_bar.yaml, 10, x0, rtol=1e-8)``, compiled DOPRI5 over the tape's
  constrained dynamics (Baumgarte alpha = 10 1/s), timed warm (one call first: compilation is not timed);
- scipy: ``solve_ivp`` (RK45, the same rtol and atol) on the same index-1 formulation written here with numpy:
  the linkage's M(q), Coriolis and gravity terms, the loop's J and J'q' in closed form, and the augmented system
  [M -J^T; J 0] [q''; lambda] = [Q - c; gamma] solved by ``numpy.linalg.solve`` at every evaluation, with the
  same Baumgarte gamma. Its f is checked against robodyn's at the start.

Both start from the same assembled state (crank 1 rad at 8 rad/s, so the crank turns over) with no spring and
no input; the final states are compared (they agree to the tolerance). Rounds alternate robodyn and scipy;
each time is the median over the rounds. Goal: scipy / robodyn >= 20.

Then the box on an incline (examples/box_on_incline.yaml, mu < tan theta): the slide distance in 1 s against the
closed form, robodyn's compliant contact (radau over a tolerance ladder) against MuJoCo (Euler and RK4 over a
step ladder, its own soft contact, the same mass, size, slope and friction), and the ratio of times at matched
accuracy. Needs mujoco (the ``bench`` extra).

    python benchmarks/bench_constraints.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

import robodyn

FOUR_BAR = Path(__file__).resolve().parent.parent / "examples" / "four_bar.yaml"
T_FINAL, RTOL, ATOL = 10.0, 1e-8, 1e-9


def numpy_four_bar(parameters: dict[str, float], alpha: float):  # type: ignore[no-untyped-def]
    """f(t, x) of the four-bar (crank, coupler relative to it, rocker; x-y plane, gravity -y) in numpy."""
    a, b, c, d = (parameters[k] for k in "abcd")
    m1, m2, m3, g = (parameters[k] for k in ("m1", "m2", "m3", "g"))
    inertia = np.array([m1 * a * a / 12, m2 * b * b / 12, m3 * c * c / 12])
    spin = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # each link's angular rate from q'
    rotor = spin.T @ np.diag(inertia) @ spin

    def f(t: float, x: np.ndarray) -> np.ndarray:
        q1, q2, q3, w1, w2, w3 = x
        s1, c1, s12, c12, s3, c3 = np.sin(q1), np.cos(q1), np.sin(q1 + q2), np.cos(q1 + q2), np.sin(q3), np.cos(q3)
        w12 = w1 + w2
        # centre-of-mass Jacobians (2 x 3) and their J'q' (centripetal accelerations)
        j1 = np.array([[-a / 2 * s1, 0.0, 0.0], [a / 2 * c1, 0.0, 0.0]])
        j2 = np.array([[-a * s1 - b / 2 * s12, -b / 2 * s12, 0.0], [a * c1 + b / 2 * c12, b / 2 * c12, 0.0]])
        j3 = np.array([[0.0, 0.0, -c / 2 * s3], [0.0, 0.0, c / 2 * c3]])
        a1 = -a / 2 * w1 * w1 * np.array([c1, s1])
        a2 = -a * w1 * w1 * np.array([c1, s1]) - b / 2 * w12 * w12 * np.array([c12, s12])
        a3 = -c / 2 * w3 * w3 * np.array([c3, s3])
        mass = m1 * j1.T @ j1 + m2 * j2.T @ j2 + m3 * j3.T @ j3 + rotor
        weight = np.array([0.0, -g])
        free = (m1 * j1.T @ (weight - a1) + m2 * j2.T @ (weight - a2) + m3 * j3.T @ (weight - a3))
        # the loop: coupler tip - rocker tip = 0 in x and y
        phi = np.array([a * c1 + b * c12 - d - c * c3, a * s1 + b * s12 - c * s3])
        jac = np.array([[-a * s1 - b * s12, -b * s12, c * s3], [a * c1 + b * c12, b * c12, -c * c3]])
        bias = np.array([-a * w1 * w1 * c1 - b * w12 * w12 * c12 + c * w3 * w3 * c3,
                         -a * w1 * w1 * s1 - b * w12 * w12 * s12 + c * w3 * w3 * s3])
        rate = jac @ x[3:]
        gamma = -bias - 2 * alpha * rate - alpha * alpha * phi
        system = np.block([[mass, -jac.T], [jac, np.zeros((2, 2))]])
        solution = np.linalg.solve(system, np.concatenate([free, gamma]))
        return np.concatenate([x[3:], solution[:3]])

    return f


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    model = robodyn.load(str(FOUR_BAR)).with_parameters(k_s=0.0)
    x0 = np.array(list(robodyn.assemble(model, fix={"crank": 1.0, "crank_dot": 8.0}).values()))
    f = numpy_four_bar(dict(model.parameters), model.baumgarte)
    p = model.parameter_vector()
    for probe in (x0, x0 + np.array([0.01, -0.02, 0.03, 0.1, -0.2, 0.3])):  # on and off the constraints
        np.testing.assert_allclose(f(0.0, probe), model.f_raw(0.0, probe, np.zeros(1), p), rtol=1e-9, atol=1e-9)
    robodyn.simulate(model, T_FINAL, x0, rtol=RTOL, atol=ATOL)  # compiled and cached: not timed
    ours, theirs = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        run = robodyn.simulate(model, T_FINAL, x0, rtol=RTOL, atol=ATOL)
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        reference = solve_ivp(f, (0.0, T_FINAL), x0, method="RK45", rtol=RTOL, atol=ATOL)
        theirs.append(time.perf_counter() - start)
    gap = float(np.max(np.abs(run.x[-1] - reference.y[:, -1])))
    mine, scipy_time = statistics.median(ours), statistics.median(theirs)
    print(f"four-bar, 10 s at rtol {RTOL:g}, atol {ATOL:g}; load {os.getloadavg()[0]:.2f}, {rounds} rounds")
    print(f"  robodyn dopri5 (compiled)  {mine * 1e3:9.2f} ms  {run.stats.steps} steps")
    print(f"  scipy RK45 + numpy KKT     {scipy_time * 1e3:9.2f} ms  {reference.t.size - 1} steps")
    print(f"  final states differ by {gap:.2e}")
    print(f"  scipy / robodyn = {scipy_time / mine:.1f} (goal >= 20)")


BOX = Path(__file__).resolve().parent.parent / "examples" / "box_on_incline.yaml"


def mujoco_box(parameters: dict[str, float], dt: float, integrator: str) -> tuple[float, float]:
    """The box's slide distance down the incline in 1 s in MuJoCo (the same mass, size, slope and mu; elliptic
    friction cone, MuJoCo's own soft contact) and the wall time of the steps."""
    import mujoco

    th, mu, w, h, m, g = (parameters[k] for k in ("theta", "mu", "w", "h", "m", "g"))
    text = f"""<mujoco><compiler angle="radian"/>
<option timestep="{dt}" integrator="{integrator}" cone="elliptic" gravity="0 0 {-g}"/>
<worldbody><geom type="plane" size="5 5 0.1" euler="0 {-th} 0" friction="{mu} 0 0"/>
<body name="box"><freejoint/><geom type="box" size="{w / 2} 0.05 {h / 2}" mass="{m}" friction="{mu} 0 0"/></body>
</worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(text)
    data = mujoco.MjData(model)
    data.qpos[:3] = (h / 2) * np.array([-np.sin(th), 0.0, np.cos(th)])
    data.qpos[3:7] = [np.cos(-th / 2), 0.0, np.sin(-th / 2), 0.0]
    mujoco.mj_forward(model, data)
    start = time.perf_counter()
    for _ in range(round(1.0 / dt)):
        mujoco.mj_step(model, data)
    elapsed = time.perf_counter() - start
    return -float(data.qpos[0] * np.cos(th) + data.qpos[2] * np.sin(th)), elapsed


def box_section(rounds: int) -> None:
    """The box on the incline (mu = 0.2 < tan 0.3): slide distance in 1 s against the closed form
    1/2 g (sin theta - mu cos theta), robodyn (radau, a tolerance ladder, warm) and MuJoCo (Euler and RK4 over a
    step ladder), each time the median of ``rounds``; the ratio at matched accuracy."""
    model = robodyn.load(str(BOX)).with_parameters(mu=0.2, eps=1e-6)  # the regularization out of the way
    par = dict(model.parameters)
    th, h = par["theta"], par["h"]
    exact = 0.5 * par["g"] * (np.sin(th) - par["mu"] * np.cos(th))
    depth = (par["m"] * par["g"] * np.cos(th) / 2 / par["k"]) ** (1 / 1.5)
    centre = (h / 2 - depth) * np.array([-np.sin(th), np.cos(th)])
    x0 = [centre[0], centre[1], -th, 0.0, 0.0, 0.0]
    print(f"box on an incline (theta {th}, mu {par['mu']}), slide in 1 s, closed form {exact:.6f} m")
    ours = []
    for rtol in (1e-4, 1e-5, 1e-6, 1e-7, 1e-8):
        robodyn.simulate(model, 1.0, x0, rtol=rtol, atol=rtol * 1e-2, method="radau")  # compiled: not timed
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            run = robodyn.simulate(model, 1.0, x0, rtol=rtol, atol=rtol * 1e-2, method="radau")
            times.append(time.perf_counter() - start)
        slide = -float(run.x[-1, 0] * np.cos(th) + run.x[-1, 1] * np.sin(th)) + float(x0[0] * np.cos(th)
                                                                                     + x0[1] * np.sin(th))
        ours.append((abs(slide - exact) / exact, statistics.median(times)))
        print(f"  robodyn radau rtol {rtol:g}:  error {ours[-1][0]:.2e}  {ours[-1][1] * 1e3:8.2f} ms")
    theirs = []
    for integrator in ("Euler", "RK4"):
        for dt in (1e-3, 2e-4):
            results = [mujoco_box(par, dt, integrator) for _ in range(rounds)]
            error = abs(results[0][0] - exact) / exact
            theirs.append((error, statistics.median(r[1] for r in results)))
            print(f"  MuJoCo {integrator:5s} dt {dt:g}:   error {error:.2e}  {theirs[-1][1] * 1e3:8.2f} ms")
    for error, elapsed in theirs:
        matched = [t for e, t in ours if e <= error]
        if matched:
            print(f"  at MuJoCo's error {error:.1e}: robodyn / MuJoCo = {min(matched) / elapsed:.2f}")
        else:
            print(f"  at MuJoCo's error {error:.1e}: robodyn's ladder does not reach it")


if __name__ == "__main__":
    main()
    box_section(5)
