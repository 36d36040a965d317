"""Collocation speed, side by side in one run: robodyn vs CasADi Opti + IPOPT vs python-control.

The cart-pole swing-up of tests/control/optimal/collocation_cases.py (catalog ``cart_pole``, from hanging at rest
to upright at rest at x = 0 in 2 s, |F| <= 10 N, |x| <= 0.3 m, cost int 1/2 (0.1 F^2 + x^2) dt), N knots:

- robodyn ``solve_collocation`` (IPOPT through CasADi over robodyn's values and exact sparse Jacobians);
- CasADi Opti + IPOPT on the same transcription written with CasADi symbols (tests/control/optimal/
  casadi_reference.py), the same IPOPT options (tol 1e-8, limited-memory Hessian, bounds as bounds);
- python-control ``solve_optimal_trajectory(..., trajectory_method="collocation")`` (trapezoidal defects and
  cost, scipy SLSQP with finite-difference gradients) on the same dynamics (robodyn's f), costs and bounds.

Times: the IPOPT solve alone, by CasADi's own clocks on both sides (``record_time``: t_wall_total, and
t_proc_total the process's CPU time, which a busy machine stretches less), the two solvers alternating round by
round (``--rounds``; blocks of rounds one side after the other measured the load's changes between the blocks:
ratios 0.87-1.46 for one code within minutes); the best of each side and the per-round ratios; python-control's
one call. ``--breakdown``: the CPU time of both by function IPOPT calls. Goals
(issue 47): robodyn / Opti <= 1; python-control / robodyn >= 50 at equal cost (1e-3 relative). Times vary on a
shared machine; the ratios are what to compare.

    python benchmarks/bench_collocation.py [--knots 30] [--rounds 7] [--skip-control] [--breakdown] [--profile]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import datetime
import io
import os
import platform
import pstats
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.control.optimal.casadi_reference import build_opti, cart_pole_rhs
from tests.control.optimal.collocation_cases import cart_pole

import robodyn
from robodyn.control.optimal.collocation import solve_collocation

FORCE, RAIL = 10.0, 0.3
FUNCTIONS = ("nlp_f", "nlp_g", "nlp_grad_f", "nlp_jac_g")


@contextlib.contextmanager
def recorded_solvers() -> Iterator[list]:
    """robodyn's IPOPT solvers with CasADi's timers on (``record_time``, as casadi_reference.py sets for Opti), kept
    in the list yielded: both sides then timed by the same clocks."""
    import casadi

    solvers: list = []
    nlpsol = casadi.nlpsol

    def recording(name, plugin, program, options):
        solvers.append(nlpsol(name, plugin, program, {**options, "record_time": True}))
        return solvers[-1]

    casadi.nlpsol = recording
    try:
        yield solvers
    finally:
        casadi.nlpsol = nlpsol


def side_by_side(knots: int, transcription: str, rounds: int) -> dict:
    """Both solvers alternating round by round (robodyn, then Opti): a load that changes during the run stretches
    both sides alike. CasADi's statistics of each round (``robodyn``, ``Opti``: lists); the last round's costs."""
    rhs = cart_pole_rhs(dict(robodyn.load("cart_pole").parameters))
    ours, theirs = [], []
    with recorded_solvers() as solvers:
        for _ in range(rounds):
            outcome = solve_collocation(cart_pole(knots, force=FORCE, rail=RAIL), transcription=transcription)
            assert outcome.converged, outcome.status
            opti, J = build_opti(cart_pole(knots, force=FORCE, rail=RAIL), rhs, transcription)[:2]
            solution = opti.solve()
            ours.append(solvers[-1].stats())
            theirs.append(opti.stats())
    return {"robodyn": ours, "Opti": theirs, "cost": outcome.cost, "reference": float(solution.value(J))}


def ratios(run: dict, clock: str) -> str:
    """robodyn / Opti on CasADi's ``t_wall_total`` or ``t_proc_total``: best against best, and per round."""
    ours = np.array([stats[f"t_{clock}_total"] for stats in run["robodyn"]])
    theirs = np.array([stats[f"t_{clock}_total"] for stats in run["Opti"]])
    per_round = ours / theirs
    return (f"{clock:>4}: robodyn {ours.min() * 1e3:7.1f} ms, Opti {theirs.min() * 1e3:7.1f} ms, ratio "
            f"{ours.min() / theirs.min():.2f} best against best, per round median {np.median(per_round):.2f} "
            f"({per_round.min():.2f}-{per_round.max():.2f})")


def breakdown(run: dict) -> str:
    """CasADi's CPU times by function IPOPT called, in each side's round of least CPU time: the program's values
    (nlp_f, nlp_g), its derivatives (nlp_grad_f, nlp_jac_g) and IPOPT's remainder (steps, linear algebra)."""
    lines = [f"{'':>9}{'total':>9}" + "".join(f"{name:>19}" for name in FUNCTIONS) + f"{'IPOPT':>9}{'it':>4}"]
    for side in ("robodyn", "Opti"):
        stats = min(run[side], key=lambda s: s["t_proc_total"])
        calls = sum(stats.get(f"t_proc_{name}", 0.0) for name in FUNCTIONS)
        cells = "".join(f"{stats.get(f't_proc_{name}', 0.0) * 1e3:9.2f} ms {stats.get(f'n_call_{name}', 0):4d}x"
                        for name in FUNCTIONS)
        total = stats["t_proc_total"]
        lines.append(f"{side:>9}{total * 1e3:6.1f} ms{cells}{(total - calls) * 1e3:6.1f} ms{stats['iter_count']:4d}")
    return "\n".join(lines)


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
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--skip-control", action="store_true", help="leave python-control out (minutes)")
    parser.add_argument("--profile", action="store_true", help="print where robodyn's time goes")
    parser.add_argument("--breakdown", action="store_true", help="print CasADi's CPU times by function, both sides")
    args = parser.parse_args()
    print(f"cart-pole swing-up, {args.knots} knots; {datetime.datetime.now(datetime.UTC):%b %d %Y %H:%M} UTC, "
          f"load {os.getloadavg()[0]:.2f}, {platform.processor() or platform.machine()}")
    for transcription in ("hermite_simpson", "trapezoidal"):
        run = side_by_side(args.knots, transcription, args.rounds)
        its = run["robodyn"][-1]["iter_count"], run["Opti"][-1]["iter_count"]
        print(f"{transcription:>16}: {its[0]} and {its[1]} iterations, costs {run['cost']:.10f} and "
              f"{run['reference']:.10f} ({abs(run['cost'] - run['reference']) / abs(run['reference']):.1e} relative)")
        for clock in ("wall", "proc"):
            print(f"{'':>16}  {ratios(run, clock)}")
        if args.breakdown:
            print(breakdown(run))
        if transcription == "trapezoidal" and not args.skip_control:
            seconds, control_cost, success = control_side(args.knots)
            cost, ours = run["cost"], min(stats["t_wall_total"] for stats in run["robodyn"])
            print(f"{'':>16}  python-control {seconds:8.2f} s (success {success}, cost {control_cost:.10f}, "
                  f"{abs(control_cost - cost) / abs(cost):.1e} relative)")
            print(f"{'':>16}  python-control / robodyn = {seconds / ours:.0f} (goal >= 50)")
    print(f"load {os.getloadavg()[0]:.2f} at the end")
    if args.profile:
        print(profile(args.knots))


if __name__ == "__main__":
    main()
