"""Grey-box identification: a model's parameters (and initial states) fitted to measured trajectories.

:func:`identify` fits named parameters of any model robodyn simulates to one or more measured data sets by output
error: it simulates the model at the data's times and minimizes the weighted squared difference between the model's
outputs and the measured ones,

    min_theta  1/2 sum_k sum_j ((y_j(t_k; theta) - y_j,measured(t_k)) / sigma_j)^2,

by Levenberg–Marquardt (scipy.optimize.least_squares; a trust-region reflective method when bounds are given) on
the exact Jacobian: the forward sensitivities dy/dtheta integrated with the state (robodyn.simulate's
``sensitivities``). At the optimum, the Jacobian J gives the estimates' covariance

    C = s^2 (J^T J)^-1,   s^2 = 2 cost / (m - k)      (m residuals, k fitted numbers)

(or C = (J^T J)^-1 when the noise levels sigma are given: then s = 1 is known), their standard errors sqrt(C_ii)
and correlations C_ij / (sigma_i sigma_j): the usual linearization of nonlinear least squares (Bates and Watts,
*Nonlinear Regression Analysis and Its Applications*, Wiley 1988, ch. 2; L. Ljung, *System Identification*, 2nd
ed., Prentice Hall 1999, sec. 9.3). Parameters the data cannot tell apart (J rank deficient) are refused with the
combination named, before fitting and at the optimum.

Data: a CSV file, a Trajectory or a mapping of columns (robodyn.identification.measured), or a list of them; columns
named by the model's outputs (what was measured) and inputs (what was applied: held between samples, or
interpolated linearly with ``intersample="linear"``); sampling may be irregular.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from robodyn.base.blas import one_blas_thread
from robodyn.base.errors import InputError, UnknownNameError
from robodyn.base.names import did_you_mean
from robodyn.identification.measured import Data, Table, read_table
from robodyn.identification.problem import Problem, Run, Unknown
from robodyn.identification.result import RANK_TOLERANCE, TOLERANCE, Identification, no_convergence
from robodyn.model.system import require_model

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

# The result and what the fit shares with it live in robodyn.identification.result (so the fit and this module do
# not import each other); they are named here too, where they were defined before.
__all__ = ["RANK_TOLERANCE", "TOLERANCE", "Identification", "identify", "no_convergence"]

Array = NDArray[np.float64]


@one_blas_thread()  # small factorizations in loops: robodyn.base.blas
def identify(model: ModelContract, data: Data | Sequence[Data], parameters: Sequence[str], *,
             x0: str | Sequence[str] = "given",
             initial: Mapping[str, float] | Sequence[Mapping[str, float]] | None = None,
             inputs: Mapping[str, Any] | None = None, input_columns: Sequence[str] | None = None,
             intersample: str = "zoh", bounds: Mapping[str, tuple[float, float]] | None = None, positive: bool = True,
             noise: Mapping[str, float] | None = None, method: str = "dopri5", rtol: float = 1e-8,
             atol: float = 1e-10, max_evaluations: int = 200) -> Identification:
    """Fit ``parameters`` of ``model`` (and initial states) to measured ``data`` (see the module docstring).

    Parameters
    ----------
    model
        Any model robodyn simulates with sensitivities; its current parameter values are the first guess.
    data
        A CSV path, a Trajectory or a mapping of columns (``t`` and outputs and inputs by name), or a list of them.
    parameters
        The names of the parameters to fit (free parameters: derived ones follow them).
    x0
        ``"given"``: every run starts from ``initial`` (states left out: 0); ``"fit"``: every initial state is fitted
        too (``initial`` its guess), for each run; or a list of the states whose initial values are fitted.
    initial
        Initial states by name (one mapping, or one per data set).
    inputs
        Signals for model inputs the data have no column for (robodyn.signals; others are 0).
    input_columns
        The inputs applied from the data's columns (default: every column named by an input); a column of another
        input is then left out.
    intersample
        How measured inputs are applied between samples: ``"zoh"`` (held) or ``"linear"``.
    bounds
        ``{name: (low, high)}`` for fitted numbers (then a trust-region reflective method fits).
    positive
        Fit numbers whose guess is positive as guess * exp(z): they stay positive.
    noise
        ``{output: sigma}``: known noise levels (the covariance then uses them); by default each output is weighted
        by its scale and the noise level is estimated from the residuals.
    method, rtol, atol
        The simulations' integrator and tolerances.
    max_evaluations
        Simulations the optimizer may run before it gives up (NumericalError: exit code 1 on the command line).
    """
    from robodyn.identification.fit import fit

    require_model(model, "identify")
    if isinstance(max_evaluations, bool) or not isinstance(max_evaluations, numbers.Integral) or max_evaluations < 1:
        raise InputError(f"identify: max_evaluations must be a whole number >= 1 (the simulations the fit may run), "
                         f"got {max_evaluations!r}")
    runs, unknowns = _prepare(model, data, parameters, x0, initial, (inputs, input_columns), intersample, noise,
                              positive)
    problem = Problem(model, runs, unknowns, method=method, rtol=rtol, atol=atol)
    return fit(problem, _bounds(unknowns, bounds), noise is not None, max_evaluations)


# --- reading and checking what is fitted to what -------------------------------------------------------------
def _prepare(model: ModelContract, data: Data | Sequence[Data], parameters: Sequence[str], x0: str | Sequence[str],
             initial: Any, applied: tuple[Mapping[str, Any] | None, Sequence[str] | None], intersample: str,
             noise: Mapping[str, float] | None, positive: bool) -> tuple[list[Run], list[Unknown]]:
    sets: list[Data] = list(data) if isinstance(data, list | tuple) else [data]  # type: ignore[list-item]
    if not sets:
        raise InputError("identify: no data: give a CSV file, a Trajectory or a mapping of columns (or a list)")
    tables = [read_table(d, f"data set {k + 1}" if len(sets) > 1 else "data") for k, d in enumerate(sets)]
    names = _parameter_names(model, parameters)
    fitted_states = _fitted_states(model, x0)
    starts = _initial_states(model, initial, len(tables))
    if intersample not in ("zoh", "linear"):
        raise InputError(f"identify: intersample must be 'zoh' or 'linear', got {intersample!r}")
    inputs, columns = applied
    chosen = _input_columns(model, columns)
    runs = [_run(model, table, starts[k], fitted_states, inputs or {}, chosen, intersample, noise)
            for k, table in enumerate(tables)]
    measured = {name for run in runs for name in run.outputs}
    for name in noise or {}:
        if name not in measured:
            raise UnknownNameError(f"identify: noise gives a level for {name!r}, which is not a measured output "
                                   f"(measured: {', '.join(sorted(measured))}){did_you_mean(name, sorted(measured))}")
    values = dict(model.parameters)
    unknowns = [Unknown(name, float(values[name]), positive and values[name] > 0, parameter=name) for name in names]
    for k, run in enumerate(runs):
        for state in fitted_states:
            guess = float(run.x0[model.states.index(state)])
            label = f"{state}(0)" if len(runs) == 1 else f"{state}(0)[{k + 1}]"
            unknowns.append(Unknown(label, guess, positive and guess > 0, state=state, run=k))
    size = sum(run.Y.size for run in runs)
    if size <= len(unknowns):
        raise InputError(f"identify: {size} measured values for {len(unknowns)} fitted numbers: give more samples "
                         "(at least one more than the numbers fitted)")
    return runs, unknowns


def _parameter_names(model: ModelContract, parameters: Sequence[str]) -> list[str]:
    names = [parameters] if isinstance(parameters, str) else list(parameters)
    if not names:
        raise InputError(f"identify: name the parameters to fit, some of {', '.join(model.parameters)}")
    for name in names:
        if name in model.derived_parameters:
            raise InputError(f"identify: {name!r} is derived ({name} = {model.derived_parameters[name]}): fit the "
                             "parameters it is made of")
        if name not in model.parameters:
            raise UnknownNameError(f"identify: {name!r} is not a parameter of {model.name!r} (its parameters: "
                                   f"{', '.join(model.parameters)}){did_you_mean(name, list(model.parameters))}")
    twice = next((name for k, name in enumerate(names) if name in names[:k]), None)
    if twice is not None:
        raise InputError(f"identify: {twice!r} is named twice among the parameters to fit")
    return names


def _fitted_states(model: ModelContract, x0: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(x0, str):
        if x0 not in ("given", "fit"):
            raise InputError(f"identify: x0 must be 'given', 'fit' or a list of states, got {x0!r}")
        return model.states if x0 == "fit" else ()
    for state in x0:
        if state not in model.states:
            raise UnknownNameError(f"identify: x0 names {state!r}, not a state of {model.name!r} (its states: "
                                   f"{', '.join(model.states)}){did_you_mean(state, list(model.states))}")
    return tuple(x0)


def _initial_states(model: ModelContract, initial: Any, count: int) -> list[Array]:
    given = [initial] * count if initial is None or isinstance(initial, Mapping) else list(initial)
    if len(given) != count:
        raise InputError(f"identify: {len(given)} initial states for {count} data sets: give one mapping, or one "
                         "per data set")
    return [model.state_vector(dict(g or {}), default=0.0) for g in given]


def _input_columns(model: ModelContract, columns: Sequence[str] | None) -> tuple[str, ...]:
    """The inputs applied from data columns: ``columns`` checked, or every input."""
    if columns is None:
        return model.inputs
    names = [columns] if isinstance(columns, str) else list(columns)
    for name in names:
        if name not in model.inputs:
            raise UnknownNameError(f"identify: input_columns names {name!r}, not an input of {model.name!r} (its "
                                   f"inputs: {', '.join(model.inputs) or 'none'}){did_you_mean(name, model.inputs)}")
    return tuple(names)


def _run(model: ModelContract, table: Table, x0: Array, fitted_states: tuple[str, ...], inputs: Mapping[str, Any],
         input_columns: tuple[str, ...], intersample: str, noise: Mapping[str, float] | None) -> Run:
    from robodyn.signals import Table as TableSignal

    outputs = [name for name in table.columns if name in model.outputs]
    applied = [name for name in table.columns if name in input_columns]
    left_out = [name for name in table.columns if name in model.inputs and name not in input_columns]
    unknown = [name for name in table.columns if name not in outputs and name not in applied
               and name not in left_out]
    if unknown:
        known = [*model.outputs, *model.inputs]
        raise UnknownNameError(f"{table.source}: column {unknown[0]!r} is neither an output nor an input of "
                               f"{model.name!r} (outputs: {', '.join(model.outputs)}; inputs: "
                               f"{', '.join(model.inputs) or 'none'}){did_you_mean(unknown[0], known)}")
    if not outputs:
        raise InputError(f"{table.source}: no measured output: name a column by one of {', '.join(model.outputs)}")
    for name in inputs:
        if name not in model.inputs:
            raise UnknownNameError(f"identify: inputs names {name!r}, not an input of {model.name!r}")
        if name in applied:
            raise InputError(f"identify: input {name!r} is both a data column and given: give it once")
    signals = dict(inputs)
    for name in applied:
        times, values = _changes(table.t, table.columns[name], intersample)
        signals[name] = TableSignal(times, values, intersample)
    Y = np.column_stack([table.columns[name] for name in outputs])
    sigma = np.array([_sigma(table, name, Y[:, k], noise) for k, name in enumerate(outputs)])
    return Run(table, tuple(outputs), Y, 1.0 / sigma, signals, x0, fitted_states)


def _changes(t: Array, values: Array, intersample: str) -> tuple[Array, Array]:
    """The rows of a held input where its value changes (and the first): the same signal with breakpoints only
    where it jumps, so a step applied over 10,000 samples stops the integrator once, not 10,000 times."""
    if intersample != "zoh" or values.size < 2:
        return t, values
    keep = np.concatenate(([True], values[1:] != values[:-1]))
    return t[keep], values[keep]


def _sigma(table: Table, name: str, y: Array, noise: Mapping[str, float] | None) -> float:
    if noise is not None:
        if name not in noise:
            raise InputError(f"identify: noise gives no level for the measured output {name!r}: give one for each")
        sigma = float(noise[name])
        if not (math.isfinite(sigma) and sigma > 0):
            raise InputError(f"identify: the noise level of {name!r} must be positive and finite, got {sigma!r}")
        return sigma
    scale = float(np.sqrt(np.mean((y - y.mean()) ** 2)))
    if scale > 0:
        return scale
    return max(float(np.abs(y).max()), 1.0)  # a constant output: its size, or 1


def _bounds(unknowns: Sequence[Unknown], bounds: Mapping[str, tuple[float, float]] | None
            ) -> dict[int, tuple[float, float]]:
    found: dict[int, tuple[float, float]] = {}
    names = [u.name for u in unknowns]
    for name, pair in (bounds or {}).items():
        if name not in names:
            raise UnknownNameError(f"identify: bounds name {name!r}, which is not fitted (fitted: {', '.join(names)})"
                                   f"{did_you_mean(name, names)}")
        low, high = (float(v) for v in pair)
        k = names.index(name)
        if not low < high or not low <= unknowns[k].guess <= high:
            raise InputError(f"identify: the bounds of {name!r} ({low}, {high}) must hold its guess "
                             f"{unknowns[k].guess} and be increasing")
        found[k] = (low, high)
    return found
