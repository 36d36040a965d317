"""Collocation speed, side by side in one run: robodyn vs CasADi Opti + IPOPT vs python-control.

The cart-pole swing-up of tests/control/optimal/collocation_cases.py (catalog ``cart_pole``, from hanging at rest
to upright at rest at x = 0 in 2 s, |F| <= 10 N, |x| <= 0.3 m, cost int 1/2 (0.1 F^2 + x^2) dt), N knots:

- robodyn ``solve_collocation`` (IPOPT through CasADi over robodyn's values and exact sparse Jacobians);
- CasADi Opti + IPOPT on the same transcription written with CasADi symbols (tests/control/optimal/
  casadi_reference.py), the same IPOPT options (tol 1e-8, limited-memory Hessian, bounds as bounds);
- python-control ``solve_optimal_trajectory(..., trajectory_method="collocation")`` (trapezoidal defects and
  cost, scipy SLSQP with finite-difference gradients) on the same dynamics (robodyn's f), costs and bounds.

Times: the IPOPT solve alone for robodyn (SolverOutcome.seconds) and Opti (its t_wall_total), best of
``--rounds``; python-control's one call. Goals (issue 47): robodyn / Opti <= 1; python-control / robodyn >= 50
at equal cost (1e-3 relative). Times vary on a shared machine; the ratios are what to compare.

    python benchmarks/bench_collocation.py [--knots 30] [--rounds 3] [--skip-control]
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import io
import os
import platform
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.control.optimal.casadi_reference import cart_pole_rhs, solve_opti
from tests.control.optimal.collocation_cases import cart_pole

import robodyn
from robodyn.control.optimal.collocation import solve_collocation

FORCE, RAIL = 10.0, 0.3


def robodyn_side(knots: int, transcription: str, rounds: int) -> tuple[float, float, int]:
    best, outcome = np.inf, None
    for _ in range(rounds):
        outcome = solve_collocation(cart_pole(knots, force=FORCE, rail=RAIL), transcription=transcription)
        assert outcome.converged, outcome.status
        best = min(best, outcome.seconds)
    assert outcome is not None
    return best, outcome.cost, outcome.iterations


def opti_side(knots: int, transcription: str, rounds: int) -> tuple[float, float, int]:
    rhs = cart_pole_rhs(dict(robodyn.load("cart_pole").parameters))
    best, solution = np.inf, None
    for _ in range(rounds):
        solution = solve_opti(cart_pole(knots, force=FORCE, rail=RAIL), rhs, transcription)
        best = min(best, solution.seconds)
    assert solution is not None
    return best, solution.cost, solution.iterations


def control_side(knots: int) -> tuple[float, float, bool]:
    import control as ct
    import control.optimal as opt

    problem = cart_pole(knots, force=FORCE, rail=RAIL)
    model, p = problem.model, problem.p
    system = ct.nlsys(lambda t, x, u, params: model.f_raw(t, x, u, p), None, states=4, inputs=1, outputs=4)
    constraints = [opt.input_range_constraint(system, [-FORCE], [FORCE]),
                   opt.state_range_constraint(system, problem.state_bounds[:, 0], problem.state_bounds[:, 1])]
    terminal = [opt.state_range_constraint(system, np.zeros(4), np.zeros(4))]
    X0, U0 = problem.initial_guess()
    start = time.perf_counter()
    result = opt.solve_optimal_trajectory(
        system, problem.times(), problem.x0, lambda x, u: problem.running(0.0, x, u), constraints,
        terminal_constraints=terminal, initial_guess=(X0.T, np.vstack([U0, U0[-1:]]).T),
        trajectory_method="collocation", print_summary=False)
    return time.perf_counter() - start, float(result.cost), bool(result.success)


def profile(knots: int) -> str:
    """Where robodyn's solve spends its time (cProfile, the top entries by own time)."""
    problem = cart_pole(knots, force=FORCE, rail=RAIL)
    profiler = cProfile.Profile()
    profiler.enable()
    solve_collocation(problem)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(8)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--knots", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-control", action="store_true", help="leave python-control out (minutes)")
    parser.add_argument("--profile", action="store_true", help="print where robodyn's time goes")
    args = parser.parse_args()
    print(f"cart-pole swing-up, {args.knots} knots; {datetime.datetime.now(datetime.UTC):%b %d %Y %H:%M} UTC, "
          f"load {os.getloadavg()[0]:.2f}, {platform.processor() or platform.machine()}")
    for transcription in ("hermite_simpson", "trapezoidal"):
        ours, cost, iterations = robodyn_side(args.knots, transcription, args.rounds)
        theirs, reference, opti_iterations = opti_side(args.knots, transcription, args.rounds)
        print(f"{transcription:>16}: robodyn {ours * 1e3:8.1f} ms ({iterations} it, cost {cost:.10f})   "
              f"Opti {theirs * 1e3:8.1f} ms ({opti_iterations} it, cost {reference:.10f})")
        print(f"{'':>16}  robodyn / Opti = {ours / theirs:.2f} (goal <= 1); cost differs by "
              f"{abs(cost - reference) / abs(reference):.1e} relative")
        if transcription == "trapezoidal" and not args.skip_control:
            seconds, control_cost, success = control_side(args.knots)
            print(f"{'':>16}  python-control {seconds:8.2f} s (success {success}, cost {control_cost:.10f}, "
                  f"{abs(control_cost - cost) / abs(cost):.1e} relative)")
            print(f"{'':>16}  python-control / robodyn = {seconds / ours:.0f} (goal >= 50)")
    if args.profile:
        print(profile(args.knots))


if __name__ == "__main__":
    main()
