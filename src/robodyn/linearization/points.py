"""An operating point (x, u) with f(t, x, u, p) ~ 0, as :func:`robodyn.find_equilibrium` returns it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import ShapeError
from robodyn.base.numbers import A_NUMBER, finite_number

__all__ = ["OperatingPoint", "finite_value"]

Array: TypeAlias = NDArray[np.float64]


def finite_value(value: object, what: str) -> float:
    """``value`` (a number or an array of one; not a bool, not text) as a finite float, else InputError naming
    ``what``: a value given for an operating point (find_equilibrium's fixed values, guesses, boxes, targets)."""
    return finite_number(value, what, not_real=A_NUMBER, arrays=True)


@dataclass(frozen=True, slots=True, eq=False)
class OperatingPoint:
    """A point (x, u) with f(t, x, u, p) ≈ 0, and how it was found.

    Attributes
    ----------
    x : (n,) read-only
        States, in the model's order.
    u : (m,) read-only
        Inputs, in the model's order.
    states, inputs
        The names of x and u.
    residual
        max |f(t, x, u, p)| at the point (absolute, units of x').
    converged
        Whether the residual met the requested tolerance.
    method
        ``"root-hybr"``, ``"least-squares"``, ``"holding-torque"`` or ``"fixed"`` (nothing was free; the
        given point was checked).
    """

    x: Array
    u: Array
    states: tuple[str, ...]
    inputs: tuple[str, ...]
    residual: float
    converged: bool
    method: str

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "states", tuple(self.states))
        set_(self, "inputs", tuple(self.inputs))
        for label, names in (("x", self.states), ("u", self.inputs)):
            vector = np.array(getattr(self, label), dtype=float).reshape(-1)
            if vector.shape != (len(names),):
                raise ShapeError(f"operating point: {label} has {vector.size} entries for {len(names)} names "
                                 f"({', '.join(names) or 'none'})")
            vector.setflags(write=False)
            set_(self, label, vector)
        set_(self, "residual", float(self.residual))
        set_(self, "converged", bool(self.converged))
        set_(self, "method", str(self.method))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{"x": {name: value}, "u": {name: value}, "residual", "converged", "method"}``."""
        return {
            "x": dict(zip(self.states, self.x.tolist())),
            "u": dict(zip(self.inputs, self.u.tolist())),
            "residual": self.residual,
            "converged": self.converged,
            "method": self.method,
        }

    def __str__(self) -> str:
        from robodyn.display import cleaned

        status = "converged" if self.converged else "NOT converged"
        lines = [f"operating point ({self.method}, {status}, residual max|f| = {self.residual:.3g})"]
        shown = cleaned(np.concatenate([self.x, self.u]))  # round-off against the point's scale shown as 0
        for label, names, values in (("x", self.states, shown[: self.x.size]), ("u", self.inputs, shown[self.x.size:])):
            text = ", ".join(f"{n} = {v:.10g}" for n, v in zip(names, values.tolist())) or "(none)"
            lines.append(f"  {label}: {text}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The states and inputs at the point as an HTML table, with the residual and the method (Jupyter)."""
        from robodyn import display

        status = "converged" if self.converged else "NOT converged"
        rows = [(name, "state", value) for name, value in zip(self.states, self.x.tolist())]
        rows += [(name, "input", value) for name, value in zip(self.inputs, self.u.tolist())]
        return display.block([
            display.heading(f"operating point ({self.method}, {status})"),
            display.html_table(rows, header=("name", "kind", "value"), row_header=True),
            display.note(f"residual max|f| = {self.residual:.3g}"),
        ])

    def _repr_latex_(self) -> str:
        """The states and inputs at the point, one ``name = value`` line each, as display math."""
        from robodyn import display

        lines = [f"{display.latex_identifier(name)} &= {display.latex_number(value)}"
                 for name, value in zip((*self.states, *self.inputs), (*self.x.tolist(), *self.u.tolist()))]
        return "$$\\begin{aligned} " + " \\\\ ".join(lines) + " \\end{aligned}$$"
