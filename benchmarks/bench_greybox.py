"""Grey-box identification: the seed joint's J, b, k from a step response of 10,000 samples (issue 30).

    python benchmarks/bench_greybox.py [--samples N] [--repeat R]

Side by side in one run: ``robodyn.identify`` (Levenberg–Marquardt on the exact sensitivities, compiled) and what a
user writes by hand today — scipy's ``least_squares`` with finite-difference Jacobians over ``solve_ivp`` (RK45 at
the same tolerances) — on the same data, from the same guess. Prints the wall time of each (best of R after a
warm-up that compiles), their ratio, the estimates, and the goal: robodyn under 2 s.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import robodyn
from robodyn.signals import Step

TRUTH = {"J": 0.01, "b": 0.1, "k": 1.0}
GUESS = {"J": 0.02, "b": 0.05, "k": 1.5}
GOAL_SECONDS = 2.0


def data(samples: int) -> dict[str, np.ndarray]:
    """The joint's angle after a unit step at the first sample from 0.1 s, 1% noise, over 4 s."""
    times = np.linspace(0.0, 4.0, samples)
    at = float(times[np.searchsorted(times, 0.1)])
    run = robodyn.simulate(robodyn.load("joint"), 4.0, {"q": 0.0}, {"u": Step(at=at, before=0.0, after=1.0)},
                           rtol=1e-10, atol=1e-12, t_eval=times)
    q = run.state("q")
    return {"t": times, "q": q + 0.01 * np.abs(q).max() * np.random.default_rng(0).standard_normal(samples),
            "u": np.where(times >= at, 1.0, 0.0)}


def by_hand(measured: dict[str, np.ndarray]) -> tuple[np.ndarray, int]:
    """What users write today: least_squares with a 2-point finite-difference Jacobian over solve_ivp."""
    from scipy.integrate import solve_ivp
    from scipy.optimize import least_squares

    t, q = measured["t"], measured["q"]
    at = float(t[np.argmax(measured["u"] > 0)])
    calls = [0]

    def residuals(theta: np.ndarray) -> np.ndarray:
        J, b, k = theta
        calls[0] += 1

        def f(time: float, x: np.ndarray) -> list[float]:
            u = 1.0 if time >= at else 0.0
            return [x[1], (u - b * x[1] - k * x[0]) / J]

        sol = solve_ivp(f, (t[0], t[-1]), [0.0, 0.0], t_eval=t, rtol=1e-8, atol=1e-10, method="RK45",
                        first_step=None)
        return sol.y[0] - q

    fit = least_squares(residuals, [GUESS[n] for n in TRUTH], x_scale="jac", method="lm")
    return fit.x, calls[0]


def best(run: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# bench_greybox: the joint's J, b, k from {args.samples} samples, {os.cpu_count()} cores, load {load:.2f}")
    measured = data(args.samples)
    joint = robodyn.load("joint").with_parameters(GUESS)
    result = robodyn.identify(joint, measured, list(TRUTH))  # warm-up: compiles the sensitivity system once
    seconds = best(lambda: robodyn.identify(joint, measured, list(TRUTH)), args.repeat)
    print(f"robodyn.identify: {seconds:.3f} s ({result.evaluations} simulations)  goal < {GOAL_SECONDS} s: "
          f"{'met' if seconds < GOAL_SECONDS else 'NOT met'}")
    for name, truth in TRUTH.items():
        print(f"  {name} = {result.values[name]:.6g} +/- {result.standard_errors[name]:.2g} (truth {truth})")
    start = time.perf_counter()
    theta, calls = by_hand(measured)
    hand = time.perf_counter() - start
    print(f"scipy least_squares + finite differences over solve_ivp: {hand:.3f} s ({calls} simulations), "
          f"J b k = {theta[0]:.6g} {theta[1]:.6g} {theta[2]:.6g}")
    print(f"robodyn / by hand: {seconds / hand:.3f}")


if __name__ == "__main__":
    main()
