"""What a model offers for export as standalone code: its functions as outputs of one straight-line tape.

:class:`ExportedFunctions` is the model contract's ``exported_functions()`` answer (robodyn.export.c writes it as
C99): the tape and, by function, the outputs in the order of the C signature's arrays. The signatures (the
promise of docs/export.md) are, with ``x = [q, q']`` the tape's state leaves and ``a`` its fourth argument:

==============  ===========================================  =================================================
function        tape arguments read                          outputs
==============  ===========================================  =================================================
``f``           t, x, u, p                                   x' ``(NX,)``
``h``           t, x, u, p                                   y ``(NY,)``
``linearize``   t, x, u, p                                   A, B, C, D row-major, one after the other
``mass``        q (x's first NQ), p                          M ``(NQ * NQ,)`` row-major
``rnea``        q, q' (x), q'' (a), p                        tau ``(NQ,)``
``aba``         q, q' (x), tau (a), p                        q'' ``(NQ,)``
``com``         q, p                                         the centre of mass ``(3,)``
``fk``          q, p (per frame)                             position (3), R (9, row-major), J (6 NQ)
==============  ===========================================  =================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from robodyn.base.errors import InputError

__all__ = ["ExportedFunctions"]


@dataclass(frozen=True)
class ExportedFunctions:
    """A model's exportable functions: ``tape`` (robodyn.rigid.tape.Tape) and ``functions`` {name: outputs} for
    ``f``, ``h``, ``linearize`` and, for rigid bodies, ``mass``, ``rnea``, ``aba``, ``com``; ``frames``
    {frame: outputs} for the forward kinematics; ``coordinates`` the NQ coordinates (rigid bodies), else ()."""

    tape: Any
    functions: Mapping[str, Sequence[Any]]
    frames: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    coordinates: tuple[str, ...] = ()


def symbolic_exported_functions(model: Any, f: Any = None, *, mass: Any = None, forces: Any = None,
                                bias: Any = None, points: Mapping[str, Sequence[Any]] | None = None
                                ) -> ExportedFunctions:
    """A symbolic model's functions on a new tape from its sympy expressions (in ``model``'s symbols).

    First-order models give ``f`` (x' expressions); second-order ones M(q) q'' = F(x, u, t) - b(x, t) their
    ``mass``, ``forces`` and ``bias``: then x' = [q', M^-1 (F - b)] by a Cholesky solve on the tape,
    ``mass`` M, ``rnea`` tau = M q'' + b - F(u = 0) (the generalized forces beyond the model's own, as a chain's
    inverse dynamics with its joint terms) and ``aba`` q'' = M^-1 (tau + F(u = 0) - b). ``h`` is the model's
    outputs, ``linearize`` their exact Jacobians and f's by forward mode.
    """
    from robodyn.model.expr import TIME, as_expr
    from robodyn.rigid.rnea import cholesky_factor, cholesky_solve
    from robodyn.rigid.tape import Tape

    tape = Tape()
    n, m = len(model.x_symbols), len(model.u_symbols)
    x, u = tape.leaves(1, n), tape.leaves(2, m)
    table = {TIME: tape.leaf(0, 0), **dict(zip(model.x_symbols, x)), **dict(zip(model.u_symbols, u)),
             **dict(zip(model.p_symbols, tape.leaves(3, len(model.p_symbols))))}

    def value(expr: Any) -> Any:
        try:
            return tape.from_sympy(as_expr(expr), table)
        except TypeError as error:  # a function outside the expression grammar (the quantizer's floor)
            raise InputError(f"export: model {model.name!r}: {error}: only the functions of model files' "
                             "expressions (sin ... max) have straight-line code to export; leave this block out",
                             key="model") from None

    functions: dict[str, list[Any]] = {}
    coordinates: tuple[str, ...] = ()
    if mass is not None:
        k = mass.shape[0]
        coordinates = tuple(model.coordinates)
        M = [[value(mass[i, j]) for j in range(k)] for i in range(k)]
        lower = cholesky_factor(M)
        drive = [value(forces[i]) - value(bias[i]) for i in range(k)]
        functions["f"] = [*x[k:], *cholesky_solve(lower, drive)]
        idle = {s: 0 for s in model.u_symbols}
        own = [value(forces[i].xreplace(idle)) - value(bias[i]) for i in range(k)]  # F(u = 0) - b
        a = tape.leaves(4, k)
        functions["mass"] = [e for row in M for e in row]
        functions["rnea"] = [sum((M[i][j] * a[j] for j in range(1, k)), M[i][0] * a[0]) - own[i] for i in range(k)]
        functions["aba"] = cholesky_solve(lower, [a[i] + own[i] for i in range(k)])
    else:
        functions["f"] = [value(e) for e in f]
    functions["h"] = [value(e) for e in model.h_expr]
    rows = tape.derive(functions["f"], [*x, *u])
    outputs = tape.derive(functions["h"], [*x, *u])
    functions["linearize"] = [*(e for row in rows for e in row[:n]), *(e for row in rows for e in row[n:]),
                              *(e for row in outputs for e in row[:n]), *(e for row in outputs for e in row[n:])]
    frames: dict[str, list[Any]] = {}
    k = len(coordinates)
    zero, one = tape.const(0.0), tape.const(1.0)
    for name, point in (points or {}).items():
        position = [value(e) for e in point]
        linear = tape.derive(position, x[:k])
        rotation = [one if r == c else zero for r in range(3) for c in range(3)]
        frames[name] = [*position, *rotation, *(e for row in linear for e in row), *([zero] * (3 * k))]
    return ExportedFunctions(tape, functions, frames, coordinates)
