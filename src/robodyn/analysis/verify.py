"""Integrators against the exact solution: errors and observed orders (``robodyn verify``).

For a linear model the exact path (matrix exponentials) is the reference. Every Runge–Kutta method runs
at five fixed step sizes; the slope of log(max error) against log(h) is its observed order, which must
be within :data:`ORDER_TOLERANCE` of the method's order (1, 2, 4, 5, 8 for the explicit methods, 5 for
Radau IIA and 4 for RODAS4, whose fixed steps iterate Newton to convergence). The adaptive methods also run
at five tolerances with error control: there the error should shrink in proportion to the tolerance
(reported as the slope of log error against log rtol, ideally 1; informational).

Step sizes are chosen per method so that the errors stay well above rounding (1e-12) and in the
asymptotic range (h omega_n <= 1 on the seed joint).
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError
from robodyn.base.progress import progress
from robodyn.integrate.events import resolve_events
from robodyn.integrate.kernels.run import kernel_module, run_fixed, run_implicit_fixed
from robodyn.integrate.methods.registry import REGISTRY
from robodyn.integrate.methods.registry import TABLEAUS as METHODS
from robodyn.integrate.simulate import simulate
from robodyn.linear.systems import require_continuous
from robodyn.model.system import require_model
from robodyn.signals import resolve_inputs

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["DEFAULT_METHODS", "IMPLICIT_ORDERS", "MIN_DISTINCT_STEPS", "ORDER_TOLERANCE", "MethodCheck", "Verification",
           "verify"]

ORDER_TOLERANCE: Final = 0.3  # An observed order further than this from the method's order fails.

#: Step sizes relative to the model's fastest time scale 1/|lambda|_max, per method.
MAX_GRID_POINTS: Final = 10_000_000  # The most steps one fixed-step run of verify may take.
#: The fewest different step sizes an observed order is fitted through. The five sizes of a method become
#: round(t_final / h) steps each: a run of a few time scales 1/|lambda|_max or less repeats step counts (below
#: one time scale every size is one step, and the "order" is the noise of five equal points).
MIN_DISTINCT_STEPS: Final = 3

_RELATIVE_STEPS: Final[Mapping[str, tuple[float, ...]]] = {
    "euler": (4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4),
    "heun": (4e-2, 2e-2, 1e-2, 5e-3, 2.5e-3),
    "rk4": (2e-1, 1e-1, 5e-2, 2.5e-2, 1.25e-2),
    "dopri5": (4e-1, 2e-1, 1e-1, 5e-2, 2.5e-2),
    "dop853": (1.0, 0.8, 0.6, 0.45, 0.35),
    "radau": (1.0, 0.5, 0.25, 0.125, 0.0625),
    "rosenbrock": (0.4, 0.2, 0.1, 0.05, 0.025),
}
#: The orders of the implicit methods (the explicit ones carry theirs in their tableaus).
IMPLICIT_ORDERS: Final[Mapping[str, int]] = {"radau": 5, "rosenbrock": 4}
DEFAULT_METHODS: Final = ("euler", "heun", "rk4", "dopri5", "dop853", "radau", "rosenbrock")
_TOLERANCES: Final = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8)


@dataclass(frozen=True, slots=True)
class MethodCheck:
    """One method's convergence study.

    ``steps`` (5,) fixed step sizes and ``errors`` (5,) their max errors; ``observed_order`` is the
    least-squares slope; for adaptive methods ``tolerances`` and ``adaptive_errors`` (5,) hold the
    error-controlled runs and ``proportionality`` the slope of log error against log rtol.
    """

    method: str
    order: int
    steps: tuple[float, ...]
    errors: tuple[float, ...]
    observed_order: float
    tolerances: tuple[float, ...] = ()
    adaptive_errors: tuple[float, ...] = ()
    adaptive_steps: tuple[int, ...] = ()
    proportionality: float | None = None

    @property
    def passed(self) -> bool:
        return abs(self.observed_order - self.order) <= ORDER_TOLERANCE


@dataclass(frozen=True, slots=True)
class Verification:
    """The result of :func:`verify`: one :class:`MethodCheck` per method."""

    model: str
    t_final: float
    checks: tuple[MethodCheck, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model, "t_final": self.t_final, "passed": self.passed,
            "methods": [
                {"method": c.method, "order": c.order, "observed_order": c.observed_order, "passed": c.passed,
                 "steps": list(c.steps), "errors": list(c.errors), "tolerances": list(c.tolerances),
                 "adaptive_errors": list(c.adaptive_errors), "adaptive_steps": list(c.adaptive_steps),
                 "proportionality": c.proportionality}
                for c in self.checks
            ],
        }

    def table(self) -> str:
        """A text table of errors and orders."""
        lines = [f"{self.model}: integrators vs the exact solution on [0, {self.t_final:g}]",
                 f"{'method':<10} {'order':>5} {'observed':>9}  {'max error at the step sizes h (next line)':<56} "
                 "verdict"]
        for c in self.checks:
            errors = " ".join(f"{e:9.2e}" for e in c.errors)
            verdict = "ok" if c.passed else f"FAIL (off by more than {ORDER_TOLERANCE})"
            lines.append(f"{c.method:<10} {c.order:>5} {c.observed_order:>9.3f}  {errors:<56} {verdict}")
            lines.append(f"{'':<10} {'':>5} {'h =':>9}  " + " ".join(f"{h:9.2e}" for h in c.steps))
        for c in self.checks:
            if c.tolerances:
                errors = " ".join(f"{e:9.2e}" for e in c.adaptive_errors)
                lines.append(f"{c.method:<10} error control, rtol {c.tolerances[0]:.0e}..{c.tolerances[-1]:.0e}: "
                             f"{errors}  (error/rtol slope {c.proportionality:.2f})")
        return "\n".join(lines)

    def plot(self) -> Any:
        """Log-log plot of max error against step size, with the reference slopes; a matplotlib Figure."""
        from matplotlib.figure import Figure

        from robodyn.display.figures import literal, plain_log

        figure = Figure(figsize=(7, 5), layout="constrained")
        axes = figure.subplots()
        for c in self.checks:
            line = axes.loglog(c.steps, c.errors, "o-", label=f"{c.method} (observed {c.observed_order:.2f})")[0]
            # the reference slope a factor 5 below the data, so that it shows beside it instead of under it
            scale = c.errors[-1] / c.steps[-1] ** c.order / 5.0
            axes.loglog(c.steps, [scale * h**c.order for h in c.steps], "--", color=line.get_color(), alpha=0.7,
                        linewidth=1.2)
            axes.annotate(f"slope {c.order}", (c.steps[0], scale * c.steps[0] ** c.order), fontsize=8,
                          color=line.get_color(), xytext=(4, -10), textcoords="offset points")
        axes.set_xlabel("step size h [s]")
        axes.set_ylabel("max |x - x_exact| [units of x]")
        axes.set_title(f"{literal(self.model)}: convergence (dashed: slope = order, shifted below the data)")
        axes.grid(alpha=0.3, which="both")
        axes.legend(loc="best")
        plain_log(axes)
        return figure

    def png(self) -> bytes:
        buffer = io.BytesIO()
        self.plot().savefig(buffer, format="png", dpi=100)
        return buffer.getvalue()

    def _repr_html_(self) -> str:
        from robodyn.display import block, figure_svg, heading, preformatted

        return block([heading(f"Integrators against the exact solution ({'passed' if self.passed else 'FAILED'})"),
                      preformatted(self.table()), figure_svg(self.plot())])


def _check_span(name: str, t_final: float, rate: float, methods: Sequence[str]) -> None:
    """InputError when ``t_final`` gives some method fewer than MIN_DISTINCT_STEPS different step counts (as
    :func:`_check` rounds them), suggesting a t_final from which every method has them: its largest, middle
    and smallest steps more than one step count apart, the largest at least half a step."""
    few = [(method, len({max(1, round(t_final / (h / rate))) for h in _RELATIVE_STEPS[method]})) for method in methods]
    few = [(method, count) for method, count in few if count < MIN_DISTINCT_STEPS]
    if not few:
        return
    span = 0.0  # in time scales 1/rate
    for method in methods:
        h = sorted(_RELATIVE_STEPS[method], reverse=True)
        span = max(span, h[0] / 2, 1 / (1 / h[2] - 1 / h[0]), 1 / (1 / h[4] - 1 / h[2]))
    method, count = few[0]
    raise InputError(f"verify: t_final = {t_final:g} is too short to observe an order on {name!r}: {method}'s five "
                     f"step sizes round to {count} different step count{'s' if count > 1 else ''} (a slope needs "
                     f"{MIN_DISTINCT_STEPS}): give t_final = {_round_up(1.01 * span / rate):.3g} or more "
                     f"({1.01 * span:.3g} times the fastest time scale 1/|lambda|max = {1 / rate:.3g})")


def _round_up(value: float) -> float:
    """``value`` > 0 rounded up to 3 significant digits (a bound that, printed with ``:.3g``, still holds)."""
    unit = 10.0 ** (math.floor(math.log10(value)) - 2)
    return math.ceil(value / unit * (1 - 1e-12)) * unit


def _slope(x: Sequence[float], y: Sequence[float]) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def verify(
    model: ModelContract,
    *,
    t_final: float = 2.0,
    x0: Any = None,
    u: Any = 1.0,
    methods: Sequence[str] = DEFAULT_METHODS,
) -> Verification:
    """Convergence study of the Runge–Kutta integrators on a linear model against its exact solution.

    Parameters
    ----------
    model
        A linear model (LinearSystem or mechanical); the seed joint by default in the CLI.
    t_final, x0, u
        The test problem: from ``x0`` (default 0) under input ``u`` (default a unit step) over [0, t_final].
    """
    require_model(model, "verify")
    require_continuous(model, "verify", "its recursion is exact: there is no integrator to verify")
    linear = model.linear_model()
    if linear is None:
        raise InputError(f"verify needs a linear model with an exact solution; {model.name!r} is not linear")
    rate = float(np.max(np.abs(np.linalg.eigvals(linear.A)), initial=0.0)) or 1.0
    if isinstance(t_final, bool) or not (isinstance(t_final, (int, float)) and np.isfinite(t_final) and t_final > 0):
        raise InputError(f"verify: t_final must be a positive finite number, got {t_final!r:.40}")
    finest = t_final * rate / min(min(steps) for steps in _RELATIVE_STEPS.values())
    if finest > MAX_GRID_POINTS:
        raise InputError(f"verify: t_final = {t_final:g} would need about {finest:.3g} fixed steps (at most "
                         f"{MAX_GRID_POINTS:g}): give a shorter t_final, e.g. {MAX_GRID_POINTS / finest * t_final:.3g}")
    start = model.state_vector(x0 if x0 is not None else np.zeros(model.n_states), default=0.0)
    inputs = resolve_inputs(model.inputs, u)
    unknown = [method for method in methods if method not in _RELATIVE_STEPS]
    if unknown:
        raise InputError(f"verify: no convergence study for {', '.join(map(repr, unknown))}: choose from "
                         f"{', '.join(_RELATIVE_STEPS)}")
    _check_span(model.name, t_final, rate, methods)
    setup = kernel_module(model, inputs, resolve_events(model, None), jacobian=True)
    p = model.parameter_vector()

    def exact(times: np.ndarray) -> np.ndarray:
        return simulate(model, (0.0, t_final), start, u, method="exact", t_eval=times).x

    checks = []
    with progress(len(methods), f"verify {model.name}") as advance:
        for method in methods:
            checks.append(_check(model, method, rate, t_final, start, u, setup, p, exact))
            advance(description=f"verify {model.name}: {method}")
    return Verification(model.name, t_final, tuple(checks))


def _check(model: ModelContract, method: str, rate: float, t_final: float, start: np.ndarray, u: Any, setup: Any,
           p: np.ndarray, exact: Any) -> MethodCheck:
    """One method's errors at the fixed steps (and, if adaptive, at the tolerances) against the exact run."""
    implicit = REGISTRY[method].family == "implicit"
    order = IMPLICIT_ORDERS[method] if implicit else METHODS[method].order
    steps = tuple(h / rate for h in _RELATIVE_STEPS[method])
    errors = []
    for h in steps:
        count = max(1, round(t_final / h))
        grid = np.linspace(0.0, t_final, count + 1)
        if implicit:  # the values at the steps' ends (dense output would measure its own, lower order)
            run = run_implicit_fixed(setup, method, (0.0, t_final), grid[1] - grid[0], start, p)
            errors.append(float(np.max(np.abs(run.x - exact(run.t)))))
        else:
            run = run_fixed(setup, method, grid, start, p, grid[1] - grid[0])
            errors.append(float(np.max(np.abs(run.x - exact(grid)))))
    check = MethodCheck(method, order, tuple(t_final / max(1, round(t_final / h)) for h in steps),
                        tuple(errors), _slope([t_final / max(1, round(t_final / h)) for h in steps], errors))
    if implicit or METHODS[method].adaptive:
        adaptive, counts = [], []
        for tol in _TOLERANCES:
            trajectory = simulate(model, (0.0, t_final), start, u, method=method, rtol=tol, atol=tol * 1e-2)
            adaptive.append(float(np.max(np.abs(trajectory.x - exact(trajectory.t)))))
            counts.append(trajectory.stats.steps)
        check = MethodCheck(method, order, check.steps, check.errors, check.observed_order,
                            _TOLERANCES, tuple(adaptive), tuple(counts), _slope(_TOLERANCES, adaptive))
    return check
