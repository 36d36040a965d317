"""The result of robodyn.identify and what its fit shares with it: :class:`Identification`, the fit's tolerances
and the error of a fit that did not converge.

Its own module so that the fit (robodyn.identification.fit), which makes the result, and
:mod:`~robodyn.identification.identify`, which runs the fit and returns it, both import it and not each other; the
statistics are those of robodyn.identification.identify's docstring. The fit report reads the result through a
protocol of its own (robodyn.identification.report), so the report imports nothing of this folder.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import NumericalError

if TYPE_CHECKING:
    from robodyn.identification.measured import Table
    from robodyn.results.trajectory import Trajectory

__all__ = ["RANK_TOLERANCE", "TOLERANCE", "Identification", "no_convergence"]

Array = NDArray[np.float64]
#: The columns of J (each scaled to unit length) count as dependent when its smallest singular value is below this
#: fraction of its largest: J^T J then has a condition number above 1e16, the resolution of double precision.
RANK_TOLERANCE: Final = 1e-8
#: Stop when the cost changes by less than this fraction in a step, or the step is this small (relative).
TOLERANCE: Final = 1e-10


@dataclass(frozen=True, slots=True, eq=False)
class Identification:
    """The result of :func:`identify`.

    values, standard_errors : {name: number}, in the order the fitted numbers were named (parameters, then the
        initial states fitted: ``theta(0)``, or ``theta(0)[2]`` for the second data set of several)
    correlation : (k, k) the estimates' correlations, in the order of ``values``
    covariance : (k, k) their covariance
    residuals : (m,) the weighted residuals (y - y_measured) / sigma at the optimum, run after run, sample by sample
    cost : 1/2 sum of the squared residuals
    model : the model with the identified parameter values
    noise : {output: sigma} the noise level of each measured output, as given or estimated (s times its scale)
    rms : {output: root-mean-square of y - y_measured}, over all data sets
    fit : {output: 100 (1 - |y - y_measured| / |y_measured - mean|)} (percent; 100 is a perfect fit)
    fitted : the model simulated at the estimates at the data's times, one Trajectory per data set
    measured : the data sets as read
    samples, degrees_of_freedom, evaluations : residuals m, m - k, simulations run
    gradient_norm, message : the optimizer's first-order optimality and its reason for stopping
    """

    values: Mapping[str, float]
    standard_errors: Mapping[str, float]
    correlation: Array
    covariance: Array
    residuals: Array
    cost: float
    model: Any
    noise: Mapping[str, float]
    rms: Mapping[str, float]
    fit: Mapping[str, float]
    fitted: tuple[Trajectory, ...]
    measured: tuple[Table, ...]
    samples: int
    degrees_of_freedom: int
    evaluations: int
    gradient_norm: float
    message: str

    def __post_init__(self) -> None:
        k = len(self.values)
        if self.correlation.shape != (k, k) or self.covariance.shape != (k, k):
            raise ValueError(f"correlation and covariance must be ({k}, {k})")
        for array in (self.correlation, self.covariance, self.residuals):
            array.setflags(write=False)

    def text(self) -> str:
        """The estimates with their standard errors, the fit of each output and the optimizer's verdict."""
        width = max(len(name) for name in self.values)
        lines = [f"{name:<{width}}  {value:.8g} +/- {self.standard_errors[name]:.3g}"
                 f"  ({_relative(value, self.standard_errors[name])})" for name, value in self.values.items()]
        lines += [f"output {name}: rms error {self.rms[name]:.4g}, fit {self.fit[name]:.2f} %, noise "
                  f"{self.noise[name]:.4g}" for name in self.rms]
        lines.append(f"{self.samples} residuals, {self.degrees_of_freedom} degrees of freedom, cost {self.cost:.6g}, "
                     f"{self.evaluations} simulations: {self.message}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The numbers as plain data (for JSON): values, standard errors, correlation, fit and the optimizer's."""
        return {"values": dict(self.values), "standard_errors": dict(self.standard_errors),
                "correlation": self.correlation.tolist(), "cost": self.cost, "noise": dict(self.noise),
                "rms": dict(self.rms), "fit_percent": dict(self.fit), "samples": self.samples,
                "degrees_of_freedom": self.degrees_of_freedom, "evaluations": self.evaluations,
                "gradient_norm": self.gradient_norm, "message": self.message}

    def _repr_html_(self) -> str:
        """The estimates with their standard errors and the fit of each output, for Jupyter."""
        from robodyn.display import block, heading, html_table, preformatted

        rows = [(name, f"{value:.8g} +/- {self.standard_errors[name]:.3g}") for name, value in self.values.items()]
        rows += [(f"output {name}", f"rms {self.rms[name]:.4g}, fit {self.fit[name]:.2f} %") for name in self.rms]
        return block([heading(f"Identification of {self.model.name!r}"), html_table(rows, row_header=True),
                      preformatted(self.message)])

    def report(self, path: Any, view: Any = None) -> None:
        """Write the fit report, one HTML page (robodyn.identification.report), to ``path``; ``view``: the robot in
        3-D shown after the fit, a page made by ``robodyn.view`` (``robodyn.view(result.model, result.fitted[0])``
        plays the first data set's run simulated at the estimates), as ``robodyn identify --report`` shows it."""
        from robodyn.identification.report import view_section, write_identification_report

        write_identification_report(self, path, () if view is None else (view_section(view),))


def _relative(value: float, error: float) -> str:
    return f"{100 * error / abs(value):.2g} %" if value != 0 and math.isfinite(error) else "-"


def no_convergence(cost: float, gradient: float, evaluations: int, message: str) -> NumericalError:
    """The error of a fit that did not converge, with its last cost and gradient norm."""
    return NumericalError(f"identify: the fit did not converge after {evaluations} simulations ({message}): last cost "
                          f"{cost:.6g}, gradient norm {gradient:.3g}: start from a better guess, fit fewer numbers, or "
                          "allow more evaluations")

