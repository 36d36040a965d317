"""Forward sensitivities' cost (issue 30, item 1): ``simulate(..., sensitivities=[...])`` against a plain run.

The goal: at rtol 1e-8 a run with k sensitivities costs at most 1 + k plain runs (what differencing would cost with
one extra simulation per parameter, one-sided). Cases, each at rtol 1e-8, timed warm (one call of each first, so
compilation is not timed), best of ``--rounds`` rounds taken in turn (plain, with sensitivities, CVODES):

- the catalog pendulum over 10 s, dopri5 and radau, with respect to l and x0 (k = 3);
- ROBER (tests/data/stiff/rober.yaml) to t = 1e5, radau, with respect to its three rate constants (k = 3);
- the catalog two-link arm over 5 s, dopri5, with respect to m2, lc2 and l1 (k = 3).

Beside them, when casadi is installed, SUNDIALS CVODES through CasADi on the same problem at the same tolerances,
plain and with its forward sensitivities (``F.factory(..., ["xf", "jac:xf:p", "jac:xf:x0"])``, ``fsens_err_con``),
each function made once and called in the rounds: the same comparison for a mature code.

    python benchmarks/bench_sensitivities.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from timing import best_of  # benchmarks/timing.py (the script's folder is on sys.path)

import robodyn

ROOT = Path(__file__).resolve().parent.parent
RTOL = 1e-8


@dataclass(frozen=True)
class Case:
    label: str
    model: Any
    t_final: float
    x0: list[float]
    method: str
    names: list[str]
    atol: Any
    casadi: Callable[[], tuple[Callable[[], Any], Callable[[], Any]]] | None = None


def _casadi_functions(rhs: Callable[[Any, Any], Any], n: int, p: list[float], x0: list[float], t_final: float,
                      atol: float, wrt: tuple[str, ...]) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """A plain CVODES run and one with forward sensitivities (``wrt``: ``jac:xf:p``, ``jac:xf:x0``), made once."""
    import casadi as ca

    x, q = ca.SX.sym("x", n), ca.SX.sym("p", len(p))
    options = {"reltol": RTOL, "abstol": atol, "fsens_err_con": True, "max_num_steps": 100000}
    F = ca.integrator("F", "cvodes", {"x": x, "p": q, "ode": rhs(x, q)}, 0.0, [t_final], options)
    J = F.factory("J", ["x0", "p"], ["xf", *wrt])
    return (lambda: F(x0=x0, p=p)), (lambda: J(x0, p))


def _pendulum_casadi() -> tuple[Callable[[], Any], Callable[[], Any]]:
    import casadi as ca

    def rhs(x: Any, q: Any) -> Any:
        return ca.vertcat(x[1], -q[0] * q[1] * q[2] * ca.sin(x[0]) / (q[0] * q[2] ** 2))

    return _casadi_functions(rhs, 2, [1.0, 9.81, 1.0], [1.0, 0.0], 10.0, 1e-10, ("jac:xf:p", "jac:xf:x0"))


def _rober_casadi() -> tuple[Callable[[], Any], Callable[[], Any]]:
    import casadi as ca

    def rhs(x: Any, q: Any) -> Any:
        return ca.vertcat(-q[0] * x[0] + q[2] * x[1] * x[2], q[0] * x[0] - q[2] * x[1] * x[2] - q[1] * x[1] ** 2,
                          q[1] * x[1] ** 2)

    return _casadi_functions(rhs, 3, [0.04, 3e7, 1e4], [1.0, 0.0, 0.0], 1e5, 1e-14, ("jac:xf:p",))


def cases() -> list[Case]:
    pendulum = robodyn.load("pendulum")
    rober = robodyn.load(str(ROOT / "tests" / "data" / "stiff" / "rober.yaml"))
    arm = robodyn.load("two_link_arm")
    return [
        Case("pendulum, l and x0", pendulum, 10.0, [1.0, 0.0], "dopri5", ["l", "x0"], 1e-10, _pendulum_casadi),
        Case("pendulum, l and x0", pendulum, 10.0, [1.0, 0.0], "radau", ["l", "x0"], 1e-10),
        Case("ROBER to 1e5, k1 k2 k3", rober, 1e5, [1.0, 0.0, 0.0], "radau", ["k1", "k2", "k3"], 1e-14,
             _rober_casadi),
        Case("two-link arm, m2 lc2 l1", arm, 5.0, [0.3, -0.2, 0.0, 0.0], "dopri5", ["m2", "lc2", "l1"], 1e-10),
    ]


def measure(case: Case, rounds: int) -> dict[str, Any]:
    def plain() -> Any:
        return robodyn.simulate(case.model, case.t_final, case.x0, method=case.method, rtol=RTOL, atol=case.atol)

    def sensitive() -> Any:
        return robodyn.simulate(case.model, case.t_final, case.x0, method=case.method, rtol=RTOL, atol=case.atol,
                                sensitivities=case.names)

    first, second = plain(), sensitive()  # compiled (or loaded) here, not in the rounds
    functions: list[Callable[[], Any]] = [plain, sensitive]
    if case.casadi is not None:
        try:
            functions += list(case.casadi())
        except ImportError:
            pass
    number = max(1, int(0.05 / max(1e-6, _once(sensitive))))
    times = [float("inf")] * len(functions)
    for _ in range(rounds):
        for k, function in enumerate(functions):
            times[k] = min(times[k], best_of(function, 1, number))
    k = len(second.sensitivity_names)
    return {"case": case, "k": k, "times": times, "steps": (first.stats.steps, second.stats.steps),
            "method": second.sensitivity_method}


def _once(function: Callable[[], Any]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds taken in turn (best of them; default 7)")
    args = parser.parse_args()
    print(f"robodyn {robodyn.__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, rtol {RTOL:g}; "
          f"best of {args.rounds} rounds, ms per run")
    print(f"{'case':28s} {'method':7s} {'plain':>9s} {'sens':>9s} {'ratio':>6s} {'goal':>5s}  steps      "
          f"{'CVODES':>9s} {'+sens':>9s} {'ratio':>6s}")
    met = True
    for case in cases():
        found = measure(case, args.rounds)
        times, k = found["times"], found["k"]
        ratio = times[1] / times[0]
        met = met and ratio <= 1 + k
        cvodes = f"{times[2] * 1e3:9.3f} {times[3] * 1e3:9.3f} {times[3] / times[2]:6.2f}" if len(times) == 4 else ""
        print(f"{case.label:28s} {case.method:7s} {times[0] * 1e3:9.3f} {times[1] * 1e3:9.3f} {ratio:6.2f} "
              f"{1 + k:5d}  {found['steps'][0]:4d}/{found['steps'][1]:<5d} {cvodes}")
    print(f"goal (with k sensitivities <= 1 + k plain runs): {'met' if met else 'NOT met'}; "
          f"load after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
