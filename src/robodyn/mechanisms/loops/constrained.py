"""Chains with closed loops and constrained points: a tree of joints cut open, and the constraints that close it.

A four-bar linkage, a slider-crank or a parallel robot is written as a tree (each loop cut at one joint) plus
``loops``, pairs of frames that must meet, and ``constraints``, frames' points held in place or on paths c(t):

.. code-block:: yaml

    frames:
      coupler_tip: {parent: coupler, xyz: [b, 0, 0]}
      rocker_tip: {parent: rocker, xyz: [c, 0, 0]}
    loops:          # axes: world directions (x, y, z) and, for type pose, rotations (rx, ry, rz); default all
      - {name: close, frames: [coupler_tip, rocker_tip], type: point, axes: [x, z]}
    constraints:    # position: three expressions of t and the parameters, world frame
      - {frame: tip, type: point, axes: [z], position: [0, 0, 0.2]}
      - {joint: crank, position: omega * t}   # a driving constraint: the coordinate follows c(t)
    baumgarte: 10   # the stabilization rate alpha in 1/s (default DEFAULT_BAUMGARTE)

:class:`ConstrainedChain` keeps every coordinate of the tree as a state (x = [q, q'], 2n) and integrates the
index-1 dynamics of robodyn.rigid.constraints on the chain's tape, compiled: q'' from M q'' = Q - c + J^T lambda
and J q'' = gamma (Baumgarte-stabilized). Its outputs are the chain's, then the constraint forces:
``<loop>_force_x`` ... (N, on the loop's first frame along the world axis; the second frame feels the opposite)
and ``<loop>_moment_x`` ... (N m) for orientation rows; a constraint's are named after its ``name`` (default its
frame), a driven joint's ``<name>_force`` is the generalized force (N m or N) that drives it. The model
contract's ``constraints()`` gives the residuals, assembly and independent coordinates
(robodyn.mechanisms.loops.constraints.ConstraintSet), which ``simulate``, ``assemble`` and ``linearize`` ask for.

``contacts`` (robodyn.mechanisms.contact.contacts) add compliant forces of frames' points against planes to the tree's
generalized forces, with or without loops; their normal and friction forces and slip speeds follow the outputs.
Rigid ``impact`` contacts add no force: ``impacts()`` (robodyn.mechanisms.contact.impacts) gives the touchdown events,
the
impact map and the resting contacts that ``simulate`` switches between; their gaps follow the outputs. Every
contact's gap ``<name>_gap`` is a name for event expressions (robodyn.mechanisms.floating.chart.StoredSymbols).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import sympy

from robodyn.base.errors import InputError, SingularMatrixError, UnknownNameError
from robodyn.codegen.llvm.native import native_function
from robodyn.codegen.llvm.tape import llvm_ir, tape_data, tape_source
from robodyn.mechanisms.chain.system import ChainSystem
from robodyn.mechanisms.contact.contacts import (
    Contact,
    ContactSet,
    check_laws,
    contact_events,
    contact_points,
    contact_specs,
    gap_names,
    law_values,
)
from robodyn.mechanisms.loops.constraints import ConstraintSet
from robodyn.mechanisms.loops.tree import TreeMembers
from robodyn.model.expr import TIME, as_expr
from robodyn.model.protocol import ContactPoint, Impacts
from robodyn.model.system import Model, Values, Vector
from robodyn.rigid.constraints import AXES, ConstraintProgram, ConstraintRow
from robodyn.rigid.contact import ContactForces, plane_gap, plane_normal_row
from robodyn.rigid.dynamics import ManipulatorProgram
from robodyn.rigid.tape import Value, dot

__all__ = ["DEFAULT_BAUMGARTE", "ConstrainedChain", "Constraint", "Loop"]

#: Baumgarte's rate alpha (1/s): a residual left by integration error decays like exp(-alpha t). Fast against a
#: linkage's own motion (a few rad/s), slow against the integrators' steps, so it adds no stiffness that matters.
DEFAULT_BAUMGARTE: Final = 10.0
_TYPES: Final = ("point", "pose")


@dataclass(frozen=True)
class Loop:
    """Frames ``frames[0]`` and ``frames[1]`` meet along ``axes`` (default: all of the type's)."""

    name: str
    frames: tuple[str, str]
    type: str = "point"
    axes: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Constraint:
    """The origin of ``frame`` follows ``position`` (3 expressions of t and the parameters, world frame) along
    ``axes`` (default x, y, z); or coordinate ``joint`` follows ``position`` (one expression: a driving
    constraint). Named ``name`` (default the frame or the joint)."""

    frame: str | None = None
    position: Any = ()
    axes: tuple[str, ...] | None = None
    name: str | None = None
    type: str = "point"
    joint: str | None = None


def _entry(kind: Any, value: Any, where: str) -> Any:
    """A Loop or Constraint from itself or a mapping of its fields (InputError naming the fields otherwise)."""
    if isinstance(value, kind):
        return value
    fields = list(kind.__dataclass_fields__)
    if not isinstance(value, Mapping) or set(value) - set(fields):
        raise InputError(f"{where} must be a {kind.__name__} or a mapping of {', '.join(fields)}, got {value!r}",
                         key="loops")
    return kind(**value)


def _axes(where: str, kind: str, axes: Sequence[str] | None) -> list[int]:
    allowed = AXES if kind == "pose" else AXES[:3]
    chosen = list(allowed if axes is None else axes)
    bad = [a for a in chosen if a not in allowed]
    if bad or not chosen or len(set(chosen)) != len(chosen):
        raise InputError(f"{where}: axes must be distinct entries of {', '.join(allowed)}, got {list(chosen)}",
                         key="loops")
    return [AXES.index(a) for a in chosen]


class ConstrainedChain(TreeMembers, Model):
    """A chain (robodyn.mechanisms.chain.system.ChainSystem) with ``loops`` and ``constraints`` (see the module
    docstring).

    It answers the rigid-body members of its tree — ``mass_matrix``, ``inverse_dynamics``, ``bias``, ``gravity``,
    ``coriolis_matrix``, ``mass_derivative``, ``com_positions``, ``kinetic_energy``, ``potential_energy``
    (robodyn.mechanisms.loops.tree) — for every coordinate of the tree, without the constraints, at its parameters.

    Parameters
    ----------
    chain : ChainSystem
        The tree: its joints, links, frames, inputs, parameters and outputs.
    loops, constraints : sequences of :class:`Loop`, :class:`Constraint` (or mappings with their fields)
    baumgarte : float
        The stabilization rate alpha in 1/s (> 0).
    independent : sequence of str, optional
        The coordinates linearization keeps (default: chosen at each point by a pivoted QR of the constraint
        Jacobian).
    contacts : sequence of :class:`~robodyn.mechanisms.contact.contacts.Contact` (or mappings: a file's entries)
        Frames' points against planes: compliant (robodyn.rigid.contact), their forces joining the joints' Q, or
        rigid impacts (robodyn.mechanisms.contact.impacts).
    held : sequence of int
        Impact contacts (indices among them) held on their planes: the resting mode ``impacts().mode`` builds.
    """

    kind = "constrained chain"

    def __init__(self, chain: ChainSystem, loops: Sequence[Loop | Mapping[str, Any]] = (),
                 constraints: Sequence[Constraint | Mapping[str, Any]] = (), *,
                 baumgarte: float = DEFAULT_BAUMGARTE, independent: Sequence[str] | None = None,
                 name: str | None = None, contacts: Sequence[Contact | Mapping[str, Any]] = (),
                 held: Sequence[int] = ()):
        if not isinstance(chain, ChainSystem):
            raise InputError(f"ConstrainedChain: {getattr(chain, 'name', chain)!r} is not a chain: give a kind: chain "
                             "model or a URDF robot (a tree of joints and links)", key="loops")
        self.chain, self.name = chain, name or chain.name
        where = f"model {self.name!r}"
        self.loops = tuple(_entry(Loop, x, f"{where}: loop") for x in loops)
        self.constraint_list = tuple(_entry(Constraint, x, f"{where}: constraint") for x in constraints)
        if not self.loops and not self.constraint_list and not contacts:
            raise InputError(f"{where}: a constrained chain needs loops, constraints or contacts", key="loops")
        if isinstance(baumgarte, bool) or not isinstance(baumgarte, int | float) or not 0 < baumgarte < 1e6:
            raise InputError(f"{where}: baumgarte must be a rate in 1/s, 0 < alpha < 1e6, got {baumgarte!r}",
                             key="baumgarte")
        self.baumgarte = float(baumgarte)
        chain.refuse_balls("a chain with loops, constraints or contacts")
        self.coordinates, self.velocities = chain.coordinates, chain.velocities
        self.states, self.inputs, self.parameters = chain.states, chain.inputs, chain.parameters
        frames = chain.kinematics()
        self._rows: list[ConstraintRow] = []
        self.row_names: list[str] = []
        self.row_units: list[str] = []
        forces: list[str] = []
        taken: set[str] = set()
        for loop in self.loops:
            here = f"{where}: loop {loop.name!r}"
            if loop.type not in _TYPES:
                raise InputError(f"{here}: type must be point or pose, got {loop.type!r}", key="loops")
            if len(loop.frames) != 2 or loop.frames[0] == loop.frames[1]:
                raise InputError(f"{here}: frames must be two different frames, got {list(loop.frames)}", key="loops")
            a, b = (self._spec(frames, f, here) for f in loop.frames)
            self._add(loop.name, here, taken, [ConstraintRow(a, b, i) for i in _axes(here, loop.type, loop.axes)],
                      forces)
        for entry in self.constraint_list:
            label = entry.name or entry.frame or entry.joint
            here = f"{where}: constraint {label!r}"
            if (entry.frame is None) == (entry.joint is None):
                raise InputError(f"{here}: give a frame (its point held) or a joint (its coordinate driven), not "
                                 "both", key="constraints")
            if entry.joint is not None:
                if entry.joint not in self.coordinates:
                    raise UnknownNameError(f"{here}: {entry.joint!r} is not a coordinate (these are "
                                           f"{', '.join(self.coordinates)})")
                if entry.axes is not None or isinstance(entry.position, list | tuple):
                    raise InputError(f"{here}: a driven joint takes one expression of t as its position, no axes",
                                     key="constraints")
                row = ConstraintRow(None, None, 0, self._path(entry.position, here),
                                    self.coordinates.index(entry.joint))
                self._add(str(label), here, taken, [row], forces)
                continue
            if entry.type != "point":
                raise InputError(f"{here}: type must be point (a pose held in the world: a loop to a frame of the "
                                 "base link), got {entry.type!r}", key="constraints")
            spec = self._spec(frames, entry.frame, here)
            if len(entry.position) != 3:
                raise InputError(f"{here}: position must be 3 expressions of t (world frame), got "
                                 f"{list(entry.position)}", key="constraints")
            rows = [ConstraintRow(spec, None, i, self._path(entry.position[i], here))
                    for i in _axes(here, "point", entry.axes)]
            self._add(str(label), here, taken, rows, forces)
        clash = sorted(set(forces) & {*chain.outputs, *chain.states})
        if clash:
            raise InputError(f"{where}: the constraint force outputs {clash} clash with the chain's names: rename the "
                             "loop or constraint", key="loops")
        self.force_outputs = tuple(forces)
        self.contact_set: ContactSet = contact_specs(chain, contacts, where)
        self._contacts, self._contact_units = self.contact_set.specs, self.contact_set.units
        self.contact_entries = tuple(contacts)
        contact_outputs = self.contact_set.outputs
        self.contact_outputs = tuple(contact_outputs)
        taken_names = {*chain.outputs, *chain.states, *forces}
        if taken_names & set(contact_outputs):
            raise InputError(f"{where}: the contact outputs {sorted(taken_names & set(contact_outputs))} clash with "
                             "other names: rename the contact", key="contacts")
        self.outputs = (*chain.outputs, *forces, *contact_outputs)
        if len(self._rows) > chain.n_coordinates:  # as many: the motion is prescribed (driven joints), fine
            raise InputError(f"{where}: {len(self._rows)} constraint rows on {chain.n_coordinates} coordinates: some "
                             "are redundant; drop axes (a planar loop constrains two directions)", key="loops")
        self._independent = None if independent is None else tuple(independent)
        self.held = tuple(sorted(set(held)))
        for k in self.held:  # resting impact contacts: the point held on its plane along the normal
            impact = self.contact_set.impacts[k]
            zero = chain._tape_value(0)
            self._rows.append(ConstraintRow(impact.frame, None, 0, (dot(impact.point, impact.normal), zero, zero),
                                            direction=impact.normal))
            self.row_names.append(f"{impact.name}.normal")
            self.row_units.append("m")
        if self._rows and not self.held:
            self._check_assembly()

    def _spec(self, frames: Any, frame: Any, where: str) -> Any:
        if not isinstance(frame, str):
            raise InputError(f"{where}: frames are named by strings, got {frame!r}", key="loops")
        try:
            return frames.spec(frame)
        except UnknownNameError as exc:
            raise UnknownNameError(f"{where}: {exc}") from None

    def _add(self, label: str, where: str, taken: set[str], rows: list[ConstraintRow], forces: list[str]) -> None:
        if not isinstance(label, str) or not label.isidentifier() or label in taken:
            raise InputError(f"{where}: needs a unique name (letters, digits, _), got {label!r}", key="loops")
        taken.add(label)
        for row in rows:
            self._rows.append(row)
            if row.coordinate is not None:  # a driven coordinate: its generalized force
                unit = self.chain.units()[self.coordinates[row.coordinate]]
                self.row_names.append(label)
                self.row_units.append(unit)
                forces.append(f"{label}_force")
                continue
            axis = AXES[row.axis]
            self.row_names.append(f"{label}.{axis}")
            self.row_units.append("m" if row.axis < 3 else "rad")
            forces.append(f"{label}_force_{axis}" if row.axis < 3 else f"{label}_moment_{axis[1]}")

    def _path(self, expr: Any, where: str) -> tuple[Value, Value, Value]:
        """c, c', c'' of one component of a path as tape values (sympy's derivatives of the parsed expression)."""
        chain = self.chain
        try:
            value = chain.expression(expr, f"{where}.position") if not isinstance(expr, int | float) else expr
        except InputError as exc:
            raise InputError(str(exc), key="constraints") from None
        value = as_expr(value)
        allowed = {TIME, *chain.p_symbols}
        if not value.free_symbols <= allowed:
            raise InputError(f"{where}: position may use t and the parameters only, got {value}", key="constraints")
        first = sympy.diff(value, TIME)
        return chain._tape_value(value), chain._tape_value(first), chain._tape_value(sympy.diff(first, TIME))

    @property
    def order(self) -> int:
        """Second order: the states are the coordinates, then their rates."""
        return 2

    # --- the tape -------------------------------------------------------------------------------------------
    @functools.cached_property
    def contact_forces(self) -> ContactForces:
        """The contacts' forces on the chain's tape (robodyn.rigid.contact)."""
        return ContactForces.of(self.chain.kinematics().program, self._contacts)

    @functools.cached_property
    def tree_program(self) -> ManipulatorProgram:
        """The tree's program: the chain's own, or with the contacts' generalized forces added to Q."""
        base = self.chain._program
        if not self._contacts:
            return base
        forces = [f + c for f, c in zip(base.forces, self.contact_forces.generalized)]
        return ManipulatorProgram(base.tape, base.bodies, base.couplings, base.x, base.u, base.a, base.gravity,
                                  base.joints, forces)

    @functools.cached_property
    def program(self) -> ConstraintProgram:
        """The constraints and the constrained dynamics on the chain's tape (robodyn.rigid.constraints)."""
        manipulator = self.tree_program
        return ConstraintProgram(self.chain.kinematics().program, self._rows, manipulator.tree,
                                 manipulator.acceleration, manipulator.tape.const(self.baumgarte))

    def tape_outputs(self, name: str) -> list[Value]:
        """``rhs`` [q', q''] (2n,), ``h`` the outputs, ``constraints`` [phi, phi', J, d phi'/dq] (2k + 2kn,),
        ``jacobians`` df/d[x, u] row-major (2n (2n + m),), ``output_jacobians`` dh/d[x, u]."""
        program, chain = self.program, self.chain
        manipulator = self.tree_program
        tape = manipulator.tape
        if name == "rhs":
            return [*manipulator.qd, *(program.acceleration if self._rows else manipulator.acceleration)]
        if name == "h":
            if chain.kinematic_outputs:
                own = list(chain._outputs.values)
            else:
                own = [chain._tape_value(e) for e in chain.h_expr]
            contacts = self.contact_forces
            touching = [e for k in range(len(self._contacts))
                        for e in (contacts.normal[k], *contacts.friction[k], contacts.slip[k])]
            forces = program.forces[: len(self.force_outputs)] if self._rows else []
            return [*own, *forces, *self._contact_values(touching)]
        if name == "events":  # every contact's gap, then the held contacts' normal forces
            kinematics = chain.kinematics().program
            gaps = [plane_gap(kinematics, frame, *plane)
                    for frame, plane in zip(self.contact_set.frames, self.contact_set.planes)]
            return [*gaps, *(program.forces[len(self.force_outputs):] if self.held else [])]
        if name == "laws":  # per compliant contact: k, d, mu, eps; then per impact contact: e
            return law_values(self.contact_set)
        if name == "impacts":  # per impact contact: gap, restitution, n . (Jv' q'), then the rows dg/dq (k x n)
            kinematics = chain.kinematics().program
            impacts = self.contact_set.impacts
            return [*(plane_gap(kinematics, i.frame, i.point, i.normal) for i in impacts),
                    *(i.restitution for i in impacts),
                    *(dot(kinematics.outputs(i.frame, "bias")[:3], i.normal) for i in impacts),
                    *(e for i in impacts for e in plane_normal_row(kinematics, i.frame, i.normal))]
        if name == "constraints":
            velocity_jacobian = tape.derive(program.velocity, manipulator.q)
            return [*program.residual, *program.velocity, *(e for row in program.jacobian for e in row),
                    *(e for row in velocity_jacobian for e in row)]
        if name in ("jacobians", "output_jacobians"):
            values = self.tape_outputs("rhs" if name == "jacobians" else "h")
            rows = tape.derive(values, [*manipulator.x, *manipulator.u])
            n = self.n_states
            return [e for row in rows for e in row[:n]] + [e for row in rows for e in row[n:]]
        raise KeyError(f"no function {name!r}: rhs, h, constraints, jacobians, output_jacobians, events, laws, "
                       "impacts")

    def _contact_values(self, compliant: list[Value]) -> list[Value]:
        """The contacts' outputs in file order: five per compliant contact (``compliant``'s), a gap per impact."""
        kinematics = self.chain.kinematics().program
        impacts = iter(self.contact_set.impacts)
        values, k = [], 0
        for model in self.contact_set.models:
            if model == "impact":
                impact = next(impacts)
                values.append(plane_gap(kinematics, impact.frame, impact.point, impact.normal))
            else:
                values += compliant[5 * k: 5 * k + 5]
                k += 1
        return values

    def _function(self, name: str) -> tuple[Any, int]:
        memo = self.memo()
        key = ("native function", name)
        if key not in memo:
            outputs = self.tape_outputs(name)
            text, symbol = llvm_ir(*tape_data(self.tree_program.tape, outputs), optimize=True)
            memo[key] = (native_function(text, symbol), len(outputs))
        return memo[key]

    def call(self, name: str, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """Function ``name`` (:meth:`tape_outputs`) at raw float64 vectors."""
        function, size = self._function(name)
        out = np.empty(size)
        x = np.ascontiguousarray(x, dtype=float)
        function(float(t), x, np.ascontiguousarray(u, dtype=float), np.ascontiguousarray(p, dtype=float), x, out)
        return out

    def _evaluate(self, t: float, x: np.ndarray, p: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        k, n = len(self._rows), self.chain.n_coordinates
        values = self.call("constraints", t, x, np.zeros(self.n_inputs), p)
        return (values[:k], values[k: 2 * k], values[2 * k: 2 * k + k * n].reshape(k, n),
                values[2 * k + k * n:].reshape(k, n))

    def constraints(self) -> ConstraintSet | None:
        """The residuals, assembly and independent coordinates (robodyn.mechanisms.loops.constraints.ConstraintSet);
        None
        with contacts alone (no bilateral rows)."""
        if not self._rows:
            return None
        memo = self.memo()
        if "constraint set" not in memo:
            memo["constraint set"] = ConstraintSet(self.name, self.row_names, self.row_units, self.coordinates,
                                                   self.velocities, self._evaluate, self._independent)
        result: ConstraintSet = memo["constraint set"]
        return result

    def _check_assembly(self) -> None:
        """At the default parameters the loops close (from q = 0 or a few seeded guesses: else InputError with the
        closest residual) and the rows are independent there (else InputError naming the redundant rows)."""
        constraints = self.constraints()
        assert constraints is not None
        p = self.parameter_vector(None)
        n = self.chain.n_coordinates
        rng = np.random.default_rng(0)
        guesses = [np.zeros(2 * n), *(np.concatenate([rng.uniform(-1, 1, n), np.zeros(n)]) for _ in range(4))]
        first: InputError | None = None
        for guess in guesses:
            try:
                x = constraints.assemble(0.0, guess, p, {})
            except InputError as exc:
                first = first or exc
                continue
            constraints.rank_check(0.0, x, p)
            return
        assert first is not None
        raise first

    # --- numbers ------------------------------------------------------------------------------------------
    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        values = self.call("rhs", t, x, u, p)
        if not np.all(np.isfinite(values)):
            raise SingularMatrixError(f"model {self.name!r}: the constrained dynamics are singular at this state (the "
                                      "constraint rows lose rank: a singular configuration of the mechanism, or M is "
                                      "not positive definite)")
        return values

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.call("h", t, x, u, p)

    @property
    def jacobian_method(self) -> str:
        return "manipulator"

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        """Exact df/dx ``(2n, 2n)`` and df/du ``(2n, m)`` in all the tree's coordinates (forward mode on the tape),
        Baumgarte's terms included: what the stiff integrators use. ``linearize`` reduces them to the independent
        coordinates (robodyn.mechanisms.loops.constraints)."""
        n, m = self.n_states, self.n_inputs
        values = self.call("jacobians", t, x, u, p)
        return values[: n * n].reshape(n, n), values[n * n:].reshape(n, m)

    def output_jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        n, m, k = self.n_states, self.n_inputs, self.n_outputs
        values = self.call("output_jacobians", t, x, u, p)
        return values[: k * n].reshape(k, n), values[k * n:].reshape(k, m)

    def energy(self, x: Values, params: Values | None = None) -> tuple[float, float]:
        """Kinetic and potential energy of the tree (the constraints do no work)."""
        p = self.parameter_vector(params)  # this model's parameters (a copy's own), then the overrides
        return self.chain.energy(self.state_vector(x), dict(zip(self.parameters, p.tolist())))

    def units(self) -> dict[str, str]:
        by_row = {"m": "N", "rad": "N m"}
        forces = {name: by_row[unit] for name, unit in zip(self.force_outputs, self.row_units)}
        return {**self.chain.units(), **forces, **self._contact_units}

    def kinematics(self) -> Any:
        return self.chain.kinematics()

    def position_limits(self) -> dict[str, tuple[float | None, float | None]]:
        return self.chain.position_limits()

    # --- the model contract -----------------------------------------------------------------------------------
    @property
    def compilable(self) -> bool:
        return True

    def _source(self, label: str, function: str, values: list[Value], arguments: str = "t, x, u, p, out") -> str:
        tape = self.tree_program.tape
        return "\n".join([tape_source(f"_{label}", tape, values, "hjit"), "", "@jit",
                          f"def {function}({arguments}):", f"    _{label}(t, x, u, p, x, out)", ""])

    def kernel_rhs_source(self) -> str:
        return self._source("constrained_rhs", "rhs", self.tape_outputs("rhs"))

    def kernel_jacobian_source(self) -> str:
        return self._source("constrained_jac", "jac", self.tape_outputs("jacobians"))

    def kernel_output_source(self) -> str:
        return self._source("constrained_out", "out_fn", self.tape_outputs("h"))

    def symbol_table(self) -> Any:
        """The chain's symbols, and with contacts also their gaps ``<name>_gap`` (m) and, in a resting mode, the
        held contacts' normal forces ``<name>_hold`` (N): values of the tape's ``events`` function
        (robodyn.mechanisms.floating.chart.StoredSymbols)."""
        if not self.contact_set.names:
            return self.chain.symbol_table()
        from robodyn.mechanisms.floating.chart import StoredSymbols

        memo = self.memo()
        if "contact symbols" not in memo:
            names = [*gap_names(self.contact_set), *(f"{self.contact_set.impacts[k].name}_hold" for k in self.held)]
            memo["contact symbols"] = StoredSymbols(self, names, functools.partial(self.call, "events"))
        return memo["contact symbols"]

    def kernel_event_source(self, events: Sequence[Any]) -> str:
        """``event_fn``: the events in the chain's symbols and the contacts' values (computed by the tape's
        ``events`` function when an event uses them)."""
        from robodyn.codegen.source import event_source

        table = self.symbol_table()
        if not self.contact_set.names:
            return event_source(table, events)
        return "\n".join([tape_source("_contact_values", self.tree_program.tape, self.tape_outputs("events"), "hjit"),
                          "", event_source(table, events, "_contact_values")])

    def check_contacts(self, p: Vector, where: str = "") -> None:
        """InputError when the contacts' laws at the parameters ``p`` are not physical (overrides of the parameters
        they are written in: robodyn.mechanisms.contact.contacts.check_laws)."""
        if self.contact_set.names:
            values = self.call("laws", 0.0, np.zeros(self.n_states), np.zeros(self.n_inputs), p)
            check_laws(self.contact_set, values, f"model {self.name!r}{where}")

    def with_parameters(self, params: Mapping[str, float] | None = None, **values: float) -> ConstrainedChain:
        """:meth:`Model.with_parameters`, the contacts' laws checked at the new values (:meth:`check_contacts`)."""
        clone = super().with_parameters(params, **values)
        if clone is not self:
            clone.check_contacts(clone.parameter_vector(None), f" with the parameters {dict(clone.parameters)}")
        return clone

    def contact_events(self, *, terminal: bool = False) -> list[Any]:
        """Touchdown and lift-off of every compliant contact as events (robodyn.Event) for ``simulate``:
        ``<name>_touchdown`` where its gap falls through 0, ``<name>_liftoff`` where it rises through 0 (impact
        contacts' are the simulation's own: robodyn.integrate.paths.impacts)."""
        return contact_events(self.contact_set, terminal)

    def contact_points(self) -> tuple[ContactPoint, ...]:
        """The compliant contacts (their names, frames and planes' unit normals at the model's parameters), which the
        3-D view draws with their forces (``<name>_normal_force``, ``_friction_x``, ``_y``, ``_z``)."""
        return contact_points(self.contact_set, dict(zip(self.chain.p_symbols, self.default_parameters()[1].tolist())))

    def held_mode(self, held: Sequence[int]) -> ConstrainedChain:
        """This chain with the impact contacts ``held`` (indices) held on their planes: a resting mode of
        :meth:`impacts` (robodyn.mechanisms.contact.impacts.ImpactSet.mode)."""
        return ConstrainedChain(self.chain, self.loops, self.constraint_list, baumgarte=self.baumgarte,
                                independent=self._independent, name=self.name, contacts=self.contact_entries,
                                held=held)

    def impacts(self) -> Impacts | None:
        """The rigid contacts' events and impact map (robodyn.mechanisms.contact.impacts.ImpactSet), or None without
        ``model: impact`` contacts."""
        if not self.contact_set.impacts:
            return None
        from robodyn.mechanisms.contact.impacts import ImpactSet

        memo = self.memo()
        if "impact set" not in memo:
            memo["impact set"] = ImpactSet(self)
        return memo["impact set"]

    def show_text(self) -> str:
        rows, free = ", ".join(self.row_names), self.chain.n_coordinates - len(self._rows)
        contacts = ", ".join(f"{name} ({kind})" for name, kind in zip(self.contact_set.names, self.contact_set.models))
        touching = f"; contacts: {contacts}" if contacts else ""
        if not self._rows:
            forces = " + Q_contact(q, q')" if self._contacts else ""
            return f"M(q) q'' = Q - c(q, q'){forces}{touching}; the tree:\n{self.chain.show_text()}"
        return (f"M(q) q'' = Q - c(q, q') + J(q)^T lambda with J(q) q'' = gamma (Baumgarte alpha = {self.baumgarte:g}"
                f" 1/s): {len(self._rows)} constraint rows ({rows}) on {self.chain.n_coordinates} coordinates, "
                f"{free} degree{'' if free == 1 else 's'} of freedom{touching}; the tree:\n{self.chain.show_text()}")

    def __repr__(self) -> str:
        return (f"ConstrainedChain(name={self.name!r}, coordinates={list(self.coordinates)}, "
                f"rows={self.row_names})")
