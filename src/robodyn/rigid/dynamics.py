"""The numeric functions of a rigid-body model, as outputs of one straight-line tape.

:func:`manipulator_program` records, for a tree of bodies with joint terms (friction, springs, rotor
inertia) and generalized forces, everything the numeric path of a second-order model needs:

==================  ===================================================================  ===========
function            outputs                                                              shape
==================  ===================================================================  ===========
``rhs``             x' = [q', q''], q'' = M(q)^-1 (Q - c) by a Cholesky solve              (2n,)
``jacobians``       A = df/dx and B = df/du, row-major, one after the other               (2n(2n+m),)
``mass``            M(q), row-major                                                      (n*n,)
``terms``           Q - c, then c, then d(Q - c)/du row-major                             (2n + n*m,)
``inverse``         ID(q, q', a) + joint terms, with the accelerations a as argument ``a``  (n,)
``mass_derivative`` dM_ij/dq_k at [i, j, k], row-major                                    (n^3,)
``com``             centres of mass of the bodies in the base frame                       (n*3,)
==================  ===================================================================  ===========

A and B follow the manipulator formula without a symbolic inverse: with r(q, q', q'', u) =
ID(q, q', q'') + joint terms - Q and q'' the forward-dynamics acceleration, A21 = -M^-1 dr/dq,
A22 = -M^-1 dr/dq', B2 = -M^-1 dr/du, the derivatives taken by forward mode with q'' held fixed.

Arguments of every function, in the tape's leaf numbering: ``t`` (0), ``x`` (1), ``u`` (2), ``p`` (3),
``a`` (4). Coordinates are in model order; ``order`` maps body k to its coordinate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from robodyn.rigid.rnea import Body, centres_of_mass, cholesky_factor, cholesky_solve, mass_columns, rnea
from robodyn.rigid.tape import Tape, Value

__all__ = ["FUNCTIONS", "JointTerms", "Program", "manipulator_program"]

FUNCTIONS = ("rhs", "jacobians", "mass", "terms", "inverse", "mass_derivative", "com")


@dataclass(frozen=True, slots=True)
class JointTerms:
    """Joint i's terms added to inverse dynamics: G^2 I_r q'' + b q' + friction(q') + k (q - rest)."""

    rotor: Value  # G^2 I_r, the reflected rotor inertia
    damping: Value
    friction: Callable[[Value], Value]  # q' -> friction force
    stiffness: Value
    rest: Value

    def force(self, q: Value, qd: Value, qdd: Value) -> Value:
        return self.rotor * qdd + self.damping * qd + self.friction(qd) + self.stiffness * (q - self.rest)


@dataclass(frozen=True, slots=True)
class Program:
    """A tape and the outputs of each of its functions (see the module docstring)."""

    tape: Tape
    outputs: dict[str, list[Value]]
    mass: list[list[Value]]  # M(q) in model order, for closed forms
    bias: list[Value]  # c(q, q') in model order


def manipulator_program(tape: Tape, bodies: Sequence[Body], order: Sequence[int], x: Sequence[Value],
                        u: Sequence[Value], a: Sequence[Value], gravity: Sequence[Value],
                        joints: Sequence[JointTerms], forces: Sequence[Value]) -> Program:
    """Record every function of a tree of ``bodies`` on ``tape``.

    ``bodies`` are parent-first; body k moves coordinate ``order[k]``. ``x`` (2n,), ``u`` (m,) and ``a``
    (n,) are the leaves of the state, inputs and accelerations; ``joints`` and ``forces`` (Q) are in
    model order.
    """
    n = len(order)
    q, qd = list(x[:n]), list(x[n:])
    zero = tape.const(0.0)

    def by_body(values: Sequence[Value]) -> list[Value]:
        return [values[i] for i in order]

    def by_coordinate(values: Sequence[Value]) -> list[Value]:
        result = [zero] * n
        for k, i in enumerate(order):
            result[i] = values[k]
        return result

    def inverse(accelerations: Sequence[Value], velocities: Sequence[Value], g: Sequence[Value]) -> list[Value]:
        tau = by_coordinate(rnea(tape, bodies, by_body(q), by_body(velocities), by_body(accelerations), g))
        return [tau[i] + joints[i].force(q[i], velocities[i], accelerations[i]) for i in range(n)]

    columns = mass_columns(tape, bodies, by_body(q))
    mass = [[zero] * n for _ in range(n)]
    for k, i in enumerate(order):
        for k2, j in enumerate(order):
            mass[i][j] = columns[k][k2]
    for i in range(n):
        mass[i][i] = mass[i][i] + joints[i].rotor
    bias = inverse([zero] * n, qd, gravity)
    rhs = [forces[i] - bias[i] for i in range(n)]
    lower = cholesky_factor(mass)
    acceleration = cholesky_solve(lower, rhs)
    residual = [tau - f for tau, f in zip(inverse(acceleration, qd, gravity), forces)]
    variables = [*x, *u]
    derivatives = tape.derive(residual, variables, hold=acceleration)
    solved = [cholesky_solve(lower, [-derivatives[i][k] for i in range(n)]) for k in range(len(variables))]
    one = tape.const(1.0)
    a_matrix = [[one if j == i + n else zero for j in range(2 * n)] for i in range(n)]
    a_matrix += [[solved[k][i] for k in range(2 * n)] for i in range(n)]
    b_matrix = [[zero] * len(u) for _ in range(n)] + [[solved[2 * n + k][i] for k in range(len(u))]
                                                     for i in range(n)]
    input_jacobian = tape.derive(rhs, list(u)) if len(u) else [[] for _ in range(n)]
    mass_flat = [e for row in mass for e in row]
    mass_derivative = tape.derive(mass_flat, q)
    outputs = {
        "rhs": [*qd, *acceleration],
        "jacobians": [e for row in a_matrix for e in row] + [e for row in b_matrix for e in row],
        "mass": mass_flat,
        "terms": [*rhs, *bias, *(e for row in input_jacobian for e in row)],
        "inverse": inverse(a, qd, gravity),
        "mass_derivative": [e for row in mass_derivative for e in row],
        "com": [e for c in by_coordinate_vectors(centres_of_mass(tape, bodies, by_body(q)), order) for e in c],
    }
    return Program(tape, outputs, mass, bias)


def by_coordinate_vectors(vectors: Sequence[list[Value]], order: Sequence[int]) -> list[list[Value]]:
    """Per-body vectors reordered to model (coordinate) order."""
    result: list[list[Value]] = [[] for _ in order]
    for k, i in enumerate(order):
        result[i] = vectors[k]
    return result
