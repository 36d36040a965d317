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


if __name__ == "__main__":
    main()
