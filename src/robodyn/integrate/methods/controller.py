"""The adaptive step controller of the explicit Runge–Kutta pairs, as data: its constants and its rules.

scipy's RK45/DOP853 controller ([HNW] II.4, scipy ``_ivp/rk.py``). An attempt of size h with the scaled RMS error
``err`` (each component divided by ``max(atol + rtol max(|x|, |x_new|), TINY_SCALE)``) is

- accepted when ``err < 1``; the next step is ``h * factor`` with ``factor = MAX_FACTOR`` if ``err == 0`` else
  ``min(MAX_FACTOR, SAFETY * err ** exponent)``, and at most ``h`` (``factor <= 1``) right after a rejection;
- rejected otherwise, and retried with ``h * max(MIN_FACTOR, SAFETY * err ** exponent)``; an attempt with a
  non-finite stage or state is retried with ``h * MIN_FACTOR``;

with ``exponent = step_exponent(error_order)``. A step below ``max(MIN_STEP_REL |t|, TINY_STEP)`` has collapsed.

Two forms of the controller read these numbers: the shared numba kernel (``kernel_template.py`` in
:mod:`robodyn.integrate.kernels`, which imports them; its module's text spells them out so that numba's cache
changes with them) and the fused batch kernels' LLVM IR (``fused_ir.py``, which writes them as constants). The
formula itself is written in both forms: the fused kernel keeps the model's right-hand side and the stages in
registers (~1.6x the shared kernel on a batch, benchmarks/bench_simulate.py "batch ... fused") and IR cannot be had
from numba's source. A change here is a change to both; a change to the formula in one form is a change to the
other: tests/integrate/kernels/test_controller_forms.py checks that they take the same steps.

[HNW] E. Hairer, S. P. Nørsett, G. Wanner, "Solving Ordinary Differential Equations I", 2nd ed., Springer 1993.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_FACTOR", "MIN_FACTOR", "MIN_STEP_REL", "SAFETY", "TINY_SCALE", "TINY_STEP", "constants",
           "step_exponent"]

SAFETY: Final = 0.9  # Multiply steps computed from the asymptotic behaviour of errors by this.
MIN_FACTOR: Final = 0.2  # Minimum allowed decrease in a step size.
MAX_FACTOR: Final = 10.0  # Maximum allowed increase in a step size.
MIN_STEP_REL: Final = 1e-12  # A step below MIN_STEP_REL * |t| has collapsed (STEP_COLLAPSE) ...
TINY_STEP: Final = 5e-323  # ... or below 10 ulp of 0.0, near t = 0.
TINY_SCALE: Final = 1e-300  # Floor of an error scale (atol = 0 at x = 0): a huge error, not a division by zero.


def step_exponent(error_order: int) -> float:
    """The exponent of the step-size factor ``SAFETY * err ** exponent`` of a pair whose error estimate is of
    order ``error_order`` (4 for DOPRI5, 7 for DOP853): ``-1 / (error_order + 1)`` ([HNW] II.4 (4.13))."""
    return -1.0 / (error_order + 1)


def constants() -> dict[str, float]:
    """The constants by name (what the kernel module's text spells out)."""
    return {"SAFETY": SAFETY, "MIN_FACTOR": MIN_FACTOR, "MAX_FACTOR": MAX_FACTOR, "MIN_STEP_REL": MIN_STEP_REL,
            "TINY_STEP": TINY_STEP, "TINY_SCALE": TINY_SCALE}
