"""Corners of a model stopped at and restarted from: a diagram's saturations (robodyn.diagrams.switching).

``simulate`` adds a model's ``switching_events()`` to a single adaptive or implicit run as terminal events;
:func:`across_corners` continues the run past each one it stopped at, from the crossing found again on the near
side, so that no step straddles a corner (docs/diagrams.md, "Corners").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.diagrams.switching import is_switch
from robodyn.integrate.assemble import RunResult
from robodyn.integrate.events import ResolvedEvents
from robodyn.integrate.kernels.run import run_adaptive

if TYPE_CHECKING:
    from robodyn.integrate.job import SimulationJob, SimulationPlan

__all__ = ["MAX_CORNERS", "across_corners", "without_corners"]

MAX_CORNERS: Final = 10_000  # Corner crossings a run stops and restarts at; past them it steps across (chattering).


def across_corners(job: SimulationJob, setup: Any, run: RunResult, grid: np.ndarray | None) -> RunResult:
    """``run`` continued past each corner it stopped at (a terminal event of ``switching_events``), so that no step
    straddles a corner.

    The step that crossed a corner evaluated f on both sides of it, so its dense output (where the kernel located
    the crossing) is not the solution there. The crossing is therefore found again from the last accepted point
    before it, on tau -> g(x(tau)) with each x(tau) integrated from that point without stopping at corners: the
    secant through points on the near side (where g is smooth), probed just before and just after, to 1e-12
    relative in time; the integration restarts just past the crossing. The corners are not
    listed among the run's events; after MAX_CORNERS crossings (chattering at a limit) the rest is stepped across.
    """
    t1, p = job.t_span[1], job.parameters[0]
    events = setup.events
    plain = without_corners(job).kernels(job.backend, job.method.family == "implicit")[0]
    times, states, inputs = [], [], []
    totals = {"nfev": 0, "steps": 0, "rejected": 0, "njev": 0, "nlu": 0, "compile_seconds": 0.0}
    found: list[Any] = []
    crossings = 0

    def take(piece: RunResult, upto: float | None) -> None:
        """Keep the piece's rows (those before ``upto``), its counts and its events."""
        for key in totals:
            totals[key] += getattr(piece, key)
        keep = slice(None) if upto is None else piece.t <= upto
        times.append(piece.t[keep])
        states.append(piece.x[keep])
        inputs.append(job.plan.inputs.evaluate_many(piece.t[keep], piece.x[keep]) if piece.u is None
                      else piece.u[keep])
        found.extend(e for e in piece.events if not is_switch(e.name))

    def integrate(kernel: Any, t_a: float, x_a: np.ndarray, t_b: float, last: bool) -> RunResult:
        wanted = np.empty(0) if grid is None else grid[(grid > t_a) & (grid <= t_b)]
        if grid is not None and not last and (wanted.size == 0 or wanted[-1] != t_b):
            wanted = np.append(wanted, t_b)  # the end point, to continue from
        return run_adaptive(kernel, job.method.name, (t_a, t_b), x_a, p, job.plan.breakpoints(t_a, t_b), wanted,
                            job.rtol, job.atol, job.max_steps)

    start_t, start_x = job.t_span[0], job.states[0]
    while run.events and run.events[-1].terminal and is_switch(run.events[-1].name) and run.events[-1].t < t1:
        record = run.events[-1]
        k = events.names.index(record.name)
        crossings += 1
        before = run.t < record.t
        t_a, x_a = (float(run.t[before][-1]), np.array(run.x[before][-1])) if before.any() else (start_t, start_x)
        take(run, t_a)  # the rows up to the crossing step (not its distorted ones)

        def g(piece: RunResult, k: int = k) -> float:
            t_end, x_end = float(piece.t[-1]), np.asarray(piece.x[-1], dtype=float)
            return float(events.functions[k](t_end, x_end, job.plan.inputs.evaluate(t_end, x_end), p))

        side = np.sign(float(events.functions[k](t_a, x_a, job.plan.inputs.evaluate(t_a, x_a), p)))
        lo, g_lo = t_a, float(events.functions[k](t_a, x_a, job.plan.inputs.evaluate(t_a, x_a), p))
        hi = min(t1, max(record.t, t_a + 1e-12 * max(1.0, abs(t_a))))
        piece = integrate(plain, t_a, x_a, hi, False)
        g_hi = g(piece)
        while np.sign(g_hi) == side and side != 0 and hi < t1:  # the corner is later: widen the bracket
            hi = min(t1, hi + 2.0 * (hi - lo))
            piece = integrate(plain, t_a, x_a, hi, False)
            g_hi = g(piece)
        if np.sign(g_hi) == side and side != 0:  # no crossing after all (it was the crossing step's distortion)
            run = integrate(setup, t_a, x_a, t1, True)
            start_t, start_x = t_a, x_a
            continue
        near = [(lo, g_lo)]  # points on the near side, where g(x(tau)) is smooth: their secant finds the root
        for _ in range(40):
            width = 1e-12 * max(1.0, abs(hi))
            if hi - lo <= width:
                break
            (t_p, g_p), (t_q, g_q) = near[-2:] if len(near) > 1 else ((lo, g_lo), (hi, g_hi))
            tau = t_q - g_q * (t_q - t_p) / (g_q - g_p) if g_q != g_p else 0.5 * (lo + hi)
            if not lo < tau < hi:
                tau = 0.5 * (lo + hi)
            for probe in (max(lo + 0.25 * width, tau - 0.5 * width), min(hi - 0.25 * width, tau + 0.5 * width)):
                trial = integrate(plain, t_a, x_a, probe, False)
                g_probe = g(trial)
                if np.sign(g_probe) == side:
                    lo, g_lo = probe, g_probe
                    near.append((probe, g_probe))
                else:
                    hi, g_hi, piece = probe, g_probe, trial
        take(piece, hi)  # the rows up to the crossing, integrated on its near side
        start_t, start_x = float(piece.t[-1]), np.array(piece.x[-1], dtype=float)
        run = integrate(setup if crossings < MAX_CORNERS else plain, start_t, start_x, t1, True)
    take(run, None)
    t, x, u = np.concatenate(times), np.concatenate(states), np.concatenate(inputs)
    if grid is not None:  # the output times, once each (the pieces' end points are kept only when asked for)
        rows = np.flatnonzero(np.isin(t, grid))
        rows = rows[np.concatenate([[True], np.diff(t[rows]) > 0])] if rows.size else rows
    else:  # the steps, a piece's first row (where its predecessor ended) once
        rows = np.flatnonzero(np.concatenate([[True], np.diff(t) > 0]))
    return RunResult(t[rows], x[rows], nfev=int(totals["nfev"]), steps=int(totals["steps"]),
                     rejected=int(totals["rejected"]), events=found, u=u[rows],
                     compile_seconds=totals["compile_seconds"], from_cache=run.from_cache, njev=int(totals["njev"]),
                     nlu=int(totals["nlu"]))


def without_corners(job: SimulationJob) -> SimulationPlan:
    """The job's plan without the corner events (for a model that chatters at one)."""
    from robodyn.integrate.job import SimulationPlan

    events = job.plan.events
    keep = [k for k, name in enumerate(events.names) if not is_switch(name)]
    resolved = ResolvedEvents(tuple(events.names[k] for k in keep), events.direction[keep], events.terminal[keep],
                              None if events.expressions is None else tuple(events.expressions[k] for k in keep),
                              tuple(events.functions[k] for k in keep))
    return SimulationPlan(job.model, job.plan.inputs, resolved)
