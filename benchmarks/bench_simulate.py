"""Simulation speed, side by side in one run: robodyn vs scipy (and diffrax when installed).

Prints times and ratios; absolute times vary on a shared machine, the ratios are what to compare.
Goals (issue 3): joint dopri5 >= 100x scipy RK45 at equal or smaller error; 10,000 pendulums >= 300x a
scipy loop and >= 3x diffrax Tsit5 (jit + vmap); (issue 25) 10,000 pendulums within 1.3x of a hand-written
numba ``prange`` DOPRI5 of the model (prange_dopri5.py), 10,000 double pendulums >= 3x diffrax. Start-up
(issue 16): a new process with a warm cache reaches its first result in <= 0.5 s, a new model on a machine
whose kernels are compiled in <= 1.5 s (the table of :func:`bench_startup`, with the same job as a scipy and a
CasADi script).

    python benchmarks/bench_simulate.py [--quick]

``make bench`` installs the ``bench`` extra (diffrax and jax) for the diffrax comparison.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp
from timing import best_of  # benchmarks/timing.py (the script's folder is on sys.path)

import robodyn


def joint_closed_form(t: np.ndarray) -> np.ndarray:
    """Step response of J q'' + b q' + k q = 1 from rest (J = 0.01, b = 0.1, k = 1)."""
    wn, zeta = 10.0, 0.5
    wd = wn * np.sqrt(1 - zeta**2)
    decay = np.exp(-zeta * wn * t)
    q = 1 - decay * (np.cos(wd * t) + zeta * wn / wd * np.sin(wd * t))
    qd = decay * (wn**2 / wd) * np.sin(wd * t)
    return np.stack([q, qd], axis=1)


def bench_joint() -> dict[str, float]:
    model = robodyn.load("joint")
    options = dict(method="dopri5", rtol=1e-8, atol=1e-10)
    start = time.perf_counter()
    first = robodyn.simulate(model, 5.0, [0.0, 0.0], 1.0, **options)
    first_call = time.perf_counter() - start
    ours = best_of(lambda: robodyn.simulate(model, 5.0, [0.0, 0.0], 1.0, **options), 5, 50)

    def f(t, x):
        return [x[1], (1.0 - 0.1 * x[1] - 1.0 * x[0]) / 0.01]

    reference = solve_ivp(f, (0, 5), [0.0, 0.0], method="RK45", rtol=1e-8, atol=1e-10)
    theirs = best_of(lambda: solve_ivp(f, (0, 5), [0.0, 0.0], method="RK45", rtol=1e-8, atol=1e-10), 3, 5)
    error_ours = float(np.max(np.abs(first.x - joint_closed_form(first.t))))
    error_scipy = float(np.max(np.abs(reference.y.T - joint_closed_form(reference.t))))
    print("joint, t in [0, 5], u = 1, rtol 1e-8, atol 1e-10")
    print(f"  robodyn dopri5 (compiled): {ours * 1e6:9.1f} us per simulate(), {first.stats.steps} steps, "
          f"max error {error_ours:.2e}  (first call incl. compile/load {first_call:.2f} s, "
          f"compile {first.stats.compile_seconds:.2f} s)")
    print(f"  scipy solve_ivp RK45:      {theirs * 1e6:9.1f} us per call,       {len(reference.t) - 1} steps, "
          f"max error {error_scipy:.2e}")
    print(f"  ratio scipy / robodyn: {theirs / ours:.1f}x  (goal >= 100x, error {error_ours <= error_scipy * 1.01})")
    return {"joint_ratio": theirs / ours}


def _interleaved(runs: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Best wall time of each of ``runs`` over ``rounds`` rounds that run them in turn (a shared machine: the
    ratios of one round's neighbours are what to compare)."""
    best = dict.fromkeys(runs, math.inf)
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def bench_pendulums(count: int, loop_sample: int) -> dict[str, float]:
    """10,000 pendulums: robodyn's batch against a hand-written numba ``prange`` DOPRI5 of the same model
    (benchmarks/prange_dopri5.py; goal: within 1.3x), a scipy loop (>= 300x) and diffrax (>= 3x)."""
    from prange_dopri5 import batch as prange_batch

    model = robodyn.load("pendulum")
    rng = np.random.default_rng(0)
    theta0 = rng.uniform(-3, 3, count)
    t_eval = np.linspace(0, 10, 101)
    options = dict(method="dopri5", rtol=1e-8, atol=1e-10, t_eval=t_eval)
    warm = robodyn.simulate(model, 10.0, {"theta": theta0[:4]}, **options)  # compile the batch kernel
    hand = np.empty((count, t_eval.size, 2))
    start = time.perf_counter()
    hand_steps = prange_batch(theta0, t_eval, 1e-8, 1e-10, hand)  # numba compiles it (or loads its cache)
    hand_compile = time.perf_counter() - start
    results: dict[str, Any] = {}

    def ours() -> None:
        results["batch"] = robodyn.simulate(model, 10.0, {"theta": theta0}, **options)

    times = _interleaved({"robodyn": ours, "prange": lambda: prange_batch(theta0, t_eval, 1e-8, 1e-10, hand)}, 5)
    batch = results["batch"]

    def f(t, x):
        return [x[1], -9.81 * np.sin(x[0])]

    start = time.perf_counter()
    for th in theta0[:loop_sample]:
        solve_ivp(f, (0, 10), [th, 0.0], method="RK45", rtol=1e-8, atol=1e-10, t_eval=t_eval)
    scipy_total = (time.perf_counter() - start) / loop_sample * count
    seconds = times["robodyn"]
    print(f"{count} pendulums, theta0 ~ U[-3, 3], t in [0, 10], rtol 1e-8, 101 outputs ({os.cpu_count()} cores; "
          "best of 5 rounds, in turn)")
    print(f"  robodyn batch (threads):  {seconds:8.3f} s  (batch compile {warm.stats.compile_seconds:.2f} s, once; "
          f"{batch.stats.steps} steps)")
    print(f"  hand-written numba prange DOPRI5: {times['prange']:8.3f} s  (compile {hand_compile:.1f} s; "
          f"{int(hand_steps.sum())} steps, outputs differ by {np.max(np.abs(hand - batch.x)):.1e})")
    print(f"  ratio robodyn / prange: {seconds / times['prange']:.2f}  (goal <= 1.3)")
    print(f"  scipy loop (extrapolated from {loop_sample} runs): {scipy_total:8.1f} s")
    print(f"  ratio scipy / robodyn: {scipy_total / seconds:.0f}x  (goal >= 300x)")
    assert batch.x.shape == (count, t_eval.size, 2)
    summary = {"pendulum_ratio": scipy_total / seconds, "prange_ratio": seconds / times["prange"]}
    if _has_diffrax():
        summary["diffrax_ratio"] = bench_diffrax(theta0, t_eval) / seconds
        print(f"  ratio diffrax / robodyn: {summary['diffrax_ratio']:.1f}x  (goal >= 3x)")
    return summary


def _has_diffrax() -> bool:
    try:
        import diffrax  # noqa: F401
    except ImportError:
        print("  diffrax not installed: comparison skipped (pip install -e '.[bench]')")
        return False
    return True


def _diffrax_solve(vector_field: Callable[..., Any], t_eval: np.ndarray) -> Callable[[Any], Any]:
    """diffrax Tsit5 with a PID controller at rtol 1e-8, atol 1e-10, jit + vmap over the initial states."""
    import diffrax
    import jax
    import jax.numpy as jnp

    @jax.jit
    @jax.vmap
    def solve(y):
        return diffrax.diffeqsolve(
            diffrax.ODETerm(vector_field), diffrax.Tsit5(), 0.0, float(t_eval[-1]), 1e-3, y,
            saveat=diffrax.SaveAt(ts=jnp.asarray(t_eval)),
            stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-10), max_steps=100_000,
        ).ys

    return solve


def _time_diffrax(solve: Callable[[Any], Any], y0: Any, label: str) -> tuple[float, np.ndarray]:
    solve(y0).block_until_ready()  # compile
    best = math.inf
    for _ in range(2):
        start = time.perf_counter()
        ys = solve(y0).block_until_ready()
        best = min(best, time.perf_counter() - start)
    print(f"  diffrax Tsit5 (jit + vmap): {best:8.3f} s  ({label})")
    return best, np.asarray(ys)


def bench_diffrax(theta0: np.ndarray, t_eval: np.ndarray) -> float:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def vector_field(t, y, args):
        return jnp.stack([y[1], -9.81 * jnp.sin(y[0])])

    y0 = jnp.stack([jnp.asarray(theta0), jnp.zeros(theta0.size)], axis=1)
    return _time_diffrax(_diffrax_solve(vector_field, t_eval), y0, "after compile")[0]


def bench_double_pendulums(count: int) -> dict[str, float]:
    """10,000 double pendulums (the catalog's, unit masses and links): robodyn's batch against diffrax (>= 3x)."""
    model = robodyn.load("double_pendulum")
    rng = np.random.default_rng(1)
    x0 = np.zeros((count, 4))
    x0[:, :2] = rng.uniform(-1.0, 1.0, (count, 2))  # moderate angles: not chaotic, so the solvers agree
    t_eval = np.linspace(0, 10, 101)
    options = dict(method="dopri5", rtol=1e-8, atol=1e-10, t_eval=t_eval)
    warm = robodyn.simulate(model, 10.0, x0[:4], **options)
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        batch = robodyn.simulate(model, 10.0, x0, **options)
        best = min(best, time.perf_counter() - start)
    print(f"{count} double pendulums, angles ~ U[-1, 1], t in [0, 10], rtol 1e-8, 101 outputs")
    print(f"  robodyn batch (threads):  {best:8.3f} s  (batch compile {warm.stats.compile_seconds:.2f} s, once; "
          f"{batch.stats.steps} steps)")
    if not _has_diffrax():
        return {}
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    g = 9.81

    def vector_field(t, y, args):  # M(q) q'' = r with m1 = m2 = l1 = l2 = 1 (the model's own equations)
        q1, q2, w1, w2 = y[0], y[1], y[2], y[3]
        c, s = jnp.cos(q2), jnp.sin(q2)
        m11, m12, m22 = 3.0 + 2.0 * c, 1.0 + c, 1.0
        r1 = -2.0 * g * jnp.sin(q1) - g * jnp.sin(q1 + q2) + s * (2.0 * w1 * w2 + w2 * w2)
        r2 = -g * jnp.sin(q1 + q2) - s * w1 * w1
        det = m11 * m22 - m12 * m12
        return jnp.stack([w1, w2, (m22 * r1 - m12 * r2) / det, (m11 * r2 - m12 * r1) / det])

    seconds, ys = _time_diffrax(_diffrax_solve(vector_field, t_eval), jnp.asarray(x0),
                                "after compile")
    ratio = seconds / best
    print(f"  outputs differ from diffrax's by at most {np.max(np.abs(ys - batch.x)):.1e}")
    print(f"  ratio diffrax / robodyn: {ratio:.1f}x  (goal >= 3x)")
    return {"double_diffrax_ratio": ratio}


_SCIPY_JOB = """
import time
start = time.perf_counter()
import numpy as np
from scipy.integrate import solve_ivp
g, l = 9.81, 1.0
run = solve_ivp(lambda t, x: [x[1], -g / l * np.sin(x[0])], (0.0, 10.0), [1.0, 0.0], method="RK45", rtol=1e-6,
                atol=1e-9)
np.savetxt("x.csv", np.column_stack([run.t, run.y.T]), delimiter=",", header="t,theta,theta_dot")
print(time.perf_counter() - start)
"""
_CASADI_JOB = """
import time
start = time.perf_counter()
import casadi
import numpy as np
x = casadi.SX.sym("x", 2)
ode = {"x": x, "ode": casadi.vertcat(x[1], -9.81 * casadi.sin(x[0]))}
grid = np.linspace(0.0, 10.0, 101)
F = casadi.integrator("F", "cvodes", ode, 0.0, grid[1:], {"reltol": 1e-6, "abstol": 1e-9})
xs = np.asarray(F(x0=[1.0, 0.0])["xf"]).T
np.savetxt("x.csv", np.column_stack([grid[1:], xs]), delimiter=",", header="t,theta,theta_dot")
print(time.perf_counter() - start)
"""
# A model file never seen before: the tag in its name makes it new (its generated code names it), while its
# dynamics stay the same (a damping that varied with the tag made some probes stiff: thousands of steps).
_NEW_MODEL = """name: startup_probe_{tag}
kind: first_order
states: [theta, omega]
parameters: {{g: 9.81, l: 1.0, c: 0.1}}
dynamics:
  theta: omega
  omega: -g/l*sin(theta) - c*omega
"""


def _wall(command: list[str], env: dict[str, str], cwd: str) -> float:
    """Wall time of ``command`` in a new process (seconds); it must succeed."""
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    return seconds


def _new_models(cli: list[str], env: dict[str, str], work: str, repeat: int, stem: str, *,
                new_equations: bool) -> float:
    """Best wall time of ``repeat`` runs, each of a model file never seen before (:data:`_NEW_MODEL` under a new
    name; with ``new_equations``, a term that differs per file as well, so its functions are compiled)."""
    seconds = []
    for k in range(repeat):
        path = os.path.join(work, f"{stem}{k}.yaml")
        tag = int(time.time_ns() % 10**6) + k
        text = _NEW_MODEL.format(tag=tag)
        if new_equations:
            text = text.replace("- c*omega", f"- c*omega - {tag}e-12*omega**3")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        seconds.append(_wall([*cli, "simulate", path, "--t-final", "10", "--x0", "theta=1", "--out", "y.csv"], env,
                             work))
    return min(seconds)


def bench_startup(repeat: int) -> dict[str, float]:
    """Start-up: ``robodyn simulate pendulum --t-final 10 --out x.csv`` in a new process on a fresh cache, on the
    warm cache, and a model file never seen before on the warm machine (the same equations under a new name, and new
    equations, whose functions are compiled); the same with ``ROBODYN_NATIVE=0``
    (numba runs the kernels and compiles the model, as before the exported machine code); the same job as a
    scipy and a CasADi script. Goals (issue 16): warm <= 0.5 s; a new model <= 1.5 s once the kernels exist; (issue
    25) warm <= the CasADi script (the quick path, robodyn.cli.quick; the full path's row beside it), a new model
    <= 2x it."""
    cli = [sys.executable, "-c", "import sys; from robodyn.cli import main; sys.exit(main(sys.argv[1:]))"]
    job = ["simulate", "pendulum", "--t-final", "10", "--out", "x.csv"]
    rows: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as work:
        env = {**os.environ, "ROBODYN_CACHE_DIR": cache, "ROBODYN_QUIET": "1"}
        rows["cold cache (kernels compiled)"] = _wall(cli + job, env, work)
        rows["warm cache"] = min(_wall(cli + job, env, work) for _ in range(repeat))  # the quick path (cli/quick.py)
        full = {**env, "ROBODYN_QUICK": "0"}  # the same run through argparse, numpy and simulate()
        rows["warm cache, full path"] = min(_wall(cli + job, full, work) for _ in range(repeat))
        mcjit = {**env, "ROBODYN_LIBRARIES": "0"}  # the cached objects loaded into llvmlite's MCJIT, as before
        rows["warm cache, objects through MCJIT"] = min(_wall(cli + job, mcjit, work) for _ in range(repeat))
        rows["a new model, warm machine"] = _new_models(cli, env, work, repeat, "probe", new_equations=False)
        # new equations too: the model's own functions are compiled (a term that differs per probe)
        rows["a new model, new equations"] = _new_models(cli, env, work, repeat, "fresh", new_equations=True)
        numba_env = {**env, "ROBODYN_NATIVE": "0"}  # the kernels and models through numba, as before issue 16
        _wall(cli + job, numba_env, work)  # numba's own cache of the kernel module, once
        rows["warm cache, numba kernels"] = min(_wall(cli + job, numba_env, work) for _ in range(repeat))
        rows["a new model, numba kernels"] = _new_models(cli, numba_env, work, repeat, "probe_numba",
                                                         new_equations=False)
        rows["scipy script (RK45)"] = min(_wall([sys.executable, "-c", _SCIPY_JOB], env, work) for _ in range(repeat))
        try:
            import casadi
        except ImportError:
            print("  (casadi not installed: pip install -e .[bench] for the CasADi row)")
        else:
            rows["CasADi script (CVODES)"] = min(_wall([sys.executable, "-c", _CASADI_JOB], env, work)
                                                 for _ in range(repeat))
    goals = {"warm cache": 0.5, "a new model, warm machine": 1.5}
    print(f"start-up: `robodyn {' '.join(job)}` in a new process (wall time, best of {repeat})")
    for name, seconds in rows.items():
        goal = goals.get(name)
        verdict = "" if goal is None else f"  goal <= {goal} s: {'met' if seconds <= goal else 'NOT met'}"
        print(f"  {name:<32} {seconds:6.3f} s{verdict}")
    casadi = rows.get("CasADi script (CVODES)")
    if casadi:  # issue 25: warm <= the CasADi script, a new model <= 2x it
        for name, limit in (("warm cache", 1.0), ("warm cache, full path", None), ("a new model, warm machine", 2.0),
                            ("a new model, new equations", 2.0)):
            ratio = rows[name] / casadi
            verdict = "" if limit is None else f"  goal <= {limit:g}: {'met' if ratio <= limit else 'NOT met'}"
            print(f"  {name} / CasADi script: {ratio:.2f}{verdict}")
    return rows


def bench_kernel_calls() -> dict[str, float]:
    """Per call and per step: the adaptive kernels' exported machine code (what ``simulate`` runs) against numba's
    kernel module, the same model functions, side by side. Goal (issue 16): per-step speed not worse."""
    import dataclasses

    from robodyn.integrate.events import resolve_events
    from robodyn.integrate.kernels.module import kernel_module as numba_kernels
    from robodyn.integrate.kernels.run import kernel_module, run_adaptive, run_batch
    from robodyn.signals.inputs import resolve_inputs

    print("kernel calls: exported machine code (llvmlite, ctypes) vs numba's dispatcher, same model functions")
    ratios = {}
    for name, t1, rtol in (("joint", 5.0, 1e-8), ("pendulum", 10.0, 1e-8), ("pendulum", 200.0, 1e-10)):
        model = robodyn.load(name)
        native = kernel_module(model, resolve_inputs(model.inputs, 1.0), resolve_events(model, None))
        numba = dataclasses.replace(native, module=numba_kernels())
        x0 = np.zeros(model.n_states)
        x0[0] = 1.0
        args = ("dopri5", (0.0, t1), x0, model.parameter_vector(), np.empty(0), np.empty(0), rtol,
                np.full(model.n_states, rtol * 1e-2), 10**7)
        steps = run_adaptive(native, *args).steps
        run_adaptive(numba, *args)
        repeat = max(3, 2000 // steps)
        ours, theirs = (best_of(lambda setup=setup, args=args: run_adaptive(setup, *args), 5, repeat)
                        for setup in (native, numba))
        label = f"{name} to t = {t1:g}, {steps} steps"
        ratios[label] = theirs / ours
        print(f"  {label:<34} exported {ours * 1e6:9.1f} us  numba {theirs * 1e6:9.1f} us  "
              f"({(ours - theirs) / steps * 1e9:+.0f} ns per step)  numba / exported {theirs / ours:.2f}x")
    model = robodyn.load("pendulum")
    native = kernel_module(model, resolve_inputs(model.inputs, None), resolve_events(model, None))
    numba = dataclasses.replace(native, module=numba_kernels())
    x0 = np.column_stack([np.random.default_rng(1).uniform(-3, 3, 2000), np.zeros(2000)])
    p = np.tile(model.parameter_vector(), (2000, 1))
    args = ("dopri5", (0.0, 10.0), x0, p, np.empty(0), np.linspace(0, 10, 101), 1e-8, np.full(2, 1e-10), 10**6,
            None)
    fused = os.environ.get("ROBODYN_FUSED")
    os.environ["ROBODYN_FUSED"] = "0"  # the shared kernels on both sides (a fused batch runs neither)
    try:
        run_batch(native, *args)
        run_batch(numba, *args)
        ours, theirs = (best_of(lambda setup=setup: run_batch(setup, *args), 3, 1) for setup in (native, numba))
    finally:
        if fused is None:
            os.environ.pop("ROBODYN_FUSED")
        else:
            os.environ["ROBODYN_FUSED"] = fused
    ratios["2,000 pendulums (threads)"] = theirs / ours
    print(f"  {'2,000 pendulums (threads)':<34} exported {ours * 1e3:9.1f} ms  numba {theirs * 1e3:9.1f} ms  "
          f"numba / exported {theirs / ours:.2f}x")
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 pendulums instead of 10,000")
    parser.add_argument("--startup", action="store_true", help="only the start-up rows (best of 7)")
    args = parser.parse_args()
    print(f"robodyn {robodyn.__version__}, {platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}")
    if args.startup:
        bench_startup(7)
        return
    bench_joint()
    bench_pendulums(1000 if args.quick else 10_000, 200)
    bench_double_pendulums(1000 if args.quick else 10_000)
    bench_kernel_calls()
    bench_startup(2 if args.quick else 3)


if __name__ == "__main__":
    main()
