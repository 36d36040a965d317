"""Status codes of the Runge–Kutta kernels and the one table of what each failure tells the user.

The kernel template (``kernel_template.py``) imports the codes from here; numba reads module-level
integer globals as compile-time constants, so its comparisons against these names cost nothing.
:mod:`robodyn.integrate.kernels.run` turns a failure code into a ``NumericalError`` with
:func:`failure_message`.

=====  ===============  =======================================================================
code   name             meaning
=====  ===============  =======================================================================
0      OK               the run reached t1
1      TERMINATED       a terminal event stopped the run
-1     STEP_COLLAPSE    the step size fell below ``max(1e-12 |t|, 10 ulp(t))``
-2     MAX_STEPS        more than ``max_steps`` step attempts
-3     NON_FINITE       a non-finite state or derivative
=====  ===============  =======================================================================

Failures are the negative codes: kernels never raise, they stop and return the results up to ``t_fail``.
Each failure's message is a ``str.format`` template in two parts, what happened and what to try, with
the fields ``method``, ``t`` (the time of the failure), ``state`` (``" (state NAME)"`` or ``""``),
``max_steps`` and ``hint`` (:data:`SECOND_ORDER_HINT` for second-order models, else ``""``).

Generated kernel modules are cached under the hash of their text, which holds these names, not their
numbers: :func:`robodyn.integrate.kernels.module.kernel_module_text` writes the numbers into a header comment so that
the
hash changes with them.

Nothing here imports numba, scipy or sympy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

__all__ = [
    "CODES",
    "FAILURES",
    "MAX_STEPS",
    "NON_FINITE",
    "OK",
    "SECOND_ORDER_HINT",
    "STEP_COLLAPSE",
    "TERMINATED",
    "Failure",
    "failure_message",
]

OK: Final = 0
TERMINATED: Final = 1
STEP_COLLAPSE: Final = -1
MAX_STEPS: Final = -2
NON_FINITE: Final = -3

#: Name -> code of every status the kernels return.
CODES: Final[Mapping[str, int]] = MappingProxyType({
    "OK": OK,
    "TERMINATED": TERMINATED,
    "STEP_COLLAPSE": STEP_COLLAPSE,
    "MAX_STEPS": MAX_STEPS,
    "NON_FINITE": NON_FINITE,
})

#: The ``hint`` field of a non-finite value in a second-order (mechanical) model.
SECOND_ORDER_HINT: Final = " or the mass matrix is not positive definite there"


@dataclass(frozen=True, slots=True)
class Failure:
    """What a failure status means: ``happened`` and ``remedy`` (what to try), ``str.format`` templates;
    ``implicit_remedy`` replaces the remedy when the failing method is already implicit (radau, rosenbrock)."""

    happened: str
    remedy: str
    implicit_remedy: str | None = None

    @property
    def template(self) -> str:
        """The whole message template: what happened, then what to try."""
        return f"{self.happened}; {self.remedy}"

    def message_template(self, implicit: bool) -> str:
        """:attr:`template`, with the implicit methods' remedy for them."""
        remedy = self.implicit_remedy if implicit and self.implicit_remedy else self.remedy
        return f"{self.happened}; {remedy}"


#: Failure code -> its message.
FAILURES: Final[Mapping[int, Failure]] = MappingProxyType({
    STEP_COLLAPSE: Failure(
        "{method}: the step size collapsed at t = {t:.10g}{state}: the problem is stiff or singular there",
        "try --method radau (method='radau')",
        "check the model there (a singularity, or a jump the inputs do not announce) or loosen the tolerances",
    ),
    MAX_STEPS: Failure(
        "{method}: more than {max_steps} steps before t = {t:.10g}: the problem may be stiff",
        "try --method radau (method='radau') or allow more steps (max_steps)",
        "allow more steps (max_steps) or loosen the tolerances",
    ),
    NON_FINITE: Failure(
        "{method}: a non-finite value appeared at t = {t:.10g}{state}: the solution blows up{hint}",
        "check the model and the initial state, or shorten the time span",
    ),
})


def failure_message(status: int, *, method: str, t: float, state: str | None, max_steps: int,
                    second_order: bool, implicit: bool = False) -> str:
    """The message of the failure ``status`` (a key of :data:`FAILURES`) of ``method`` at time ``t``.

    ``state`` names the state where it happened, when the kernel knows it (else None); ``implicit``: the
    method is already an implicit one (no advice to switch to it).
    """
    return FAILURES[status].message_template(implicit).format(
        method=method, t=t, state=f" (state {state})" if state else "", max_steps=max_steps,
        hint=SECOND_ORDER_HINT if second_order else "",
    )
