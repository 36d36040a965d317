"""The numeric functions of a fixed-base tree whose joints may have several entries (ball joints), on one tape.

:class:`FlatTreeProgram` is :class:`robodyn.rigid.dynamics.ManipulatorProgram`'s counterpart for a tree with a ball
(spherical) joint among its revolute and prismatic ones: the state is ``x = [q (nq), v (nv)]``, flat in body order
(robodyn.rigid.rnea.tree_offsets), each body's own joint (robodyn.rigid.joints), no mimic couplings. Its functions,
by the names and layouts of ManipulatorProgram's (n read as nv where a vector is over the velocities):

==================  ===================================================================  ===========
function            outputs                                                              shape
==================  ===================================================================  ===========
``rhs``             x' = [q', v']: q' each joint's configuration derivative (a ball's     (nq + nv,)
                    1/2 q (x) (w, 0)), v' by the articulated-body algorithm
``mass``            M(q) over the velocities, row-major (the composite-rigid-body         (nv*nv,)
                    algorithm, the reflected rotor inertias on the diagonal)
``terms``           Q - c, then c, then d(Q - c)/du row-major                             (2nv + nv*m,)
``inverse``         ID(q, v, a) + joint terms, with the accelerations a as argument ``a`` (nv,)
``com``             centres of mass of the bodies in the base frame, body order           (bodies*3,)
==================  ===================================================================  ===========

The joint terms (robodyn.rigid.dynamics.JointTerms) are one per velocity entry: a ball's three share its damping and
rotor inertia (MuJoCo's ``damping`` and ``armature`` act per degree of freedom); a ball has no spring or friction
term here (its ``q`` argument is a constant zero). The other functions of ManipulatorProgram (the exact Jacobians,
dM/dq, the regressor, df/dp) are not recorded for such a tree: :meth:`FlatTreeProgram.outputs` refuses them in one
line that names the ball joint.

Reference: R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, sections 4.4 (multi-degree-of-freedom
joints), 5.3 (RNEA), 6.2 (CRBA), 7.3 (ABA).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from robodyn.base.errors import InputError
from robodyn.rigid.aba import articulated_accelerations
from robodyn.rigid.derivatives import WorldTree
from robodyn.rigid.dynamics import JointTerms
from robodyn.rigid.rnea import Body, centres_of_mass, joint_of, rnea, tree_offsets
from robodyn.rigid.tape import Tape, Value

__all__ = ["FLAT_FUNCTIONS", "REFUSED", "FlatTreeProgram"]

FLAT_FUNCTIONS = ("rhs", "mass", "terms", "inverse", "com")
_T = TypeVar("_T")
#: What ManipulatorProgram's other functions are for, in the refusals' words.
REFUSED = {"jacobians": "the exact Jacobian (linearize, implicit integrators)",
           "solved_jacobians": "the exact Jacobian (linearize, implicit integrators)",
           "mass_derivative": "dM/dq (the Coriolis matrix)", "regressor": "the torque regressor (identification)",
           "standard_parameters": "the torque regressor (identification)",
           "parameter_jacobian": "df/dp (sensitivities)"}


class FlatTreeProgram:
    """The functions of a fixed-base tree of any joints (see the module docstring), recorded on demand.

    ``bodies`` parent-first, each with its joint; ``x`` ``(nq + nv,)``, ``u`` ``(m,)``, ``a`` ``(nv,)`` the leaves of
    the state, inputs and accelerations; ``joints`` (JointTerms) and ``forces`` (Q) one per velocity entry; all in
    the model's order of joints, which ``order`` relates to the bodies' (body k is the model's joint ``order[k]``;
    None: the same order); every output is in the model's order too (``com`` in the bodies'). ``refusal`` ends the
    one-line message of a function this program does not record (it names the ball joint and says what to do).
    """

    functions = FLAT_FUNCTIONS

    def __init__(self, tape: Tape, bodies: Sequence[Body], x: Sequence[Value], u: Sequence[Value],
                 a: Sequence[Value], gravity: Sequence[Value], joints: Sequence[JointTerms], forces: Sequence[Value],
                 refusal: str, order: Sequence[int] | None = None):
        self.tape, self.bodies, self.refusal = tape, list(bodies), refusal
        starts_q, starts_v = tree_offsets(self.bodies)
        self.starts_q, self.starts_v = starts_q, starts_v
        self.nq, self.nv = starts_q[-1], starts_v[-1]
        if len(x) != self.nq + self.nv or len(a) != self.nv or len(joints) != self.nv or len(forces) != self.nv:
            raise ValueError(f"FlatTreeProgram: x must have nq + nv = {self.nq + self.nv} leaves, a, joints and "
                             f"forces nv = {self.nv}")
        self.q_map, self.v_map = _entry_maps(self.bodies, list(range(len(self.bodies))) if order is None else order)
        x, q_map, v_map = list(x), self.q_map, self.v_map
        self.x, self.u, self.gravity = x, list(u), list(gravity)
        self.q = [x[i] for i in q_map]  # the tree's (body order) entries from the model's
        self.qd = [x[self.nq + i] for i in v_map]
        self.a = [a[i] for i in v_map]
        self.joints, self.forces = [joints[i] for i in v_map], [forces[i] for i in v_map]
        self.zero = tape.const(0.0)
        self._recorded: dict[str, list[Value]] = {}
        # the configuration entry a velocity entry's spring reads: a one-coordinate joint's own, none for a ball
        self._spring_q: list[Value] = []
        for k, body in enumerate(self.bodies):
            joint = joint_of(body)
            own = self.q[starts_q[k]] if joint.nq == 1 else self.zero
            self._spring_q += [own] * joint.nv

    def outputs(self, name: str) -> list[Value]:
        """The output values of function ``name`` (one of ``functions``); InputError for another function of
        ManipulatorProgram (the message ends with ``refusal``)."""
        if name not in self.functions:
            what = REFUSED.get(name, f"the function {name!r}")
            raise InputError(f"{what} is not built for a tree with a ball joint yet: {self.refusal}")
        if name not in self._recorded:
            self._recorded[name] = getattr(self, f"_{name}")()
        return self._recorded[name]

    @property
    def factor_order(self) -> list[int]:
        """Refused: the exact Jacobians (their factor of M) are not recorded for a tree with a ball joint."""
        raise InputError(f"{REFUSED['jacobians']} is not built for a tree with a ball joint yet: {self.refusal}")

    def factor_pattern(self) -> tuple[list[int], list[int]]:
        """Refused, as :attr:`factor_order`."""
        raise InputError(f"{REFUSED['jacobians']} is not built for a tree with a ball joint yet: {self.refusal}")

    def _joint_force(self, velocities: Sequence[Value], accelerations: Sequence[Value]) -> list[Value]:
        return [terms.force(q, v, a) for terms, q, v, a in zip(self.joints, self._spring_q, velocities, accelerations)]

    def inverse(self, accelerations: Sequence[Value], velocities: Sequence[Value]) -> list[Value]:
        """ID(q, v, v') plus the joint terms ``(nv,)``."""
        tau = rnea(self.tape, self.bodies, self.q, velocities, accelerations, self.gravity)
        return [t + f for t, f in zip(tau, self._joint_force(velocities, accelerations))]

    def configuration_rate(self) -> list[Value]:
        """q' ``(nq,)``: each joint's derivative of its configuration for its velocity entries."""
        rates: list[Value] = []
        for k, body in enumerate(self.bodies):
            q = self.q[self.starts_q[k]: self.starts_q[k + 1]]
            v = self.qd[self.starts_v[k]: self.starts_v[k + 1]]
            rates += joint_of(body).derivative(self.tape, q, v)
        return rates

    def acceleration(self) -> list[Value]:
        """v' ``(nv,)`` by the articulated-body algorithm (robodyn.rigid.aba)."""
        zeros = [self.zero] * self.nv
        tau = [f - j for f, j in zip(self.forces, self._joint_force(self.qd, zeros))]
        armature = [terms.rotor for terms in self.joints]
        qdd, _ = articulated_accelerations(self.tape, self.bodies, self.q, self.qd, tau, armature, self.gravity)
        return qdd

    def _rhs(self) -> list[Value]:
        return [*_model_order(self.configuration_rate(), self.q_map),
                *_model_order(self.acceleration(), self.v_map)]

    def _mass(self) -> list[Value]:
        mass = WorldTree(self.tape, self.bodies, self.q, self.gravity).mass
        for i, terms in enumerate(self.joints):
            mass[i][i] = mass[i][i] + terms.rotor
        rows = _model_order([_model_order(row, self.v_map) for row in mass], self.v_map)
        return [e for row in rows for e in row]

    def _terms(self) -> list[Value]:
        bias = _model_order(self.inverse([self.zero] * self.nv, self.qd), self.v_map)
        forces = _model_order(self.forces, self.v_map)
        rhs = [f - c for f, c in zip(forces, bias)]
        input_jacobian = self.tape.derive(rhs, self.u) if self.u else []
        return [*rhs, *bias, *(e for row in input_jacobian for e in row)]

    def _inverse(self) -> list[Value]:
        return _model_order(self.inverse(self.a, self.qd), self.v_map)

    def _com(self) -> list[Value]:
        return [e for c in centres_of_mass(self.tape, self.bodies, self.q) for e in c]


def _model_order(values: Sequence[_T], where: Sequence[int]) -> list[_T]:
    """Entries of the tree's (body) order put back in the model's: entry k goes to ``where[k]``."""
    result = list(values)
    for k, i in enumerate(where):
        result[i] = values[k]
    return result


def _entry_maps(bodies: Sequence[Body], order: Sequence[int]) -> tuple[list[int], list[int]]:
    """Where each configuration and velocity entry of the tree (body order) is in the model's vectors, whose joints
    come in another order: body k is the model's joint ``order[k]``."""
    sizes = {j: joint_of(body) for j, body in zip(order, bodies)}
    if sorted(sizes) != list(range(len(bodies))):
        raise ValueError(f"FlatTreeProgram: order must number the {len(bodies)} bodies' joints once each")
    start_q, start_v, q, v = {}, {}, 0, 0
    for j in range(len(bodies)):
        start_q[j], start_v[j] = q, v
        q, v = q + sizes[j].nq, v + sizes[j].nv
    q_map = [start_q[j] + e for j in order for e in range(sizes[j].nq)]
    v_map = [start_v[j] + e for j in order for e in range(sizes[j].nv)]
    return q_map, v_map
