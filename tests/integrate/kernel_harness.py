"""Test loader for ``robodyn/integrate/kernels/kernel_template.py``: compiled (numba) or interpreted.

The loader does what the engine's code generator does (docs/dev/simulation.md): compiled, it writes a module
made of a header (``jit``, ``hjit``), the test problems' ``rhs``/``eval_inputs``/``event_fn`` and the
template's source, and imports it; interpreted, it injects identity decorators, ``range`` and the same
functions, not jitted, into the template's namespace before executing it.

One ``rhs`` serves every test problem (``p[0]`` selects it), so one compilation covers the whole test module.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

import robodyn.integrate.kernels
from robodyn.integrate.methods.tableaus import METHODS

TEMPLATE = Path(robodyn.integrate.kernels.__file__).parent / "kernel_template.py"
WORK = TEMPLATE.with_name("work_template.py")  # the work arrays' shapes, executed after the template
FNS = np.zeros(4, dtype=np.int64)  # the kernels pass the model's addresses through; these problems ignore them

# Problem ids (p[0]); the parameters follow in p[1:].
JOINT = 0  # J q'' + b q' + k q = u; p = [JOINT, J, b, k]; input u from eval_inputs
FORCED_DECAY = 1  # x' = -x + sin t
VAN_DER_POL = 2  # x'' = mu (1 - x^2) x' - x; p = [VAN_DER_POL, mu]
LOTKA_VOLTERRA = 3  # x' = a x - b x y, y' = -c y + d x y; p = [LOTKA_VOLTERRA, a, b, c, d]
ARENSTORF = 4  # restricted three-body problem; p = [ARENSTORF, mu]
BALL = 5  # x'' = -g; p = [BALL, g]
SQUARE = 6  # x' = x^2 (blows up at t = 1 / x0)
SQRT = 7  # x' = -1, y' = sqrt(x): NaN once x < 0
SWITCHED = 8  # x' = -a x + u; p = [SWITCHED, a]
POLY = 9  # x' = q t^(q-1), x = t^q; p = [POLY, q]

PROBLEMS = '''
@jit
def rhs(fns, t, x, u, p, out):
    pid = int(p[0])
    if pid == 0:
        out[0] = x[1]
        out[1] = (u[0] - p[2] * x[1] - p[3] * x[0]) / p[1]
    elif pid == 1:
        out[0] = -x[0] + math.sin(t)
    elif pid == 2:
        out[0] = x[1]
        out[1] = p[1] * (1.0 - x[0] * x[0]) * x[1] - x[0]
    elif pid == 3:
        out[0] = p[1] * x[0] - p[2] * x[0] * x[1]
        out[1] = -p[3] * x[1] + p[4] * x[0] * x[1]
    elif pid == 4:
        mu = p[1]
        nu = 1.0 - mu
        d1 = ((x[0] + mu) ** 2 + x[1] ** 2) ** 1.5
        d2 = ((x[0] - nu) ** 2 + x[1] ** 2) ** 1.5
        out[0] = x[2]
        out[1] = x[3]
        out[2] = x[0] + 2.0 * x[3] - nu * (x[0] + mu) / d1 - mu * (x[0] - nu) / d2
        out[3] = x[1] - 2.0 * x[2] - nu * x[1] / d1 - mu * x[1] / d2
    elif pid == 5:
        out[0] = x[1]
        out[1] = -p[1]
    elif pid == 6:
        out[0] = x[0] * x[0]
    elif pid == 7:
        out[0] = -1.0
        out[1] = np.sqrt(x[0])
    elif pid == 8:
        out[0] = -p[1] * x[0] + u[0]
    else:
        out[0] = p[1] * t ** (p[1] - 1.0)


@jit
def eval_inputs(t, t_piece, x, inp, out):
    table = inp[0]  # [u before, u after, switch time]
    out[0] = table[0] if t_piece < table[2] else table[1]


@jit
def event_fn(fns, t, x, u, p, out):
    out[0] = x[0]
    if out.size > 1:
        out[1] = x[1]


@jit
def chart(fns, t, x, xdot, p, out):  # fns[3] == 0: no problem here lies on a manifold, so never called
    for i in range(x.size):
        out[i], out[x.size + i] = x[i], xdot[i]
'''

HEADER = """import math
import numpy as np
import numba

jit = numba.njit(cache=False)
hjit = numba.njit(cache=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)
HAS_EVENTS = True
"""


def load_compiled(directory: Path, name: str = "rk_harness_compiled") -> ModuleType:
    """Write header + problems + template into ``directory/name.py`` and import it."""
    path = directory / f"{name}.py"
    path.write_text(HEADER + PROBLEMS + "\n\n" + TEMPLATE.read_text() + "\n\n" + WORK.read_text())
    return _execute(path, name, {})


def load_interpreted(name: str = "rk_harness_interpreted") -> ModuleType:
    """The template with identity decorators, ``range`` and the plain-Python test problems injected."""

    def identity(fn: Callable[..., Any]) -> Callable[..., Any]:
        return fn

    namespace: dict[str, Any] = {"jit": identity, "math": math, "np": np}
    exec(compile(PROBLEMS, "<test problems>", "exec"), namespace)
    names = {key: namespace[key] for key in ("rhs", "eval_inputs", "event_fn", "chart")}
    from robodyn.codegen.loader import load_module  # executes the template, then the work shapes after it

    return load_module(TEMPLATE, name, {"jit": identity, "hjit": identity, "HAS_EVENTS": True, **names}, also=(WORK,))


def _execute(path: Path, name: str, inject: dict[str, Any]) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(inject)
    spec.loader.exec_module(module)
    return module


def inputs(before: float = 1.0, after: float | None = None, switch: float = math.inf) -> tuple[np.ndarray]:
    """``inp`` for the test ``eval_inputs``: ``before`` while t_piece < switch, then ``after``."""
    return (np.array([before, before if after is None else after, switch]),)


@dataclass(frozen=True, slots=True)
class Run:
    status: int
    t_fail: float
    i_fail: int
    nfev: int
    steps: int
    rejected: int
    t: np.ndarray
    x: np.ndarray
    u: np.ndarray
    ev_t: np.ndarray
    ev_x: np.ndarray
    ev_idx: np.ndarray


def adaptive(module: ModuleType, method: str, params: Sequence[float], t_span: tuple[float, float],
             x0: Sequence[float], *, rtol: float = 1e-8, atol: float = 1e-10, t_eval: Sequence[float] = (),
             stops: Sequence[float] = (), inp: tuple[np.ndarray] | None = None, h0: float = 0.0,
             h_max: float = math.inf, max_steps: int = 100_000, directions: Sequence[int] = (),
             terminal: Sequence[int] = ()) -> Run:
    """Call ``adaptive_run`` with the arguments the engine would pass."""
    x0_array = np.array(x0, dtype=float)
    result = module.adaptive_run(
        FNS, *METHODS[method].kernel_method(), None, float(t_span[0]), float(t_span[1]), x0_array,
        np.array(params, dtype=float), inputs() if inp is None else inp, 1, np.array(stops, dtype=float),
        np.array(t_eval, dtype=float), rtol, np.full(x0_array.size, atol), h0, h_max, max_steps,
        np.array(directions, dtype=np.int64), np.array(terminal, dtype=np.int64),
    )
    status, t_fail, i_fail, stats, t, x, u, ev_t, ev_x, ev_idx = result
    return Run(int(status), float(t_fail), int(i_fail), int(stats[0]), int(stats[1]), int(stats[2]),
               t, x, u, ev_t, ev_x, ev_idx)


def fixed(module: ModuleType, method: str, params: Sequence[float], grid: np.ndarray, x0: Sequence[float],
          inp: tuple[np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Call ``fixed_run``; returns (xs (T, n), us (T, 1), nfev)."""
    tableau = METHODS[method]
    xs = np.empty((grid.size, len(x0)))
    us = np.empty((grid.size, 1))
    nfev = module.fixed_run(FNS, np.array(tableau.A), np.array(tableau.b), np.array(tableau.c), grid, np.diff(grid),
                            np.array(x0, dtype=float), np.array(params, dtype=float),
                            inputs() if inp is None else inp, xs, us)
    return xs, us, int(nfev)
