"""Straight-line dynamics of kinematic trees: recursive Newton–Euler on a tape of assignments.

Expanding the equations of motion of a chain into one expression per entry makes them swell
exponentially with the number of links (DESIGN.md, "Expression swell"). Here every intermediate
quantity — rotation entries, velocities, accelerations, forces — becomes a new sympy symbol defined
by an assignment on a :class:`Tape`: an ordered list of ``(symbol, expression)`` in which each
expression references only earlier symbols, the coordinates, velocities, accelerations and the
parameters. Its size grows linearly with the number of bodies (quadratically for the mass matrix and
the derivatives), and it compiles into straight-line Python code (:func:`compile_tape`).

- :func:`rnea`: inverse dynamics tau = ID(q, q', q'') of a tree of rigid bodies, vector form in body
  coordinates (J. J. Craig, *Introduction to Robotics*, 3rd ed., section 6.5; R. Featherstone,
  *Rigid Body Dynamics Algorithms*, 2008, section 5.3).
- :func:`differentiate`: forward-mode differentiation of the tape (chain rule over the assignments,
  zero derivatives pruned), so dID/dq and dID/dq' are straight-line code too.
- :func:`expand`: substitute the assignments back into closed-form expressions (swells; small trees only).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from robodyn.model.symbolic import exact_float_printer

__all__ = ["Body", "Tape", "compile_tape", "differentiate", "expand", "kinematics", "rnea"]

Vec = list[Any]  # three sympy expressions
Mat = list[list[Any]]  # 3x3 sympy expressions, row-major


def as_expr(value: Any) -> Any:
    """A sympy expression for a value that is already one, or a number (never text: text goes through
    the safe parser in robodyn.model.expr)."""
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise TypeError(f"expected a sympy expression or a number, got {type(value).__name__}")
    return sympy.Integer(int(value)) if isinstance(value, int | np.integer) else sympy.Float(float(value))


class Tape:
    """An ordered list of assignments ``symbol = expression`` (straight-line code).

    :meth:`new` records a non-trivial expression under a fresh symbol and returns that symbol; numbers
    and single symbols are returned unchanged, so zeros and ones propagate and prune the tape.
    """

    def __init__(self, prefix: str = "_rd"):
        self.prefix = prefix
        self.assignments: list[tuple[sympy.Symbol, sympy.Expr]] = []

    def new(self, expr: Any) -> Any:
        expr = as_expr(expr)
        if expr.is_Atom:
            return expr
        target = sympy.Symbol(f"{self.prefix}{len(self.assignments)}", real=True)
        self.assignments.append((target, expr))
        return target

    def vec(self, values: Sequence[Any]) -> Vec:
        return [self.new(v) for v in values]

    def __len__(self) -> int:
        return len(self.assignments)


@dataclass(frozen=True, slots=True)
class Body:
    """One body of a kinematic tree and the joint that connects it to its parent.

    All quantities are sympy expressions in the parameters, in the body's joint frame (the frame that
    moves with the joint, origin on the joint axis).

    parent : int
        Index of the parent body in the list, -1 for the fixed base.
    prismatic : bool
        False for a revolute joint.
    axis : (3,)
        Unit joint axis, in the joint frame.
    rotation : (3, 3), position : (3,)
        Fixed placement of the joint frame (at q = 0) in the parent body's frame.
    mass, com : (3,), inertia : (3, 3)
        Mass, centre of mass and inertia about the centre of mass, in the joint frame.
    """

    parent: int
    prismatic: bool
    axis: tuple[Any, ...]
    rotation: tuple[tuple[Any, ...], ...]
    position: tuple[Any, ...]
    mass: Any
    com: tuple[Any, ...]
    inertia: tuple[tuple[Any, ...], ...]


def _cross(a: Vec, b: Vec) -> Vec:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _matvec(m: Sequence[Sequence[Any]], v: Vec) -> Vec:
    return [m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2] for i in range(3)]


def _tmatvec(m: Sequence[Sequence[Any]], v: Vec) -> Vec:
    return [m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2] for i in range(3)]


def _add(*vectors: Vec) -> Vec:
    return [sum((v[i] for v in vectors), sympy.Integer(0)) for i in range(3)]


def _scale(s: Any, v: Vec) -> Vec:
    return [s * e for e in v]


def _placement(tape: Tape, body: Body, q: Any) -> tuple[Mat, Vec]:
    """Rotation parent <- body and the body origin in the parent frame, at coordinate q (Rodrigues)."""
    a = body.axis
    if body.prismatic:
        motion: Mat = [[sympy.Integer(int(i == j)) for j in range(3)] for i in range(3)]
        rotation = [list(row) for row in body.rotation]
        position = tape.vec(_add(list(body.position), _scale(q, _matvec(body.rotation, list(a)))))
        return rotation, position
    c, s = tape.new(sympy.cos(q)), tape.new(sympy.sin(q))
    one_c = tape.new(1 - c)
    skew = [[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]]
    motion = [[tape.new((c if i == j else 0) + s * skew[i][j] + one_c * a[i] * a[j]) for j in range(3)]
              for i in range(3)]
    rotation = [[tape.new(sum((body.rotation[i][k] * motion[k][j] for k in range(3)), sympy.Integer(0)))
                 for j in range(3)] for i in range(3)]
    return rotation, list(body.position)


def rnea(tape: Tape, bodies: Sequence[Body], q: Sequence[Any], qd: Sequence[Any], qdd: Sequence[Any],
         gravity: Sequence[Any]) -> list[Any]:
    """Joint forces tau = ID(q, q', q'') of a tree by recursive Newton–Euler, recorded on ``tape``.

    ``q``, ``qd``, ``qdd`` hold one entry per body (symbols or numbers: zeros prune the tape);
    ``gravity`` is the gravity vector in the base frame. Bodies must come after their parents.
    Returns the n joint forces/torques as tape symbols (or numbers).
    """
    n = len(bodies)
    zero = [sympy.Integer(0)] * 3
    rotations: list[Mat] = []
    positions: list[Vec] = []
    omega: list[Vec] = []
    alpha: list[Vec] = []
    accel: list[Vec] = []
    forces: list[Vec] = []
    moments: list[Vec] = []
    base_acc = [-as_expr(g) for g in gravity]  # the base accelerates upwards instead of gravity
    for i, body in enumerate(bodies):
        rot, pos = _placement(tape, body, q[i])
        rotations.append(rot)
        positions.append(pos)
        w_p, al_p, a_p = (zero, zero, base_acc) if body.parent < 0 else (
            omega[body.parent], alpha[body.parent], accel[body.parent])
        a_origin = tape.vec(_add(a_p, _cross(al_p, pos), _cross(w_p, tape.vec(_cross(w_p, pos)))))
        w_in, al_in, a_in = tape.vec(_tmatvec(rot, w_p)), tape.vec(_tmatvec(rot, al_p)), tape.vec(
            _tmatvec(rot, a_origin))
        axis = list(body.axis)
        if body.prismatic:
            w, al = w_in, al_in
            acc = tape.vec(_add(a_in, _scale(2 * qd[i], _cross(w, axis)), _scale(qdd[i], axis)))
        else:
            w = tape.vec(_add(w_in, _scale(qd[i], axis)))
            al = tape.vec(_add(al_in, _scale(qdd[i], axis), _scale(qd[i], _cross(w_in, axis))))
            acc = a_in
        omega.append(w)
        alpha.append(al)
        accel.append(acc)
        com = list(body.com)
        a_com = tape.vec(_add(acc, _cross(al, com), _cross(w, tape.vec(_cross(w, com)))))
        forces.append(tape.vec(_scale(body.mass, a_com)))
        inertia_w = tape.vec(_matvec(body.inertia, w))
        moments.append(tape.vec(_add(_matvec(body.inertia, al), _cross(w, inertia_w), _cross(com, forces[i]))))
    tau: list[Any] = [None] * n
    for i in reversed(range(n)):
        body = bodies[i]
        axis = list(body.axis)
        tau[i] = tape.new(sum((a * f for a, f in zip(axis, forces[i] if body.prismatic else moments[i])),
                              sympy.Integer(0)))
        if body.parent >= 0:  # transmit f_i and n_i to the parent's frame
            p = body.parent
            f_parent = tape.vec(_matvec(rotations[i], forces[i]))
            n_parent = _add(_matvec(rotations[i], moments[i]), _cross(positions[i], f_parent))
            forces[p] = tape.vec(_add(forces[p], f_parent))
            moments[p] = tape.vec(_add(moments[p], n_parent))
    return tau


def kinematics(tape: Tape, bodies: Sequence[Body], q: Sequence[Any]) -> list[Vec]:
    """Centres of mass of the bodies in the base frame, recorded on ``tape``: one (3,) per body."""
    world_rot: list[Mat] = []
    world_pos: list[Vec] = []
    coms = []
    for i, body in enumerate(bodies):
        rot, pos = _placement(tape, body, q[i])
        if body.parent < 0:
            world_rot.append(rot)
            world_pos.append(pos)
        else:
            r_p, p_p = world_rot[body.parent], world_pos[body.parent]
            world_rot.append([[tape.new(sum((r_p[a][k] * rot[k][b] for k in range(3)), sympy.Integer(0)))
                               for b in range(3)] for a in range(3)])
            world_pos.append(tape.vec(_add(p_p, _matvec(r_p, pos))))
        coms.append(tape.vec(_add(world_pos[i], _matvec(world_rot[i], list(body.com)))))
    return coms


def differentiate(tape: Tape, outputs: Sequence[Any], variables: Sequence[sympy.Symbol]) -> list[list[Any]]:
    """d outputs / d variables by forward mode over the tape; the derivative code is appended to it.

    For each assignment s = e(s_1, ..., v_1, ...) in the dependency cone of the outputs,
    ds/dv = sum_j (de/ds_j) ds_j/dv + de/dv, each non-zero derivative a new assignment.
    Returns a nested list ``[output][variable]`` of symbols or numbers.
    """
    defined = list(tape.assignments)
    needed: set[Any] = set().union(*(as_expr(o).free_symbols for o in outputs)) if outputs else set()
    for target, expr in reversed(defined):
        if target in needed:
            needed |= expr.free_symbols
    seeds: dict[Any, dict[Any, Any]] = {v: {v: sympy.Integer(1)} for v in variables}

    def derive(expr: Any) -> dict[Any, Any]:
        total: dict[Any, Any] = {}
        for free in expr.free_symbols:
            inner = seeds.get(free)
            if not inner:
                continue
            partial = tape.new(sympy.diff(expr, free))
            for v, dv in inner.items():
                total[v] = total.get(v, sympy.Integer(0)) + partial * dv
        return {v: tape.new(d) for v, d in total.items() if d != 0}

    for target, expr in defined:
        if target in needed:
            seeds[target] = derive(expr)
    result = []
    for out in outputs:
        derivs = derive(as_expr(out))
        result.append([derivs.get(v, sympy.Integer(0)) for v in variables])
    return result


def expand(tape: Tape, exprs: Sequence[Any]) -> list[Any]:
    """The outputs as closed-form expressions: the tape substituted back (swells with the tree size)."""
    needed: set[Any] = set().union(*(as_expr(e).free_symbols for e in exprs)) if exprs else set()
    for target, expr in reversed(tape.assignments):
        if target in needed:
            needed |= expr.free_symbols
    values: dict[Any, Any] = {}
    for target, expr in tape.assignments:
        if target in needed:
            values[target] = expr.xreplace(values)
    return [as_expr(e).xreplace(values) for e in exprs]


def compile_tape(tape: Tape, outputs: Sequence[Any], arguments: Sequence[Any], shape: tuple[int, ...]
                 ) -> Callable[..., np.ndarray]:
    """Straight-line numeric function ``fn(*arguments) -> ndarray`` of ``shape`` from the tape.

    ``arguments`` holds symbols or tuples of symbols (passed as arrays). Only the assignments the
    outputs depend on are printed, one local variable each. Every symbol is printed under a generated
    name (``_a1_0`` for entry 0 of argument 1, ``_s7`` for an assignment), so no model name reaches the
    code; numbers print exactly (:func:`robodyn.model.symbolic.exact_float_printer`).
    """
    outputs = [as_expr(o) for o in outputs]
    needed: set[Any] = set().union(*(o.free_symbols for o in outputs)) if outputs else set()
    for target, expr in reversed(tape.assignments):
        if target in needed:
            needed |= expr.free_symbols
    body = [(s, e) for s, e in tape.assignments if s in needed]
    names: dict[Any, str] = {}
    unpack = []
    for k, argument in enumerate(arguments):
        if isinstance(argument, tuple | list):
            for i, entry in enumerate(argument):
                if entry in needed:
                    names[entry] = f"_a{k}_{i}"
                    unpack.append(f"    _a{k}_{i} = _a{k}[{i}]")
        elif argument in needed:
            names[argument] = f"_a{k}"
    names.update({s: f"_s{i}" for i, (s, _) in enumerate(body)})
    printer = exact_float_printer()
    # print symbols under their generated names (the printer dispatches on _print_<class name>)
    setattr(printer, "_print_Symbol", lambda expr: names[expr])  # noqa: B010 (mypy forbids assigning a method)
    lines = [f"def _straight_line({', '.join(f'_a{k}' for k in range(len(arguments)))}):", *unpack]
    lines += [f"    {names[s]} = {printer.doprint(e)}" for s, e in body]
    values = ", ".join(printer.doprint(o) for o in outputs)
    lines.append(f"    return numpy.array([{values}], dtype=float).reshape({shape!r})")
    header = ["import numpy"]
    for module, imported in sorted(printer.module_imports.items()):
        header.append(f"from {module} import {', '.join(sorted(imported))}")
    text = "\n".join(['"""Straight-line code generated by robodyn (model/rnea.py). Do not edit."""', *header, "", "",
                      *lines]) + "\n"
    return _load_generated(text)


def _load_generated(text: str) -> Callable[..., np.ndarray]:
    """Import generated source through the private content-hashed cache (robodyn.codegen), like the
    simulation kernels: the file is written once and imported, never evaluated from a string."""
    from robodyn.atomic import write_text_atomic
    from robodyn.codegen.cache import cache_dir, content_hash
    from robodyn.codegen.module import load_source_module

    name = f"robodyn_tape_{content_hash(text)[:24]}"
    path = cache_dir(numba_code=False) / f"{name}.py"
    try:
        current = path.read_text(encoding="utf-8") if path.exists() else None
    except OSError:
        current = None
    if current != text:
        write_text_atomic(path, text)
    function: Callable[..., np.ndarray] = load_source_module(path, name, {})._straight_line
    return function
