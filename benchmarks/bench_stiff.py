"""Stiff solvers side by side in one run (issue 16): robodyn radau/rosenbrock vs scipy and SUNDIALS CVODES.

Problems (tests/data/stiff/, references in tests/stiff_reference.py): ROBER to t = 1e5 and 1e11, VDPOL
(eps = 1e-6) to t = 2, a stiff joint (k = 1e6, zeta = 0.05) to t = 10, a two-link arm under a stiff PD law
to t = 3. Solvers, all with the same rtol/atol per problem and an exact Jacobian:

- robodyn ``method="radau"`` and ``method="rosenbrock"`` (skipped with a note while a name is unknown),
  timed warm (one call first, so compilation is not timed);
- scipy ``solve_ivp`` Radau and BDF, with hand-written numpy f and analytic Jacobians (the arm: numpy f
  from its closed-form M(q), c and g, checked against the model; Jacobian ``model.jacobians_raw``);
- SUNDIALS CVODES through CasADi (``casadi.integrator(..., "cvodes")``: BDF, Newton, the Jacobian derived by
  CasADi from the hand-built symbolic expressions). CasADi takes one scalar atol, so ROBER's state is
  scaled (y2 by 1e6) to give CVODES exactly the per-component error weights of the others.

Each time is the median of 3 calls; a baseline call longer than ``--long`` seconds is timed once, and one
longer than ``--budget`` seconds is stopped and reported as such. The error is ``relative_error`` at the final
time (max over components of |x - x_ref| / (|x_ref| + atol)); for ROBER also y2's own relative error.
Goals (issue 16, "at matched error against a tight reference"): scipy Radau / robodyn radau >= 10x on every
problem; CVODES / robodyn radau >= 1x on ROBER (both spans) and the stiff joint.

Solvers reach different errors at the same tolerance (CVODES's are ~100x larger than the Radau codes' at the
same rtol), so after each equal-tolerance table comes a matched-error (work-precision) section: every solver
over a ladder of rtol 1e-3 .. 1e-11 in half decades (decades 1e-3 .. 1e-10 with ``--quick``), atol scaled with
rtol (the nominal atol x rtol / nominal rtol), each rung the median of 3 calls (1 if the first takes > 2 s,
robodyn warm); a rung taking (or, from the ladder's growth so far, expected to take) more than ``--cap`` s is
skipped with the tighter ones, a failed rung is noted. The matched error of a problem is CVODES's error at the
nominal tolerance; each solver's time there is interpolated log-log between the loosest pair of consecutive rungs
whose errors bracket it ("not reached" outside its ladder: no extrapolation). The error is always floored by
the nominal atol, so that the rungs are comparable. A summary of all the goals closes the run.

    python benchmarks/bench_stiff.py [--quick] [--cap SECONDS] [--problems KEY ...]

``--quick`` (a 20 s budget, 1 s ``--long``, decade ladders, a 10 s cap) keeps the run short: the stiff joint
costs scipy's BDF ~1 min at the nominal tolerance, and with ``--quick`` its ladder is skipped when that call
is stopped. The full run takes ~8-10 min on a 2-core machine.
Needs casadi (the ``bench`` extra: ``pip install -e '.[bench]'``) for the CVODES column.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp
from timing import best_of  # benchmarks/timing.py (the script's folder is on sys.path)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import robodyn
import stiff_reference as ref
from robodyn.integrate.methods.registry import REGISTRY

PROBLEM_KEYS = ("rober_1e5", "rober_1e11", "vdpol", "stiff_joint", "pd_arm")
ARM = dict(m1=2.0, m2=1.0, l1=1.0, lc1=0.5, lc2=0.4, g=9.81, I1=0.17, I2=0.054,
           c1=0.8, a1=0.3, c2=-1.2, a2=0.4, w=2.0, kp1=2.0e5, kd1=2.0e4, kp2=2.5e4, kd2=2.5e3)


class OverBudget(Exception):
    """Raised from inside a baseline's right-hand side when its time budget is spent."""


@dataclass
class Run:
    solver: str
    seconds: float | None = None  # median; None: not run
    runs: int = 0
    x: np.ndarray | None = None
    steps: int | None = None
    note: str = ""


# --- hand-written problems (numpy for scipy, CasADi for CVODES) ----------------------------------------


def arm_equations(lib: Any, t: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    """The PD arm's x' = (q1', q2', q1'', q2'') from its closed-form M(q), Coriolis and gravity terms (planar
    arm in the x-z plane, angles from +x towards +z, gravity -z): works for numpy (math) and CasADi."""
    a = ARM
    q1, q2, v1, v2 = x[0], x[1], x[2], x[3]
    c2, s2 = lib.cos(q2), lib.sin(q2)
    m11 = a["I1"] + a["I2"] + a["m1"] * a["lc1"] ** 2 + a["m2"] * (a["l1"] ** 2 + a["lc2"] ** 2
                                                                     + 2 * a["l1"] * a["lc2"] * c2)
    m12 = a["I2"] + a["m2"] * (a["lc2"] ** 2 + a["l1"] * a["lc2"] * c2)
    m22 = a["I2"] + a["m2"] * a["lc2"] ** 2
    h = a["m2"] * a["l1"] * a["lc2"] * s2
    g2 = a["m2"] * a["lc2"] * a["g"] * lib.cos(q1 + q2)
    g1 = (a["m1"] * a["lc1"] + a["m2"] * a["l1"]) * a["g"] * lib.cos(q1) + g2
    sw, cw = lib.sin(a["w"] * t), lib.cos(a["w"] * t)
    tau1 = -a["kp1"] * (q1 - a["c1"] - a["a1"] * sw) - a["kd1"] * (v1 - a["a1"] * a["w"] * cw)
    tau2 = -a["kp2"] * (q2 - a["c2"] - a["a2"] * sw) - a["kd2"] * (v2 - a["a2"] * a["w"] * cw)
    r1 = tau1 + h * (2 * v1 * v2 + v2**2) - g1
    r2 = tau2 - h * v1**2 - g2
    det = m11 * m22 - m12**2
    return v1, v2, (m22 * r1 - m12 * r2) / det, (m11 * r2 - m12 * r1) / det


def numpy_problem(key: str, model: Any, p: np.ndarray) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Hand-written f(t, x) and Jacobian(t, x) for scipy."""
    name = ref.problem(key).model
    if name == "rober":
        def f(t: float, y: np.ndarray) -> np.ndarray:
            return np.array([-0.04 * y[0] + 1e4 * y[1] * y[2], 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
                             3e7 * y[1] ** 2])

        def jac(t: float, y: np.ndarray) -> np.ndarray:
            return np.array([[-0.04, 1e4 * y[2], 1e4 * y[1]], [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
                             [0.0, 6e7 * y[1], 0.0]])
        return f, jac
    if name == "vdpol":
        def f(t: float, y: np.ndarray) -> np.ndarray:
            return np.array([y[1], ((1 - y[0] ** 2) * y[1] - y[0]) / 1e-6])

        def jac(t: float, y: np.ndarray) -> np.ndarray:
            return np.array([[0.0, 1.0], [(-2 * y[0] * y[1] - 1) / 1e-6, (1 - y[0] ** 2) / 1e-6]])
        return f, jac
    if name == "stiff_joint":
        J, b, k = ref.JOINT["J"], ref.JOINT["b"], ref.JOINT["k"]
        w = 2 * math.pi * ref.JOINT_HZ
        A = np.array([[0.0, 1.0], [-k / J, -b / J]])

        def f(t: float, y: np.ndarray) -> np.ndarray:
            tau = ref.JOINT_TAU0 + ref.JOINT_TAU1 * math.sin(w * t)
            return np.array([y[1], (tau - b * y[1] - k * y[0]) / J])

        return f, lambda t, y: A
    if name == "pd_arm":
        u = np.zeros(0)

        def f(t: float, y: np.ndarray) -> np.ndarray:
            return np.array(arm_equations(math, t, y))

        def jac(t: float, y: np.ndarray) -> np.ndarray:
            return model.jacobians_raw(t, y, u, p)[0]
        return f, jac
    raise KeyError(key)


def casadi_problem(key: str) -> tuple[Any, Any, Any, np.ndarray, float]:
    """(x, t, ode, scale, abstol) for casadi.integrator; the integrated state is z = scale * x."""
    import casadi as ca

    spec = ref.problem(key)
    n = len(spec.x0)
    atol = spec.floor
    abstol = float(np.max(atol))
    scale = abstol / atol  # z_i = s_i x_i: CVODES' weight rtol |z_i| + abstol = s_i (rtol |x_i| + atol_i)
    z, t = ca.SX.sym("z", n), ca.SX.sym("t")
    x = [z[i] / scale[i] for i in range(n)]
    if spec.model == "rober":
        f = [-0.04 * x[0] + 1e4 * x[1] * x[2], 0.04 * x[0] - 1e4 * x[1] * x[2] - 3e7 * x[1] ** 2, 3e7 * x[1] ** 2]
    elif spec.model == "vdpol":
        f = [x[1], ((1 - x[0] ** 2) * x[1] - x[0]) / 1e-6]
    elif spec.model == "stiff_joint":
        J, b, k = ref.JOINT["J"], ref.JOINT["b"], ref.JOINT["k"]
        tau = ref.JOINT_TAU0 + ref.JOINT_TAU1 * ca.sin(2 * ca.pi * ref.JOINT_HZ * t)
        f = [x[1], (tau - b * x[1] - k * x[0]) / J]
    else:
        f = list(arm_equations(ca, t, x))
    ode = ca.vertcat(*[scale[i] * f[i] for i in range(n)])
    return z, t, ode, scale, abstol


# --- timing -----------------------------------------------------------------------------------------


def timed(solve: Callable[[], tuple[np.ndarray, int | None]], repeat: int, long: float) -> tuple[float, int, Any]:
    """Median of ``repeat`` calls (one if the first takes longer than ``long`` s); the last call's result."""
    holder: list[Any] = []
    seconds = [best_of(lambda: holder.append(solve()), 1, 1)]
    while len(seconds) < repeat and seconds[0] <= long:
        seconds.append(best_of(lambda: holder.append(solve()), 1, 1))
    return statistics.median(seconds), len(seconds), holder[-1]


@functools.cache
def _model(name: str) -> Any:
    """The stiff model file, loaded once per run (so the ladder reuses the warm kernel)."""
    return ref.load(name)


def robodyn_run(key: str, method: str, repeat: int, long: float, loosen: float = 1.0, warm: bool = True) -> Run:
    """robodyn ``method`` at the problem's tolerances (both multiplied by ``loosen``); ``warm``: one untimed
    call first (compilation, loading), reported in the note."""
    spec = ref.problem(key)
    label = f"robodyn {method}"
    if method not in REGISTRY:
        return Run(label, note=f"method {method!r} unknown to this robodyn (being written): skipped")
    model = _model(spec.model)
    atol = (spec.floor * loosen).tolist()
    rtol = spec.rtol * loosen

    def solve() -> tuple[np.ndarray, int | None]:
        result = robodyn.simulate(model, spec.t_span, list(spec.x0), spec.u(), method=method, rtol=rtol, atol=atol)
        return np.asarray(result.x[-1]), result.stats.steps

    note = ""
    if warm:
        start = time.perf_counter()
        first = robodyn.simulate(model, spec.t_span, list(spec.x0), spec.u(), method=method, rtol=rtol, atol=atol)
        entry = REGISTRY[method]
        where = f"{entry.family}" + (f", scipy {entry.scipy_name}" if entry.scipy_name else "")
        note = f"[{where}; path {first.stats.path}; first call {time.perf_counter() - start:.2f} s]"
    seconds, runs, (x, steps) = timed(solve, repeat, long)
    return Run(label, seconds, runs, x, steps, note=note)


def scipy_run(key: str, method: str, repeat: int, long: float, budget: float, loosen: float = 1.0) -> Run:
    """scipy ``method`` at the problem's tolerances (both multiplied by ``loosen``)."""
    spec = ref.problem(key)
    model = _model(spec.model)
    _, p = model.default_parameters()
    f, jac = numpy_problem(key, model, p)
    atol = np.asarray(spec.atol, dtype=float) * loosen
    rtol = spec.rtol * loosen
    deadline = [0.0]

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        if time.perf_counter() > deadline[0]:
            raise OverBudget
        return f(t, y)

    def solve() -> tuple[np.ndarray, int | None]:
        deadline[0] = time.perf_counter() + budget
        run = solve_ivp(rhs, spec.t_span, spec.x0, method=method, jac=jac, rtol=rtol, atol=atol)
        if run.status != 0:
            raise RuntimeError(run.message)
        return run.y[:, -1], run.t.size - 1

    try:
        seconds, runs, (x, steps) = timed(solve, repeat, long)
    except OverBudget:
        return Run(f"scipy {method}", note=f"stopped after its {budget:.0f} s budget (--budget)")
    return Run(f"scipy {method}", seconds, runs, x, steps)


def matched_scipy_radau(key: str, target: float, budget: float) -> Run | None:
    """scipy Radau at the loosest of rtol, atol x 10, 100, 1000 whose error is still <= ``target`` (robodyn
    radau's): so that the ratio is also judged at matched error, not only at equal tolerances. One call each."""
    spec = ref.problem(key)
    best = None
    for loosen in (10.0, 100.0, 1000.0):
        run = scipy_run(key, "Radau", 1, 0.0, budget, loosen)
        if run.x is None or ref.relative_error(run.x, spec.reference, spec.floor) > target:
            break
        run.solver, run.note = "scipy Radau", f"[matched error: rtol, atol x {loosen:g}]"
        best = run
    return best


def cvodes_run(key: str, repeat: int, long: float, loosen: float = 1.0, warm: bool = False) -> Run:
    """CVODES at the problem's tolerances (both multiplied by ``loosen``); ``warm``: one untimed call first."""
    try:
        import casadi as ca
    except ImportError:
        return Run("CVODES (CasADi)", note="casadi not installed: pip install -e '.[bench]'")
    spec = ref.problem(key)
    z, t, ode, scale, abstol = casadi_problem(key)
    options: dict[str, Any] = {"reltol": spec.rtol * loosen, "abstol": abstol * loosen,
               "linear_multistep_method": "bdf",
               "nonlinear_solver_iteration": "newton", "max_num_steps": 10**8}
    integrator = ca.integrator("I", "cvodes", {"x": z, "t": t, "ode": ode}, spec.t_span[0], spec.t_span[1], options)
    z0 = np.asarray(spec.x0) * scale

    def solve() -> tuple[np.ndarray, int | None]:
        zf = np.asarray(integrator(x0=z0)["xf"]).ravel()
        return zf / scale, int(integrator.stats()["nsteps"])

    if warm:
        solve()
    seconds, runs, (x, steps) = timed(solve, repeat, long)
    return Run("CVODES (CasADi)", seconds, runs, x, steps, note=f"[CasADi {getattr(ca, '__version__', '?')}]")


# --- report -----------------------------------------------------------------------------------------


def check_arm_equations() -> float:
    """The hand-written arm against the model file (max relative difference of x' at random states)."""
    model = ref.load("pd_arm")
    _, p = model.default_parameters()
    worst = 0.0
    for x in np.random.default_rng(0).uniform(-2, 2, (20, 4)):
        mine = np.array(arm_equations(math, 0.37, x))
        theirs = model.f_raw(0.37, x, np.zeros(0), p)
        worst = max(worst, float(np.max(np.abs(mine - theirs) / (np.abs(theirs) + 1e-6))))
    return worst


def report(key: str, runs: list[Run], budget: float) -> dict[str, float]:
    spec = ref.problem(key)
    x_ref = spec.reference
    atol_text = f"{spec.atol:g}" if isinstance(spec.atol, float) else "(" + ", ".join(f"{a:g}" for a in spec.atol) + ")"
    print(f"{spec.name}: rtol {spec.rtol:g}, atol {atol_text}; reference: {spec.source}")
    times: dict[str, float] = {}
    for run in runs:
        if run.seconds is None or run.x is None:
            print(f"  {run.solver:18s} {run.note}")
            continue
        error = ref.relative_error(run.x, x_ref, spec.floor)
        extra = ""
        if spec.model == "rober":
            extra = f", y2 {abs(run.x[1] - x_ref[1]) / x_ref[1]:.1e}"
        steps = f"{run.steps:7d} steps" if run.steps is not None else "      ? steps"
        once = " (1 run)" if run.runs == 1 else ""
        print(f"  {run.solver:18s} {run.seconds * 1e3:10.2f} ms{once:8s} {steps}  error {error:.1e}{extra}  {run.note}")
        times[run.solver] = run.seconds
    ours = times.get("robodyn radau")
    matched, matched_text = None, ""
    ours_run = next((r for r in runs if r.solver == "robodyn radau" and r.x is not None), None)
    scipy_error = next((ref.relative_error(r.x, x_ref, spec.floor) for r in runs
                        if r.solver == "scipy Radau" and r.x is not None), None)
    if ours_run is not None and scipy_error is not None:
        target = ref.relative_error(ours_run.x, x_ref, spec.floor)
        if scipy_error >= target:
            matched_text = "(scipy Radau is no more accurate than robodyn radau at equal tolerances)"
        else:  # scipy is more accurate at equal tolerances: its time at robodyn's error too
            matched = matched_scipy_radau(key, target, budget)
            if matched is None:
                matched_text = ("(scipy Radau at 10x looser tolerances is already less accurate than robodyn "
                                "radau: the ratio above holds at matched error)")
    if ours:
        cvodes_goal = 1.0 if spec.model in ("rober", "stiff_joint") else None
        for other, goal in (("scipy Radau", 10.0), ("CVODES (CasADi)", cvodes_goal)):
            if other in times:
                ratio = times[other] / ours
                goal_text = f"  (goal >= {goal:g}x: {'met' if ratio >= goal else 'missed'})" if goal else ""
                print(f"  ratio {other} / robodyn radau: {ratio:.2f}x{goal_text}")
    if matched is not None and matched.seconds is not None and ours:
        assert matched.x is not None
        error = ref.relative_error(matched.x, x_ref, spec.floor)
        print(f"  scipy Radau at robodyn radau's error or better: {matched.seconds * 1e3:.2f} ms (1 run), "
              f"{matched.steps} steps, error {error:.1e} {matched.note}: ratio {matched.seconds / ours:.2f}x")
    elif matched_text:
        print(f"  {matched_text}")
    if "robodyn rosenbrock" in times and "scipy Radau" in times:
        print(f"  ratio scipy Radau / robodyn rosenbrock: {times['scipy Radau'] / times['robodyn rosenbrock']:.2f}x")
    return times


# --- matched error (work-precision ladders) ---------------------------------------------------------

SOLVERS = ("robodyn radau", "robodyn rosenbrock", "scipy Radau", "scipy BDF", "CVODES (CasADi)")
SHORT = {"robodyn radau": "robodyn radau", "robodyn rosenbrock": "robodyn rosenb.", "scipy Radau": "scipy Radau",
         "scipy BDF": "scipy BDF", "CVODES (CasADi)": "CVODES"}
CVODES_GOAL = ("rober", "stiff_joint")  # model names where CVODES / robodyn radau >= 1x is a goal


@dataclass
class Point:
    """One rung of a solver's ladder: rtol (atol scaled with it), error vs the reference, median time."""

    rtol: float
    error: float | None = None
    seconds: float | None = None
    runs: int = 0
    note: str = ""  # why there is no error/time: failed, over the cap, skipped


def rungs(quick: bool) -> list[float]:
    """The ladder's rtol values, loose to tight: 1e-3 .. 1e-11 in half decades (decades 1e-3 .. 1e-10 with
    --quick); every problem's nominal rtol 1e-8 is a rung."""
    exponents = [-3 - k for k in range(8)] if quick else [-3 - k / 2 for k in range(17)]
    return [10.0**e for e in exponents]


def run_at(solver: str, key: str, loosen: float, warm: bool, cap: float) -> Run:
    """``solver`` at the problem's tolerances times ``loosen``: median of 3, one run if the first takes > 2 s."""
    if solver.startswith("robodyn "):
        return robodyn_run(key, solver.split()[1], 3, 2.0, loosen, warm)
    if solver.startswith("scipy "):
        return scipy_run(key, solver.split()[1], 3, 2.0, cap, loosen)
    return cvodes_run(key, 3, 2.0, loosen, warm)


def ladder(key: str, solver: str, ladder_rtols: list[float], cap: float, nominal: Run | None) -> list[Point]:
    """``solver``'s errors and times over the ladder, loose to tight. The rung at the nominal rtol reuses the
    equal-tolerance run (``nominal``). A rung is skipped, and so are the tighter ones, when it took (or, from
    the last two rungs' growth, would take) more than ``cap`` s; a failed rung is noted and the ladder goes on."""
    spec = ref.problem(key)
    points: list[Point] = []
    done: list[float] = []  # times of the rungs run so far
    stopped = ""
    for rtol in ladder_rtols:
        point = Point(rtol)
        points.append(point)
        if stopped:
            point.note = stopped
            continue
        if len(done) >= 2:
            growth = min(4.0, max(1.0, done[-1] / done[-2]))
            if done[-1] * growth > cap:
                point.note = stopped = f"skipped (> {cap:g} s expected)"
                continue
        if nominal is not None and math.isclose(rtol, spec.rtol, rel_tol=1e-9):
            run = nominal
        else:
            try:
                run = run_at(solver, key, rtol / spec.rtol, not done, cap)
            except Exception as error:  # a solver refusing a tolerance or failing: noted, the ladder goes on
                point.note = f"failed ({type(error).__name__}: {str(error).strip()[:70]})"
                continue
        if run.seconds is None or run.x is None:  # scipy's call stopped by its deadline
            point.note = f"stopped (over {cap:g} s)" if run is not nominal else "stopped (over the table's budget)"
            stopped = "skipped (tighter than an over-cap rung)"
            continue
        if run.seconds > cap:
            point.note = f"dropped (took {run.seconds:.0f} s > {cap:g} s)"
            stopped = "skipped (tighter than an over-cap rung)"
            continue
        point.error = ref.relative_error(run.x, spec.reference, spec.floor)
        point.seconds, point.runs = run.seconds, run.runs
        done.append(run.seconds)
    return points


def time_at(points: list[Point], target: float) -> tuple[list[tuple[float, str]], str]:
    """The times at error ``target``, by log-log interpolation between two consecutive (measured) rungs whose
    errors bracket it: one per such pair, loosest first (errors need not fall monotonically with rtol, so a
    ladder can cross ``target`` more than once); ([], why) when ``target`` is outside the ladder's errors."""
    measured = [p for p in points if p.error is not None and p.seconds is not None]
    if not measured:
        return [], "no rung measured"
    crossings: list[tuple[float, str]] = []
    for a, b in itertools.pairwise(measured):
        assert a.error is not None and b.error is not None and a.seconds is not None and b.seconds is not None
        if a.error == target and crossings:
            continue  # the rung on the target ends the previous pair: the same crossing
        if min(a.error, b.error) <= target <= max(a.error, b.error):
            ea, eb = math.log(max(a.error, 1e-300)), math.log(max(b.error, 1e-300))
            w = 0.0 if ea == eb else (math.log(target) - ea) / (eb - ea)
            seconds = math.exp(math.log(a.seconds) + w * (math.log(b.seconds) - math.log(a.seconds)))
            crossings.append((seconds, f"rtol {a.rtol:.1e} .. {b.rtol:.1e}"))
    if crossings:
        return crossings, ""
    errors = [p.error for p in measured if p.error is not None]
    if len(measured) == 1 and errors[0] == target:
        assert measured[0].seconds is not None
        return [(measured[0].seconds, f"at rtol {measured[0].rtol:.1e}")], ""
    lo, hi = min(errors), max(errors)
    side = "all smaller" if target > hi else "all larger"
    return [], f"its errors {lo:.1e} .. {hi:.1e}, {side}: no extrapolation"


def fmt_time(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds < 1.0 else f"{seconds:.3g} s"


def print_ladders(ladders: dict[str, list[Point]], ladder_rtols: list[float]) -> None:
    """One row per rtol, one column per solver: error and median time (* one run)."""
    width = 19
    print("    rtol    " + "".join(f"{SHORT[name]:>{width}s}" for name in ladders))
    for i, rtol in enumerate(ladder_rtols):
        cells = []
        for points in ladders.values():
            point = points[i]
            if point.error is None or point.seconds is None:
                cells.append(point.note.split(" (")[0] if point.note else "-")
            else:
                cells.append(f"{point.error:.1e} {fmt_time(point.seconds)}{'*' if point.runs == 1 else ' '}")
        print(f"    {rtol:.1e} " + "".join(f"{cell:>{width}s}" for cell in cells))
    for name, points in ladders.items():
        over = next((p for p in points if p.note.startswith(("stopped", "dropped", "skipped"))), None)
        failed = [p for p in points if p.note.startswith("failed")]
        if over is not None:
            print(f"    {SHORT[name]}: {over.note} at rtol {over.rtol:.1e}; no tighter rung run")
        if failed:
            print(f"    {SHORT[name]}: failed at rtol " + ", ".join(f"{p.rtol:.1e} {p.note[7:]}" for p in failed))


def matched(key: str, runs: list[Run], quick: bool, cap: float) -> list[tuple[str, str, float | None, float | None,
                                                                                  str]]:
    """The matched-error section of one problem; returns its goal rows (problem, goal, equal-tolerance ratio,
    matched-error ratio, status) for the summary."""
    spec = ref.problem(key)
    by_name = {run.solver: run for run in runs}
    cvodes = by_name.get("CVODES (CasADi)")
    goals: list[tuple[str, str, float | None, float | None, str]] = []
    ours = by_name.get("robodyn radau")
    equal = {name: (by_name[name].seconds / ours.seconds if ours is not None and ours.seconds and name in by_name
                    and by_name[name].seconds else None) for name in ("scipy Radau", "CVODES (CasADi)")}
    if cvodes is None or cvodes.x is None:
        print("  matched error: no CVODES run at the nominal tolerance, so no matched error")
        return goals
    target = ref.relative_error(cvodes.x, spec.reference, spec.floor)
    ladder_rtols = rungs(quick)
    ladders: dict[str, list[Point]] = {}
    for name in SOLVERS:
        nominal = by_name.get(name)
        if name.startswith("robodyn ") and name.split()[1] not in REGISTRY:
            continue
        if quick and nominal is not None and nominal.seconds is None and name.startswith("scipy"):
            print(f"  ({name}: over its budget at the nominal tolerance, its ladder is skipped with --quick)")
            continue
        ladders[name] = ladder(key, name, ladder_rtols, cap, nominal)
    print(f"  work-precision ladder (atol = nominal atol x rtol / {spec.rtol:g}; error / median time, * one run):")
    print_ladders(ladders, ladder_rtols)
    print(f"  matched error = CVODES's error at the nominal rtol {spec.rtol:g}: {target:.2e}")
    print(f"    {'solver':20s} {'time':>10s}   bracketing rungs (the loosest pair is used; others listed)")
    times: dict[str, list[float]] = {}
    for name, points in ladders.items():
        crossings, why = time_at(points, target)
        times[name] = [seconds for seconds, _ in crossings]
        if not crossings:
            print(f"    {name:20s} {'not reached':>10s}   ({why})")
            continue
        others = "; also " + ", ".join(f"{fmt_time(t)} at {how}" for t, how in crossings[1:]) if crossings[1:] else ""
        print(f"    {name:20s} {fmt_time(crossings[0][0]):>10s}   {crossings[0][1]}{others}")
    base = times.get("robodyn radau") or []
    for other, goal in (("scipy Radau", 10.0), ("CVODES (CasADi)", 1.0 if spec.model in CVODES_GOAL else None)):
        values = times.get(other) or []
        ratio = values[0] / base[0] if values and base else None
        spread = ""
        if ratio is not None and (len(values) > 1 or len(base) > 1):
            low, high = min(values) / max(base), max(values) / min(base)
            spread = f" (over all crossings {low:.2f}x .. {high:.2f}x)"
        if goal is None:
            status = "(no goal)"
        elif ratio is None:
            status = "not determined (a time not reached)"
        else:
            status = "goal met" if ratio >= goal else "not met"
            if spread and (low >= goal) != (high >= goal):
                status += ", depends on the crossing"
        shown = f"{ratio:.2f}x" if ratio is not None else "n/a"
        goal_text = f", goal >= {goal:g}x: {status}" if goal else f" {status}"
        print(f"  ratio {SHORT[other]} / robodyn radau at matched error: {shown}{spread}{goal_text}")
        if goal is not None:
            goals.append((spec.name, f"{SHORT[other]} / robodyn radau >= {goal:g}x", equal[other], ratio, status))
    return goals


def print_summary(goals: list[tuple[str, str, float | None, float | None, str]]) -> None:
    print("summary of the goals (judged at matched error; the equal-tolerance ratio for comparison):")
    print(f"  {'problem':38s} {'goal':35s} {'equal tol':>10s} {'matched err':>12s}  status")
    for problem, goal, equal, ratio, status in goals:
        e = f"{equal:.2f}x" if equal is not None else "n/a"
        r = f"{ratio:.2f}x" if ratio is not None else "n/a"
        print(f"  {problem:38s} {goal:35s} {e:>10s} {r:>12s}  {status}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="a 20 s budget per baseline call, 1 s --long, decade ladders, a 10 s cap")
    parser.add_argument("--budget", type=float, default=None, help="stop a baseline call after this many s")
    parser.add_argument("--long", type=float, default=None, help="time a baseline call once above this many s")
    parser.add_argument("--cap", type=float, default=None,
                        help="matched error: skip ladder rungs taking more than this many s (20; 10 with --quick)")
    parser.add_argument("--problems", nargs="*", default=list(PROBLEM_KEYS), choices=PROBLEM_KEYS)
    args = parser.parse_args()
    cap = args.cap if args.cap is not None else (10.0 if args.quick else 20.0)
    started = time.perf_counter()
    budget = args.budget if args.budget is not None else (20.0 if args.quick else 300.0)
    long = args.long if args.long is not None else (1.0 if args.quick else 10.0)
    load = os.getloadavg()
    print(f"robodyn {robodyn.__version__}, {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"machine load (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"medians of 3 (1 run when a call takes > {long:g} s; baselines stopped after {budget:g} s); "
          f"hand-written arm vs model file: max rel. difference of x' {check_arm_equations():.1e}")
    print("error = relative_error of the final state: the worst component's |x - x_ref| / (|x_ref| + atol), atol "
          "the problem's nominal atol (the same floor at every rung of a ladder)")
    print(f"per problem: the equal-tolerance table (every solver at the nominal rtol/atol), then the matched-error "
          f"section: each solver over an rtol ladder {rungs(args.quick)[0]:.0e} .. {rungs(args.quick)[-1]:.0e} "
          f"({'decades' if args.quick else 'half decades'}; medians of 3, 1 run above 2 s; rungs over {cap:g} s "
          "stopped or skipped), its time at the matched error (CVODES's error at the nominal tolerance) by log-log "
          "interpolation between the bracketing rungs, no extrapolation")
    goals = []
    for key in args.problems:
        runs = [robodyn_run(key, "radau", 3, long), robodyn_run(key, "rosenbrock", 3, long),
                scipy_run(key, "Radau", 3, long, budget), scipy_run(key, "BDF", 3, long, budget),
                cvodes_run(key, 3, long)]
        report(key, runs, budget)
        goals += matched(key, runs, args.quick, cap)
        sys.stdout.flush()
    print_summary(goals)
    load = os.getloadavg()
    print(f"machine load at the end (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
