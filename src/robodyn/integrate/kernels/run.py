"""Running the kernels (explicit Runge–Kutta, Radau IIA, RODAS4): compiled for symbolic models, interpreted otherwise.

:func:`kernel_module` picks the module (the shared numba kernel module of :mod:`robodyn.integrate.kernels.module`
with the addresses of the model's compiled functions, or the templates executed as plain Python with the model's
own callables), and :func:`run_fixed`, :func:`run_adaptive`, :func:`run_batch` call its kernels and turn failure
statuses into errors that say what to try (the codes and their messages are the table in
:mod:`robodyn.integrate.status`). Methods are given by name, a fixed, adaptive or implicit method of
:data:`robodyn.integrate.methods.registry.REGISTRY`.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError, NumericalError
from robodyn.base.threads import usable_cpus
from robodyn.integrate.assemble import RunResult
from robodyn.integrate.events import ResolvedEvents
from robodyn.integrate.kernels.setup import KernelSetup
from robodyn.integrate.methods.implicit import IMPLICIT_METHOD, tables
from robodyn.integrate.methods.registry import REGISTRY, TABLEAUS
from robodyn.integrate.status import NON_FINITE, failure_message
from robodyn.results.trajectory import EventRecord
from robodyn.signals import Inputs

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["KernelSetup", "adaptive_batch", "add_setup", "fixed_batch", "kernel_module", "run_adaptive", "run_batch",
           "run_fixed", "run_implicit_fixed"]

MIN_RTOL: Final = 100 * np.finfo(float).eps  # As scipy: smaller relative tolerances are raised to this.
BATCH_EVENTS: Final = 64  # Events kept per trajectory of a batch.
_warm: set[tuple[str, str]] = set()  # (module, kernel) pairs already compiled in this process
_warm_fused: set[str] = set()  # the fused kernels (robodyn.integrate.kernels.fused) made in this process


@functools.cache
def _method_arrays(method: str) -> tuple[Any, Any, Any]:
    """The adaptive kernels' ``method``, ``dop853`` and ``implicit`` arguments, built once per method (the kernels
    only read them)."""
    if REGISTRY[method].family == "implicit":
        return IMPLICIT_METHOD, None, tables(method)
    return (*TABLEAUS[method].kernel_method(), None)


def _tolerances(method: str, rtol: float, atol: np.ndarray) -> tuple[float, np.ndarray]:
    """The tolerances the kernel gets: rtol at least MIN_RTOL."""
    return max(rtol, MIN_RTOL), atol


def kernel_module(model: ModelContract, inputs: Inputs, events: ResolvedEvents, backend: str = "auto",
                  jacobian: bool = False) -> KernelSetup:
    """The kernels for ``model``: compiled when everything is symbolic (unless ``backend="interpreted"``).

    ``jacobian``: the implicit methods will run, so the model's exact Jacobian is compiled (or wrapped) too;
    without one they difference f.
    """
    compilable = model.compilable and inputs.is_compilable and events.is_compilable
    if backend == "compiled" and not compilable:
        raise InputError(
            "backend='compiled' needs a symbolic model, compilable inputs and events given as expressions: "
            "use backend='auto', which runs Python callables interpreted"
        )
    n = model.n_states
    if compilable and backend != "interpreted":
        assert events.expressions is not None
        from robodyn.integrate.kernels.native import native_kernels
        from robodyn.model.compiled import model_addresses

        start = time.perf_counter()
        fns, cached = model_addresses(model, events.expressions, jacobian=jacobian)
        return KernelSetup(native_kernels(), "compiled", fns, inputs.compiled(n), events, model,
                           time.perf_counter() - start, cached)
    from robodyn.integrate.kernels.module import interpreted_module

    f_raw = model.f_raw
    python_event_fn = events.python_event_fn()

    def rhs(fns: Any, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
        out[:] = f_raw(t, x, u, p)  # a wrong shape is a ShapeError, not a broadcast

    def event_fn(fns: Any, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
        python_event_fn(t, x, u, p, out)

    def jac(fns: Any, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
        dfdx, dfdu = model.jacobians_raw(t, x, u, p)
        out[:] = np.concatenate([np.ravel(dfdx), np.ravel(dfdu)])

    # the exact Jacobian when the model has one and du/dx is known (compiled inputs: -K of state feedback)
    exact = jacobian and model.jacobian_method is not None and inputs.is_compilable
    module = interpreted_module(rhs, event_fn, inputs.python_evaluator(), jac if exact else None)
    data = inputs.compiled(n) if inputs.is_compilable else (np.zeros(0),)
    fns = np.array([0, 0, 1 if exact else 0, 0], dtype=np.int64)
    return KernelSetup(module, "interpreted", fns, data, events, model, 0.0)


def add_setup(run: RunResult, setup: KernelSetup, seconds: float) -> None:
    """Count the kernel set-up made for this call (the model's functions compiled or loaded) into ``run``."""
    run.compile_seconds += seconds
    if seconds > 0.0:
        run.from_cache = run.from_cache and setup.cached


def _timed_first_call(setup: KernelSetup, name: str, call: Callable[[], Any]) -> tuple[Any, float, bool]:
    """Run ``call``; the first call of a compiled kernel (``name``: kernel and method) in this process is timed
    as compilation.

    Returns the call's result, the seconds timed and whether numba loaded the machine code from its on-disk
    cache without compiling anything (then the seconds are the load time).
    """
    key = (setup.module.__name__, name)
    if setup.path != "compiled" or key in _warm:
        return call(), 0.0, False
    hits, misses = _cache_counts(setup.module)
    start = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - start
    _warm.add(key)
    hits_after, misses_after = _cache_counts(setup.module)
    return result, seconds, misses_after == misses and hits_after > hits


def _cache_counts(module: ModuleType) -> tuple[int, int]:
    """numba's cache hits and misses (compilations) so far, summed over the module's jitted functions."""
    own = getattr(module, "cache_counts", None)
    if own is not None:  # robodyn.integrate.kernels.native: its entries, and numba's kernel module if it runs too
        hits, misses = own(_cache_counts)
        return int(hits), int(misses)
    hits = misses = 0
    for value in list(vars(module).values()):
        stats = getattr(value, "stats", None)
        if stats is not None and hasattr(stats, "cache_hits") and hasattr(stats, "cache_misses"):
            hits += sum(stats.cache_hits.values())
            misses += sum(stats.cache_misses.values())
    return hits, misses


def _failure(model: ModelContract, status: int, t_fail: float, index: int, max_steps: int, method: str,
             events: Sequence[str] = ()) -> NumericalError:
    """The error of the failure ``status`` at ``t_fail``; ``index`` is the state concerned, if in range, or
    ``n_states + k`` for the event ``k`` whose function was not finite."""
    if status == NON_FINITE and 0 <= index - model.n_states < len(events):
        name = events[index - model.n_states]
        return NumericalError(f"{method}: the event function {name!r} is not finite at t = {t_fail:.10g}: an event "
                              "must be a finite number wherever the solution goes; fix the event expression there")
    state = model.states[index] if 0 <= index < model.n_states else None
    return NumericalError(failure_message(status, method=method, t=t_fail, state=state, max_steps=max_steps,
                                          second_order=model.order == 2,
                                          implicit=REGISTRY[method].family == "implicit"))


def step_sizes(grid: np.ndarray, dt: float | None) -> np.ndarray:
    """Step sizes ``(T - 1,)``: exactly ``dt`` for every full step, the remainder for a shortened last one."""
    sizes = np.diff(grid)
    if dt is not None and sizes.size:
        full = np.abs(sizes - dt) <= 1e-9 * dt
        sizes[full] = dt
    return sizes


def run_fixed(setup: KernelSetup, method: str, grid: np.ndarray, x0: np.ndarray, p: np.ndarray,
              dt: float | None = None) -> RunResult:
    """Fixed steps on ``grid`` (T,) from ``x0`` (n,); inputs held over each step (sampled at its start).

    Full steps are exactly ``dt`` when it is given (see :func:`step_sizes`).
    """
    tableau = TABLEAUS[method]
    model = setup.model
    xs = np.empty((grid.size, model.n_states))
    us = np.empty((grid.size, model.n_inputs))

    def call() -> int:
        return int(setup.module.fixed_run(setup.fns, tableau.A, tableau.b, tableau.c, grid, step_sizes(grid, dt), x0,
                                          p, setup.inp, xs, us))

    nfev, seconds, from_cache = _timed_first_call(setup, "fixed_run", call)
    bad = np.flatnonzero(~np.all(np.isfinite(xs), axis=1))
    if bad.size:
        row = int(bad[0])
        column = int(np.flatnonzero(~np.isfinite(xs[row]))[0])
        raise _failure(model, NON_FINITE, float(grid[row]), column, 0, method)
    return RunResult(grid.copy(), xs, nfev=nfev, steps=grid.size - 1, u=us, compile_seconds=seconds,
                     from_cache=from_cache)


def run_adaptive(
    setup: KernelSetup, method: str, t_span: tuple[float, float], x0: np.ndarray, p: np.ndarray,
    stops: np.ndarray, t_eval: np.ndarray, rtol: float, atol: np.ndarray, max_steps: int, h0: float = 0.0,
) -> RunResult:
    """One adaptive run (dopri5/dop853, radau/rosenbrock) with stop points, optional t_eval and events; ``h0`` the
    first step (0: chosen by the kernel)."""
    model, events = setup.model, setup.events
    args = (setup.fns, *_method_arrays(method), float(t_span[0]), float(t_span[1]), x0, p, setup.inp, model.n_inputs,
            stops, t_eval, *_tolerances(method, rtol, atol), float(h0), math.inf, int(max_steps), events.direction,
            events.terminal)
    result, seconds, from_cache = _timed_first_call(setup, f"adaptive_run {_variant(method)}",
                                                    lambda: setup.module.adaptive_run(*args))
    status, t_fail, i_fail, stats, t, x, u, ev_t, ev_x, ev_idx = result
    if status < 0:
        raise _failure(model, int(status), float(t_fail), int(i_fail), max_steps, method, events.names)
    records = [EventRecord(events.names[int(k)], float(te), np.array(xe), bool(events.terminal[int(k)]))
               for te, xe, k in zip(ev_t, ev_x, ev_idx)] if ev_t.size else []
    nfev, steps, rejected, njev, nlu = stats.tolist()
    # t, x, u are the kernel's fresh buffers (or views of them, which the Trajectory copies): no copies here.
    return RunResult(t, x, nfev=nfev, steps=steps, rejected=rejected, events=records, u=u, compile_seconds=seconds,
                     from_cache=from_cache, njev=njev, nlu=nlu)


def run_implicit_fixed(setup: KernelSetup, method: str, t_span: tuple[float, float], h: float, x0: np.ndarray,
                       p: np.ndarray) -> RunResult:
    """``radau`` or ``rosenbrock`` at the fixed step ``h`` (the last step shortened to end at t1), every step
    output: the values at the steps' ends, for observed orders (``robodyn verify``). Newton is iterated to
    convergence at every step (a fresh Jacobian each time); tolerances 1e-13 set its stopping test."""
    model, n = setup.model, setup.model.n_states
    result, seconds, from_cache = _timed_first_call(setup, f"adaptive_run {_variant(method)}", lambda: (
        setup.module.adaptive_run(setup.fns, IMPLICIT_METHOD, None, tables(method, h), float(t_span[0]),
                                  float(t_span[1]), x0, p, setup.inp, model.n_inputs, np.empty(0), np.empty(0), 1e-13,
                                  np.full(n, 1e-13), 0.0, math.inf, 10**8, np.zeros(0, np.int64),
                                  np.zeros(0, np.int64))))
    status, t_fail, i_fail, stats, t, x, u = result[:7]
    if status < 0:
        raise _failure(model, int(status), float(t_fail), int(i_fail), 10**8, method)
    nfev, steps, rejected, njev, nlu = stats.tolist()
    return RunResult(t, x, nfev=nfev, steps=steps, rejected=rejected, u=u, compile_seconds=seconds,
                     from_cache=from_cache, njev=njev, nlu=nlu)


_VARIANTS: Final = {"dop853": "dop853", "radau": "implicit", "rosenbrock": "implicit"}


def _variant(method: str) -> str:
    """Which compiled specialization of the adaptive kernel ``method`` runs (numba compiles one per kind)."""
    return _VARIANTS.get(method, "rk")


def run_batch(
    setup: KernelSetup, method: str, t_span: tuple[float, float], x0: np.ndarray, p: np.ndarray,
    stops: np.ndarray, t_eval: np.ndarray, rtol: float, atol: np.ndarray, max_steps: int, dt: float | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, float], list[list[EventRecord]]]:
    """N runs in parallel (threads running compiled chunks that release the GIL) on a common grid.

    Returns t (T,), xs (N, T, n), us (N, T, m), the totals (nfev, steps, rejected, compile_seconds, from_cache) and
    each trajectory's events (at most :data:`BATCH_EVENTS` per trajectory; an empty list, not N empty ones,
    when there are no events to locate).
    """
    model, events = setup.model, setup.events
    N, n, m = x0.shape[0], model.n_states, model.n_inputs
    if REGISTRY[method].family == "fixed":
        tableau = TABLEAUS[method]
        assert dt is not None
        grid = t_eval
        xs, us, nfev = np.empty((N, grid.size, n)), np.empty((N, grid.size, m)), np.zeros(N, np.int64)
        _, seconds, from_cache = _timed_first_call(setup, "fixed_batch", lambda: fixed_batch(
            setup.module, setup.fns, tableau.A, tableau.b, tableau.c, grid, step_sizes(grid, dt), x0, p, setup.inp,
            xs, us, nfev, _workers(setup)))
        bad = ~np.isfinite(xs)  # (N, T, n), checked at once; the first bad trajectory, time and state is reported
        if bad.any():
            i, k, column = (int(v[0]) for v in np.nonzero(bad))
            raise _trajectory(i, _failure(model, NON_FINITE, float(grid[k]), column, 0, method))
        return grid, xs, us, {"nfev": int(nfev.sum()), "steps": N * (grid.size - 1), "rejected": 0,
                              "compile_seconds": seconds, "from_cache": from_cache}, [[] for _ in range(N)]
    T, E = t_eval.size, BATCH_EVENTS if len(events) else 0
    xs, us = np.empty((N, T, n)), np.empty((N, T, m))
    status, n_out, i_fail, n_ev = (np.zeros(N, np.int64) for _ in range(4))
    t_fail, stats = np.zeros(N), np.zeros((N, 5), np.int64)
    ev_t, ev_x, ev_idx = np.zeros((N, E)), np.zeros((N, E, n)), np.zeros((N, E), np.int64)
    start = time.perf_counter()
    from robodyn.integrate.kernels.fused import fused_batch  # batches only: LLVM IR of a fused kernel

    fused = fused_batch(setup, method, t_span, stops, p.shape[1]) if T else None  # the fused kernel needs t_eval
    if fused is not None:  # the model's own kernel (robodyn.integrate.kernels.fused): the same runs, faster
        seconds, from_cache = (0.0, False) if fused.symbol in _warm_fused else (time.perf_counter() - start,
                                                                                fused.cached)
        _warm_fused.add(fused.symbol)
        t0, t1 = float(t_span[0]), float(t_span[1])
        from robodyn.integrate.kernels.fused_ir import N_COUNTS

        counts = np.empty((N, N_COUNTS), np.int64)
        _in_threads(fused.chunk, N, _workers(setup), (
            np.ascontiguousarray(x0, dtype=float), np.ascontiguousarray(p, dtype=float), t_eval,
            *_tolerances(method, rtol, atol), t0, t1, int(max_steps), xs, counts, status, t_fail, i_fail))
        us[:] = fused.inputs_at(t_eval, t0, t1)
        _finish_batch(counts, xs, us, status, n_out, stats, n_ev)
    else:
        _, seconds, from_cache = _timed_first_call(setup, f"adaptive_batch {_variant(method)}", lambda: adaptive_batch(
            setup.module, setup.fns, *_method_arrays(method), float(t_span[0]), float(t_span[1]), x0, p, setup.inp,
            stops, t_eval, *_tolerances(method, rtol, atol), 0.0, math.inf, int(max_steps), events.direction,
            events.terminal, xs, us, status, n_out, stats, t_fail, i_fail, ev_t, ev_x, ev_idx, n_ev,
            _workers(setup)))
    failed = np.flatnonzero(status < 0)
    if failed.size:
        i = int(failed[0])
        raise _trajectory(i, _failure(model, int(status[i]), float(t_fail[i]), int(i_fail[i]), max_steps, method,
                                      events.names))
    crowded = np.flatnonzero(n_ev > E)
    if crowded.size:
        raise InputError(f"trajectory {int(crowded[0])} of the batch has {int(n_ev[crowded[0]])} events, more than "
                         f"the {E} a batch keeps per trajectory: simulate it on its own to get them all")
    records: list[list[EventRecord]] = [[] for _ in range(N)] if E else []  # N lists are N objects for the GC
    for i in np.flatnonzero(n_ev).tolist():
        records[i] = [EventRecord(events.names[int(ev_idx[i, k])], float(ev_t[i, k]), ev_x[i, k].copy(),
                                  bool(events.terminal[int(ev_idx[i, k])])) for k in range(int(n_ev[i]))]
    totals = {"nfev": int(stats[:, 0].sum()), "steps": int(stats[:, 1].sum()), "rejected": int(stats[:, 2].sum()),
              "njev": int(stats[:, 3].sum()), "nlu": int(stats[:, 4].sum()), "compile_seconds": seconds,
              "from_cache": from_cache}
    return t_eval, xs, us, totals, records


def fixed_batch(module: ModuleType, fns: np.ndarray, A: np.ndarray, b: np.ndarray, c: np.ndarray,
                grid: np.ndarray, steps: np.ndarray, x0: np.ndarray, p: np.ndarray, inp: tuple[Any, ...],
                xs: np.ndarray, us: np.ndarray, nfev: np.ndarray, workers: int) -> None:
    """The kernel module's ``fixed_run`` for N trajectories in ``workers`` threads: x0 (N, n), p (N, n_p);
    writes xs (N, T, n), us (N, T, m) and nfev (N,) int64."""
    _in_threads(module.fixed_chunk, x0.shape[0], workers, (fns, A, b, c, grid, steps, x0, p, inp, xs, us, nfev))


def adaptive_batch(module: ModuleType, fns: np.ndarray, method: tuple[Any, ...], dop853: np.ndarray | None,
                   implicit: tuple[np.ndarray, ...] | None, t0: float, t1: float,
                   x0: np.ndarray, p: np.ndarray, inp: tuple[Any, ...], stops: np.ndarray, t_eval: np.ndarray,
                   rtol: float, atol: np.ndarray, h0: float, h_max: float, max_steps: int, ev_direction: np.ndarray,
                   ev_terminal: np.ndarray, xs: np.ndarray, us: np.ndarray, status: np.ndarray, n_out: np.ndarray,
                   stats: np.ndarray, t_fail: np.ndarray, i_fail: np.ndarray, ev_t: np.ndarray, ev_x: np.ndarray,
                   ev_idx: np.ndarray, n_ev: np.ndarray, workers: int) -> None:
    """The kernel module's ``adaptive_run`` for N trajectories in ``workers`` threads, each with its own steps,
    on a common non-empty t_eval.

    Arguments as in ``adaptive_run`` with x0 (N, n) and p (N, n_p). Writes xs (N, T, n) and us (N, T, m)
    (rows past ``n_out[i]``, after a failure or terminal event, are NaN); status, n_out, i_fail, n_ev (N,)
    int64; t_fail (N,); stats (N, 5) int64 (nfev, accepted, rejected, Jacobians, LU factorizations); ev_t (N, E),
    ev_x (N, E, n), ev_idx (N, E) int64 hold the
    first E events of each trajectory and n_ev counts all of them (n_ev > E: some were not stored).
    """
    N, T = x0.shape[0], t_eval.size
    counts = np.empty((N, module.N_COUNTS), np.int64)
    def work() -> tuple[np.ndarray, ...]:
        return module.work_arrays(x0.shape[1], us.shape[2], method, dop853, implicit, ev_direction.size)

    _in_threads(module._adaptive_core, N, workers, (
        fns, method, dop853, implicit, t0, t1, x0, p, inp, stops, t_eval, rtol, atol, h0, h_max, max_steps,
        ev_direction, ev_terminal, np.empty((N, T)), xs, us, ev_t, ev_x, ev_idx, counts, status, t_fail, i_fail),
        work=work)
    _finish_batch(counts, xs, us, status, n_out, stats, n_ev)


def _finish_batch(counts: np.ndarray, xs: np.ndarray, us: np.ndarray, status: np.ndarray, n_out: np.ndarray,
                  stats: np.ndarray, n_ev: np.ndarray) -> None:
    """A batch's counts (N, 7) into n_out, n_ev and stats; NaN in the rows after a failure or a terminal event
    (the mask is made only then: most batches have none)."""
    n_out[:], n_ev[:], stats[:] = counts[:, 0], counts[:, 1], counts[:, 2:]
    if np.any(n_out < xs.shape[1]):
        late = np.arange(xs.shape[1]) >= n_out[:, None]
        xs[late] = np.nan
        us[late] = np.nan


def _in_threads(chunk: Callable[..., Any], count: int, workers: int, args: tuple[Any, ...],
                work: Callable[[], Any] | None = None) -> None:
    """``chunk(first, stop, *args)`` over ``range(count)`` in contiguous pieces, run by ``workers`` threads;
    ``work``: each piece gets work arrays of its own, ``chunk(first, stop, work(), *args)``.

    The compiled chunks release the GIL (``nogil``), so threads run them in parallel. This replaced a
    ``prange`` loop (numba's ``parallel=True``), which ran no faster and took ~3 s longer to compile.
    Several pieces per thread even out trajectories of different cost.
    """
    def piece(first: int, stop: int) -> Any:
        return chunk(first, stop, *args) if work is None else chunk(first, stop, work(), *args)

    if workers <= 1 or count <= 1:
        piece(0, count)
        return
    from concurrent.futures import ThreadPoolExecutor, as_completed  # here: with logging, ~5 ms of start-up

    from robodyn.base.progress import progress

    pieces = min(count, 8 * workers)
    edges = [count * k // pieces for k in range(pieces + 1)]
    with ThreadPoolExecutor(min(workers, pieces)) as pool, progress(count if count >= 1000 else 0,
                                                                     f"{count} trajectories") as advance:
        futures = {pool.submit(piece, lo, hi): hi - lo for lo, hi in itertools.pairwise(edges)}
        for done in as_completed(futures):
            done.result()
            advance(futures[done])


def _workers(setup: KernelSetup) -> int:
    """Threads for a batch: the CPUs this process may use when the kernels are compiled (they release the
    GIL; robodyn.base.threads.usable_cpus); one on the interpreted path (Python holds it)."""
    return usable_cpus() if setup.path == "compiled" else 1


def _trajectory(index: int, error: NumericalError) -> NumericalError:
    return NumericalError(f"trajectory {index} of the batch: {error}")
