"""The numeric functions of a rigid-body model, as outputs of one straight-line tape.

:class:`ManipulatorProgram` records, for a tree of bodies with joint terms (friction, springs, rotor
inertia) and generalized forces, everything the numeric path of a second-order model needs:

==================  ===================================================================  ===========
function            outputs                                                              shape
==================  ===================================================================  ===========
``rhs``             x' = [q', q'']: q'' by the articulated-body algorithm (robodyn.rigid.aba)  (2n,)
                    or, with mimic joints, M(q)^-1 (Q - c) by a Cholesky solve
``jacobians``       the factor L of M leaves first, then dr/d[x, u] in its order (below)   (n*n + n(2n+m),)
``solved_jacobians`` A = df/dx and B = df/du, row-major (small n: the solves on the tape)  (2n(2n+m),)
``mass``            M(q), row-major                                                      (n*n,)
``terms``           Q - c, then c, then d(Q - c)/du row-major                             (2n + n*m,)
``inverse``         ID(q, q', a) + joint terms, with the accelerations a as argument ``a``  (n,)
``mass_derivative`` dM_ij/dq_k at [i, j, k], row-major                                    (n^3,)
``com``             centres of mass of the bodies in the base frame, body order          (bodies*3,)
``regressor``       Y with ``inverse`` = Y theta over ``regressor_columns``, row-major   (n*P,)
``standard_parameters`` theta, the values of those columns (robodyn.rigid.regressor)    (P,)
``parameter_jacobian`` df/dp: zeros for q' = q_dot, then da/dp = -M^-1 dr/dp (below)     (2n*n_p,)
==================  ===================================================================  ===========

df/dp follows the same idea with the parameter leaves ``p`` (argument 3) as the variables: dr/dp by forward mode on
the tape at the held acceleration, then da/dp = -M^-1 dr/dp by the tree's factor on the tape.

A and B follow the manipulator formula without a symbolic inverse: with r(q, q', q'', u) =
ID(q, q', q'') + joint terms - Q and q'' the forward-dynamics acceleration, A21 = -M^-1 dr/dq,
A22 = -M^-1 dr/dq', B2 = -M^-1 dr/du, with q'' held fixed: the bodies' part of dr/dz by the analytical
derivatives of inverse dynamics (robodyn.rigid.derivatives), the joint terms' and Q's by forward mode on the
tape; the tape gives the factor L of M and dr/dz, the caller solves (O(n^2) nodes on the tape, not O(n^3)).
M is the composite-rigid-body algorithm's (robodyn.rigid.derivatives.WorldTree.mass). L is the Cholesky factor
of M taken leaves first (robodyn.rigid.rnea.TreeFactor: no fill-in, so that its structural zeros are the tree's)
and dr/dz's rows come in the same order, ``factor_order``: row k is coordinate ``factor_order[k]``'s; the caller's
solve (robodyn.codegen.linalg.tree_solve) visits only ``factor_pattern``'s entries and writes the rows back in
model order.

Arguments of every function, in the tape's leaf numbering: ``t`` (0), ``x`` (1), ``u`` (2), ``p`` (3),
``a`` (4). Coordinates are in model order; body k moves as ``multiplier * q[coordinate] + offset``
(``couplings[k]``): one body per coordinate, and mimic joints coupled to another one (the generalized
force of a coordinate then collects the multiplier times each coupled body's joint force).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from robodyn.rigid.aba import articulated_accelerations
from robodyn.rigid.derivatives import WorldTree
from robodyn.rigid.regressor import INERTIAL, inertial_regressor, standard_parameters
from robodyn.rigid.rnea import Body, TreeFactor, centres_of_mass, check_one_coordinate, rnea
from robodyn.rigid.tape import Tape, Value

__all__ = ["FUNCTIONS", "Coulomb", "JointTerms", "ManipulatorProgram", "TreeProgram"]

FUNCTIONS = ("rhs", "jacobians", "solved_jacobians", "mass", "terms", "inverse", "mass_derivative", "com", "regressor",
             "standard_parameters", "parameter_jacobian")
SOLVE_LIMIT = 16  # Coordinates (velocities) up to which solved_jacobians solves on the tape; above, the tape gives
# the factor and dr/dz and a compiled sparse solve (robodyn.codegen.linalg.tree_solve) does the rest. Measured per
# linearize (bench_trees, one run): solo12 fixed (12) 3.4 us on the tape against 4.2 us factored, solo12 and anymal
# floating (18) 10.6-10.8 us against 8.6-9.1 us.


@dataclass(frozen=True, slots=True)
class Coulomb:
    """A joint's smoothed Coulomb friction F(v) = r s + b s^2 with s = tanh(v / eps): r = (Tc+ - Tc-)/2 and
    b = (Tc+ + Tc-)/2 for the friction Tc+ moving forward and Tc- moving back (symmetric: b = 0, F = F_c s)."""

    half_range: Value  # r
    half_bias: Value  # b
    smoothing: float  # eps, a velocity

    def shape(self, velocity: Value) -> Value:
        """s = tanh(v / eps)."""
        return (velocity / self.smoothing).tanh()

    def __call__(self, velocity: Value) -> Value:
        s = self.shape(velocity)
        return self.half_range * s + self.half_bias * s * s


@dataclass(frozen=True, slots=True)
class JointTerms:
    """Joint i's terms added to inverse dynamics: G^2 I_r q'' + b q' + friction(q') + k (q - rest)."""

    rotor: Value  # G^2 I_r, the reflected rotor inertia
    damping: Value
    friction: Coulomb  # q' -> friction force
    stiffness: Value
    rest: Value

    def force(self, q: Value, qd: Value, qdd: Value) -> Value:
        return self.rotor * qdd + self.damping * qd + self.friction(qd) + self.stiffness * (q - self.rest)


class TreeProgram:
    """What the programs of a tree share (robodyn.rigid.floating builds on it too): the functions recorded on demand
    by name, and the bodies' motion from the coordinates through their couplings.

    Subclasses set ``tape``, ``couplings``, ``q``, ``qd``, ``joints``, ``forces``, ``n``, ``zero``, ``world`` (the
    bodies for M and the derivatives of inverse dynamics) and ``nb`` (a moving base's velocity entries, 0 for a
    fixed base), and list their functions in ``functions``; function ``name`` is the method ``_<name>``. A moving
    base may carry generalized forces of its own, ``base_forces`` (``nb``: contact forces on its links).
    """

    functions: tuple[str, ...] = ()
    tape: Tape
    couplings: list[tuple[int, Value, Value]]
    q: list[Value]
    qd: list[Value]
    joints: list[JointTerms]
    forces: list[Value]
    n: int
    nb: int = 0
    base_forces: list[Value] | None = None
    zero: Value
    _recorded: dict[str, list[Value]]

    def outputs(self, name: str) -> list[Value]:
        """The output values of function ``name`` (one of ``functions``)."""
        if name not in self.functions:
            raise KeyError(f"no function {name!r} on a {type(self).__name__}: one of {', '.join(self.functions)}")
        if name not in self._recorded:
            self._recorded[name] = getattr(self, f"_{name}")()
        return self._recorded[name]

    def _positions(self) -> list[Value]:
        """The bodies' joint coordinates: multiplier q[coordinate] + offset."""
        return [a * self.q[c] + b for c, a, b in self.couplings]

    def _motion(self, values: Sequence[Value]) -> list[Value]:
        """Velocities or accelerations of the bodies' joints from the coordinates' ones."""
        return [a * values[c] for c, a, _ in self.couplings]

    def _generalized(self, values: Sequence[Value]) -> list[Value]:
        """The coordinates' forces from the bodies' joint forces (each coupled body adds multiplier times its own)."""
        result: list[Value] = [self.zero] * self.n
        for (c, a, _), value in zip(self.couplings, values):
            result[c] = result[c] + a * value
        return result

    def _coordinate_matrix(self, matrix: Sequence[Sequence[Value]], nb: int) -> list[list[Value]]:
        """G^T X G: a matrix over the bodies' velocities (``nb`` base entries, then one per body, as
        robodyn.rigid.derivatives) over the coordinates' (``nb``, then ``n``), each coupled body's row and column
        times its multiplier."""
        index = list(range(nb)) + [nb + c for c, _, _ in self.couplings]
        scale: list[Value | None] = [None] * nb + [a for _, a, _ in self.couplings]
        size = nb + self.n
        result = [[self.zero] * size for _ in range(size)]
        for i, row in enumerate(matrix):
            for j, value in enumerate(row):
                if scale[i] is not None:
                    value = scale[i] * value
                if scale[j] is not None:
                    value = value * scale[j]
                result[index[i]][index[j]] = result[index[i]][index[j]] + value
        return result

    def velocities(self) -> list[Value]:
        """The velocity leaves: the base's entries (``nb``), then the coordinates' rates."""
        return list(self.qd)

    def applied(self) -> list[Value]:
        """Q over the velocities: a moving base's entries (``base_forces``, else none), then the coordinates'."""
        return [*(self.base_forces or [self.zero] * self.nb), *self.forces]

    @functools.cached_property
    def held_acceleration(self) -> list[Value]:
        """The forward-dynamics acceleration at which the Jacobians are taken, ``(nb + n,)``: M^-1 (Q - c) by the
        leaves-first factor the Jacobians give anyway (O(n depth) nodes), the bias c by the world-frame recursion
        (its velocity terms the derivatives' own: the tape records them once) — fewer nodes than the
        articulated-body algorithm's, the same accelerations to rounding."""
        nb, velocity = self.nb, self.velocities()
        zeros = [self.zero] * (nb + len(self.couplings))
        tau = self.world.inverse([*velocity[:nb], *self._motion(velocity[nb:])], zeros)
        bias = [*tau[:nb], *self._generalized(tau[nb:])]
        for i in range(self.n):
            bias[nb + i] = bias[nb + i] + self.joints[i].force(self.q[i], velocity[nb + i], self.zero)
        return self.tree.solve([f - c for f, c in zip(self.applied(), bias)])

    def residual_jacobian(self, velocity: Sequence[Value], acceleration: Sequence[Value],
                          variables: Sequence[Value]) -> list[list[Value]]:
        """dr/dz ``(nb + n, len(variables))`` of r = ID + joint terms - Q at ``velocity`` and the held
        ``acceleration`` (``nb + n`` each, the base's entries first): the bodies' part analytically (columns: the
        tangent of the configuration, ``nb + n``, then the velocities, then the rest of ``variables``, untouched),
        the joint terms' and Q's by forward mode over ``variables``, which are the configuration's tangent leaves,
        the velocities' and the rest, in that order."""
        world, nb, configuration = self.world, self.nb, self.q
        body_v = [*velocity[:nb], *self._motion(velocity[nb:])]
        body_a = [*acceleration[:nb], *self._motion(acceleration[nb:])]
        derivatives = world.inverse_derivatives(body_v, body_a)
        dq = self._coordinate_matrix(derivatives.dq, nb)
        dv = self._coordinate_matrix(derivatives.dv, nb)
        extra = [self.joints[i].force(configuration[i], velocity[nb + i], acceleration[nb + i]) - self.forces[i]
                 for i in range(self.n)]
        first = 0 if self.base_forces else nb  # the rows with forward-mode terms: the base's too when it has forces
        if self.base_forces:
            extra = [-f for f in self.base_forces] + extra
        local = self.tape.derive(extra, variables, hold=acceleration)
        size, rest = nb + self.n, len(variables) - 2 * (nb + self.n)
        rows = [[*dq[i], *dv[i], *([self.zero] * rest)] for i in range(size)]
        for i in range(size - first):
            rows[first + i] = [a + b for a, b in zip(rows[first + i], local[i])]
        return rows

    def _one_to_one(self) -> bool:
        """Whether every body has a coordinate of its own (no mimic joint): the articulated-body algorithm applies."""
        constant = self.tape.constant_of
        return (len({c for c, _, _ in self.couplings}) == len(self.couplings) == self.n
                and all(constant(a) == 1.0 and constant(b) == 0.0 for _, a, b in self.couplings))

    def _body_terms(self) -> tuple[list[int], list[Value], list[Value], list[Value], list[Value]]:
        """Per body (one-to-one): its coordinate, q, q', the net joint force (Q minus friction, springs and
        damping) and the reflected rotor inertia, the arguments of robodyn.rigid.aba."""
        order = [c for c, _, _ in self.couplings]
        tau = [self.forces[c] - self.joints[c].force(self.q[c], self.qd[c], self.zero) for c in order]
        return (order, [self.q[c] for c in order], [self.qd[c] for c in order], tau,
                [self.joints[c].rotor for c in order])

    @functools.cached_property
    def mass(self) -> list[list[Value]]:
        """M, in the order of the velocities (each program records its own)."""
        raise NotImplementedError

    @functools.cached_property
    def world(self) -> WorldTree:
        """The bodies in one frame (robodyn.rigid.derivatives) for M and the derivatives of inverse dynamics."""
        raise NotImplementedError

    @functools.cached_property
    def tree(self) -> TreeFactor:
        """M factored leaves first (robodyn.rigid.rnea.TreeFactor): the solves keep the tree's zeros."""
        return TreeFactor(self.mass, self._tree_order())

    @property
    def factor_order(self) -> list[int]:
        """The coordinates (velocities) in the order of the factor's rows: ``jacobians``' row k is ``order[k]``'s."""
        return self.tree.order

    def factor_pattern(self) -> tuple[list[int], list[int]]:
        """The factor's entries below the diagonal that are not constant zeros, row by row (CSR): row k's columns
        are ``columns[starts[k]:starts[k + 1]]``, increasing."""
        constant = self.tape.constant_of
        starts, columns = [0], []
        for k, row in enumerate(self.tree.lower):
            columns += [j for j in range(k) if constant(row[j]) != 0.0]
            starts.append(len(columns))
        return starts, columns

    def factored(self, rows: Sequence[Sequence[Value]]) -> list[Value]:
        """The ``jacobians`` layout: the factor L row-major (zeros above the diagonal), then ``rows`` (one per
        velocity, model order) in the factor's order, row-major."""
        lower, size = self.tree.lower, len(self.tree.order)
        factor = [lower[i][j] if j <= i else self.zero for i in range(size) for j in range(size)]
        return factor + [e for c in self.tree.order for e in rows[c]]

    def _tree_order(self) -> list[int]:
        """The coordinates from the tree's leaves to its root (the bodies' order reversed)."""
        order: list[int] = []
        for c, _, _ in reversed(self.couplings):
            if c not in order:
                order.append(c)
        return order + [c for c in range(self.n) if c not in order]

    def _by_coordinate(self, order: Sequence[int], per_body: Sequence[Value]) -> list[Value]:
        result = [self.zero] * self.n
        for k, c in enumerate(order):
            result[c] = per_body[k]
        return result


class ManipulatorProgram(TreeProgram):
    """Every function of a tree of bodies (see the module docstring), recorded on one tape on demand.

    ``bodies`` are parent-first; body k moves as ``couplings[k] = (coordinate, multiplier, offset)``. ``x``
    (2n,), ``u`` (m,) and ``a``
    (n,) are the leaves of the state, inputs and accelerations; ``joints`` and ``forces`` (Q) are in
    model order. Each function's outputs are recorded the first time :meth:`outputs` is asked for them,
    so a model that is only linearized never records its centres of mass.
    """

    def __init__(self, tape: Tape, bodies: Sequence[Body], couplings: Sequence[tuple[int, Value, Value]],
                 x: Sequence[Value], u: Sequence[Value], a: Sequence[Value], gravity: Sequence[Value],
                 joints: Sequence[JointTerms], forces: Sequence[Value], parameters: Sequence[Value] = ()):
        check_one_coordinate(bodies, "ManipulatorProgram")
        self.tape, self.bodies, self.couplings = tape, list(bodies), list(couplings)
        self.p = list(parameters)  # the parameter leaves, the variables of ``parameter_jacobian``
        self.x, self.u, self.a, self.gravity = list(x), list(u), list(a), list(gravity)
        self.joints, self.forces = list(joints), list(forces)
        self.n = len(joints)
        self.q, self.qd = self.x[: self.n], self.x[self.n:]
        self.zero, self.one = tape.const(0.0), tape.const(1.0)
        self._recorded: dict[str, list[Value]] = {}

    functions = FUNCTIONS

    # --- building blocks ------------------------------------------------------------------------------
    def inverse(self, accelerations: Sequence[Value], velocities: Sequence[Value], gravity: Sequence[Value]
                ) -> list[Value]:
        """ID(q, q', q'') plus the joint terms, in model order."""
        tau = self._generalized(rnea(self.tape, self.bodies, self._positions(), self._motion(velocities),
                                     self._motion(accelerations), gravity))
        return [tau[i] + self.joints[i].force(self.q[i], velocities[i], accelerations[i]) for i in range(self.n)]

    @functools.cached_property
    def world(self) -> WorldTree:
        """The bodies in the base frame (robodyn.rigid.derivatives): M and the derivatives of inverse dynamics."""
        return WorldTree(self.tape, self.bodies, self._positions(), self.gravity)

    @functools.cached_property
    def mass(self) -> list[list[Value]]:
        """M(q) in model order, rotor inertias on the diagonal (the composite-rigid-body algorithm)."""
        mass = self._coordinate_matrix(self.world.mass, 0)
        for i in range(self.n):
            mass[i][i] = mass[i][i] + self.joints[i].rotor
        return mass

    @functools.cached_property
    def bias(self) -> list[Value]:
        """c(q, q') = ID(q, q', 0) with gravity and the joint terms."""
        return self.inverse([self.zero] * self.n, self.qd, self.gravity)

    @functools.cached_property
    def rhs(self) -> list[Value]:
        """Q - c."""
        return [f - c for f, c in zip(self.forces, self.bias)]


    @functools.cached_property
    def acceleration(self) -> list[Value]:
        """q'': by the articulated-body algorithm (robodyn.rigid.aba, O(n) nodes) when every body has a coordinate
        of its own, else (mimic joints) M^-1 (Q - c) by M's Cholesky factor (O(n^3))."""
        if self._one_to_one():
            order, q, qd, tau, armature = self._body_terms()
            qdd, _ = articulated_accelerations(self.tape, self.bodies, q, qd, tau, armature, self.gravity)
            return self._by_coordinate(order, qdd)
        return self.tree.solve(self.rhs)

    # --- the functions ----------------------------------------------------------------------------------
    def _rhs(self) -> list[Value]:
        return [*self.qd, *self.acceleration]

    def _jacobians(self) -> list[Value]:
        """L, the Cholesky factor of M (row-major, zeros above the diagonal), then dr/d[x, u] (n, 2n + m)
        with r = ID(q, q', q'') + joint terms - Q at the forward-dynamics q'' (held fixed).

        The solves M^-1 dr/dz are left to the caller (the lean paths' factored solve,
        :mod:`robodyn.codegen.llvm.solve`): on the tape they would cost (2n + m) n^2 nodes, against the n^3/6 of the
        factor itself.
        """
        return self.factored(self.residual_rows)

    @functools.cached_property
    def residual_rows(self) -> list[list[Value]]:
        """dr/d[x, u] ``(n, 2n + m)`` in model order (:meth:`residual_jacobian`)."""
        return self.residual_jacobian(self.qd, self.held_acceleration, [*self.x, *self.u])

    def _solved_jacobians(self) -> list[Value]:
        """A then B, row-major, the solves on the tape (for up to :data:`SOLVE_LIMIT` coordinates)."""
        n, m = self.n, len(self.u)
        g = self.residual_rows
        solved = [self.tree.solve([-g[i][k] for i in range(n)]) for k in range(2 * n + m)]
        rows = [[self.one if j == i + n else self.zero for j in range(2 * n)] for i in range(n)]
        rows += [[solved[k][i] for k in range(2 * n)] for i in range(n)]
        inputs = [[self.zero] * m for _ in range(n)] + [[solved[2 * n + k][i] for k in range(m)] for i in range(n)]
        return [e for row in rows for e in row] + [e for row in inputs for e in row]

    def _mass(self) -> list[Value]:
        return [e for row in self.mass for e in row]

    def _terms(self) -> list[Value]:
        input_jacobian = self.tape.derive(self.rhs, self.u) if self.u else []
        return [*self.rhs, *self.bias, *(e for row in input_jacobian for e in row)]

    def _inverse(self) -> list[Value]:
        return self.inverse(self.a, self.qd, self.gravity)

    def _mass_derivative(self) -> list[Value]:
        return [e for row in self.tape.derive(self._mass(), self.q) for e in row]

    def _parameter_jacobian(self) -> list[Value]:
        """df/dp ``(2n, n_p)`` row-major: zeros for q' = q_dot, then da/dp = -M^-1 dr/dp with r = ID + joint terms - Q
        differentiated by forward mode with the forward-dynamics acceleration held fixed (the manipulator formula of
        ``solved_jacobians``, with the parameter leaves as the variables)."""
        held, k = self.held_acceleration, len(self.p)
        residual = [c - f for c, f in zip(self.inverse(held, self.qd, self.gravity), self.forces)]
        rows = self.tape.derive(residual, self.p, hold=held) if k else [[] for _ in range(self.n)]
        solved = [self.tree.solve([-rows[i][c] for i in range(self.n)]) for c in range(k)]
        return [self.zero] * (self.n * k) + [solved[c][i] for i in range(self.n) for c in range(k)]

    def _com(self) -> list[Value]:
        """The bodies' centres of mass, in body (parent-first) order."""
        return [e for c in centres_of_mass(self.tape, self.bodies, self._positions()) for e in c]

    @functools.cached_property
    def regressor_columns(self) -> list[tuple[str, int, str]]:
        """What each column of ``regressor`` multiplies: ``("body", k, name)`` for body k's standard parameters
        (robodyn.rigid.regressor.INERTIAL, bodies parent-first), then ``("joint", i, term)`` for coordinate i's
        joint terms: ``armature`` (q''), ``viscous`` (q'), ``coulomb`` (s = tanh(q'/eps)), and where the joint has
        them ``coulomb_offset`` (s^2: friction that differs forward and back) and ``stiffness`` (q - rest)."""
        columns = [("body", k, name) for k in range(len(self.bodies)) for name in INERTIAL]
        constant = self.tape.constant_of
        for i, joint in enumerate(self.joints):
            columns += [("joint", i, "armature"), ("joint", i, "viscous"), ("joint", i, "coulomb")]
            if constant(joint.friction.half_bias) != 0.0:
                columns.append(("joint", i, "coulomb_offset"))
            if constant(joint.stiffness) != 0.0:
                columns.append(("joint", i, "stiffness"))
        return columns

    def _regressor(self) -> list[Value]:
        """Y (n, P) row-major: ``inverse`` = Y theta, the bodies' columns by robodyn.rigid.regressor (each body's
        row carried to its coordinate through the couplings), the joint terms' from the coordinates."""
        bodies = inertial_regressor(self.tape, self.bodies, self._positions(), self._motion(self.qd),
                                    self._motion(self.a), self.gravity)
        inertial = len(self.bodies) * len(INERTIAL)
        by_coordinate = [self._generalized([row[k] for row in bodies]) for k in range(inertial)]
        rows = [[column[i] for column in by_coordinate] for i in range(self.n)]
        for _, i, term in self.regressor_columns[inertial:]:
            value = self._joint_column(i, term)
            for c in range(self.n):
                rows[c].append(value if c == i else self.zero)
        return [e for row in rows for e in row]

    def _joint_column(self, i: int, term: str) -> Value:
        """What coordinate i's joint term ``term`` multiplies (its column of ``regressor`` in row i)."""
        joint, qd = self.joints[i], self.qd[i]
        if term == "armature":
            return self.a[i]
        if term == "viscous":
            return qd
        if term == "stiffness":
            return self.q[i] - joint.rest
        s = joint.friction.shape(qd)
        return s if term == "coulomb" else s * s  # coulomb_offset

    def _standard_parameters(self) -> list[Value]:
        """theta over ``regressor_columns``: the bodies' standard parameters, then the joint terms' coefficients."""
        values = [e for body in self.bodies for e in standard_parameters(body)]
        for _, i, term in self.regressor_columns[len(values):]:
            joint = self.joints[i]
            values.append({"armature": joint.rotor, "viscous": joint.damping, "coulomb": joint.friction.half_range,
                           "coulomb_offset": joint.friction.half_bias, "stiffness": joint.stiffness}[term])
        return values
