"""The chart a model on a manifold is integrated in: its state with the base's tangent coordinates d appended.

A robot on a floating or planar base (robodyn.mechanisms.floating.chain) stores its configuration with a unit
quaternion (or cos, sin). Integrating the stored coordinates would let the quaternion drift off unit norm, so the
integrators step in local coordinates instead: the state of :class:`ChartModel` is ``[c, q_joints, v, d]``, the
base's configuration c (+) d for a tangent vector d of the base (robodyn.rigid.base_joints), with c' = 0. Every
step starts at d = 0; after each one the kernels call the model's ``chart`` function (``fns[3]``), which moves
the centre to where the step ended (c <- c (+) d, d <- 0) and the derivative with it (d' = the base velocity),
so the next step again starts at the centre, and the stored quaternion is a product of unit quaternions: unit to
round-off, never renormalized. The chart's states are the stored state followed by d, so lifting a stored state
appends zeros and :meth:`ChartModel.project` recentres.

This is the Runge–Kutta–Munthe-Kaas idea with the chart re-centred at every step: every method (explicit,
implicit, fixed step, batches) runs unchanged on a Euclidean state; error control and dense output act on the
chart's coordinates, which between two steps are the same Euclidean ODE.

Reference: H. Munthe-Kaas, "High order Runge-Kutta methods on manifolds", Appl. Numer. Math. 29 (1999) 115-127;
E. Hairer, C. Lubich, G. Wanner, *Geometric Numerical Integration*, 2nd ed., Springer 2006, section IV.8.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from robodyn.codegen.llvm.tape import tape_source
from robodyn.model.kinds.chart import TangentChart
from robodyn.model.system import Model, Vector

__all__ = ["ChartModel"]


class ChartModel(TangentChart):
    """The integrators' view of a robot on a moving base (see the module docstring).

    ``robot`` is a :class:`~robodyn.mechanisms.floating.chain.FloatingChain`; states are its states and then
    ``base_d<...>`` (the chart's tangent coordinates: floating ``dx dy dz rx ry rz``, planar ``dx dy dtheta``).
    """

    def __init__(self, robot: Any):
        self.robot = robot
        names = ("dx", "dy", "dz", "rx", "ry", "rz") if robot.base == "floating" else ("dx", "dy", "dtheta")
        super().__init__(robot, tuple(f"base_{n}" for n in names), f"{robot.base} base", robot.base, "chart memo")

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.robot.call("chart_rhs", t, x, u, p)

    def _source(self, name: str, function: str, outputs: list[Any]) -> str:
        tape, _ = self.robot._tape
        return "\n".join([tape_source(f"_{function}_tape", tape, outputs, "hjit"), "", "@jit",
                          f"def {name}(t, x, u, p, out):", f"    _{function}_tape(t, x, u, p, x, out)", ""])

    def kernel_rhs_source(self) -> str:
        return self._source("rhs", "chart_rhs", self.robot.tape_outputs("chart_rhs"))

    def kernel_chart_source(self) -> str:
        """``chart(t, x, xdot, p, out)``: the state and its derivative recentred, ``2 n`` values."""
        return self._source("chart", "chart", self.robot.tape_outputs("chart"))

    def symbol_table(self) -> ChartSymbols:
        """The robot's stored states, inputs and parameters for events given as text, evaluated at a chart state
        through :meth:`project` (:class:`ChartSymbols`)."""
        return ChartSymbols(self)

    def kernel_event_source(self, events: Sequence[Any]) -> str:
        """``event_fn(t, x, u, p, out)`` at a chart state: the state recentred by the robot's ``chart`` tape (its
        first ``nq + nv`` values are the stored state), then the events in the stored state's symbols."""
        from robodyn.codegen.source import event_source

        robot, tape = self.robot, self.robot._tape[0]
        table = robot.symbol_table()
        derived = ([tape_source("_contact_values", tape, robot.tape_outputs("events"), "hjit"), ""]
                   if table.d_symbols else [])  # the contacts' gaps, at the stored state
        stored = event_source(table, events, "_contact_values").replace("def event_fn(", "def _stored_events(", 1)
        recentre = tape_source("_recentre_tape", tape, robot.tape_outputs("chart"), "hjit")
        return "\n".join([*derived, recentre, "", stored, "",
                          "@hjit", "def event_fn(t, x, u, p, out):", f"    y = np.empty({2 * self.n_states})",
                          "    _recentre_tape(t, x, x, p, x, y)",
                          f"    _stored_events(t, y[:{robot.n_states}], u, p, out)", ""])

    def kernel_jacobian_source(self) -> str:
        """``jac(t, x, u, p, out)``: d(chart rhs)/dx then d/du, row-major, at a chart state with d = 0 (where every
        step starts, so where the implicit methods take it).

        Up to SOLVE_LIMIT velocities, from the robot's analytical tangent-space linearization
        (``tangent_linearization``: its rows and columns placed at the chart's q_joints and v; at d = 0 the
        chart's d is the tangent's base coordinate to first order, so d's columns are its too), the rows of d' =
        rate(d, v) by forward mode of the chart's own rate, and the accelerations' columns of the centre c by
        forward mode along c alone (c' = 0, but a step's starting values, from the last step's collocation
        polynomial, still hold the old centre, which Newton's first iteration moves): about half the tape of
        forward mode over the whole chart rhs, which LLVM compiles in half the time. Above, that forward mode."""
        from robodyn.rigid.dynamics import SOLVE_LIMIT

        robot = self.robot
        tape, _ = robot._tape
        if robot.nv > SOLVE_LIMIT:
            outputs = robot.tape_outputs("chart_rhs")
            variables = [*tape.leaves(1, self.n_states), *tape.leaves(2, self.n_inputs)]
            rows = tape.derive(outputs, variables)  # each row: d/dx then d/du; the kernels read all of A, then B
            size = self.n_states
            return self._source("jac", "chart_jac", [e for row in rows for e in row[:size]]
                                + [e for row in rows for e in row[size:]])
        nv, nb, m, size = robot.nv, robot.nb, self.n_inputs, self.n_states
        nq, base = robot.nq, robot.joint.nq
        values = robot.tape_outputs("tangent_linearization")
        place = [nq + nv + i for i in range(nb)] + [base + j for j in range(nv - nb)] + [nq + k for k in range(nv)]
        zero = tape.const(0.0)
        jac = [zero] * (size * (size + m))
        for r in range(2 * nv):
            for c in range(2 * nv):
                jac[place[r] * size + place[c]] = values[r * 2 * nv + c]
        offset = 4 * nv * nv
        for r in range(2 * nv):
            for c in range(m):
                jac[size * size + place[r] * m + c] = values[offset + r * m + c]
        # the chart's own rows d' = rate(d, v): its parametrization's, by forward mode (a few nodes)
        rhs = robot.tape_outputs("chart_rhs")
        variables = [*tape.leaves(1, size), *tape.leaves(2, m)]
        for i, row in enumerate(tape.derive(rhs[size - nb:], variables)):
            jac[(size - nb + i) * size: (size - nb + i + 1) * size] = row[:size]
            jac[size * size + (size - nb + i) * m: size * size + (size - nb + i + 1) * m] = row[size:]
        # the centre's columns of the accelerations, by forward mode along c alone: the methods need them, since
        # a step's starting values (the last step's collocation polynomial) still hold the old centre
        for i, row in enumerate(tape.derive(rhs[nq: nq + nv], tape.leaves(1, base))):
            jac[(nq + i) * size: (nq + i) * size + base] = row
        return self._source("jac", "chart_jac", jac)

    # --- between stored and chart states ---------------------------------------------------------------
    def project(self, y: np.ndarray) -> np.ndarray:
        """Chart states ``(..., nq + nv + nb)`` as stored states ``(..., nq + nv)``: the base at c (+) d."""
        from robodyn.mechanisms.floating.configuration import chart_recentre

        robot = self.robot
        y = np.asarray(y, dtype=float)
        nb = len(self.tangent)
        x = y[..., :-nb].copy()
        base = robot.joint.nq
        x[..., :base] = chart_recentre(robot.base, y[..., :base], y[..., -nb:])
        return x

    def tolerances(self, atol: np.ndarray) -> np.ndarray:
        """Absolute tolerances ``(nq + nv + nb,)`` from the stored state's ``(nq + nv,)``: d's from the base's
        position and rotation entries."""
        robot = self.robot
        base = robot.joint.nq
        if robot.base == "floating":
            extra = [*atol[:3], *([float(np.min(atol[3:base]))] * 3)]
        else:
            extra = [atol[0], atol[1], float(np.min(atol[2:base]))]
        return np.concatenate([atol, extra])

    @property
    def base_coordinates(self) -> tuple[str, ...]:
        """Names of the base's stored configuration entries (``base_x ... base_qw``, or ``base_x ... base_sin``)."""
        names: tuple[str, ...] = self.robot.base_coordinates
        return names

    @property
    def coordinates(self) -> tuple[str, ...]:
        """Names of the stored configuration ``(nq,)``: the base's, then the joints'."""
        names: tuple[str, ...] = self.robot.coordinates
        return names

    @property
    def tangent_states(self) -> tuple[str, ...]:
        """Names of the tangent space's coordinates ``(2 nv,)``: the configuration's (q (-) q0: the base's
        ``base_dx ... base_rz``, then the joints'), then the velocities."""
        robot = self.robot
        return (*self.tangent, *robot.chain.coordinates, *robot.velocities)

    def linearization(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, ...]:
        """A, B, C, D in the tangent space at the stored state ``x`` (robodyn.mechanisms.floating.chain
        ``tangent_jacobians``); the outputs are the tangent state itself (C = I, D = 0)."""
        A, B = self.robot.tangent_jacobians(t, x, u, p)
        return A, B, np.eye(A.shape[0]), np.zeros_like(B)

    def bound_linearization(self, t: float, p: Vector, out: np.ndarray) -> Any:
        """``run(x, u)`` writing [A | B | C | D] of :meth:`linearization` at the stored state ``x`` into ``out``
        (robodyn.Linearizer): for a robot with the solves on its tape (``nv`` <= SOLVE_LIMIT) one compiled function
        (``tangent_linearization``) writes A and B in place from arguments written in place; above, the compiled
        ``jacobians`` (M's factor and dr/dz) into a held buffer, then the compiled sparse solve into A's and B's
        velocity rows and -1/2 ad(v) into the base's block, ``run`` returning the sum of what it wrote (the
        caller's finite check reads that alone); the other entries (C = I, D = 0, A's identity) are written once."""
        from robodyn.rigid.dynamics import SOLVE_LIMIT

        robot = self.robot
        nv, nb, m, nx = robot.nv, robot.nb, robot.n_inputs, robot.n_states
        n = 2 * nv
        A, B = out[: n * n].reshape(n, n), out[n * n: n * (n + m)].reshape(n, m)
        C = out[n * (n + m): n * (2 * n + m)].reshape(n, n)
        out[:] = 0.0
        A[:nv, nv:] = np.eye(nv)
        C[...] = np.eye(n)
        if nv > SOLVE_LIMIT:  # the factor and dr/dz from the tape, solved by the compiled sparse solve in place
            function, size = robot._function("jacobians")
            parts = np.empty(size)
            solve = robot.factored_solve()
            L, G = solve.views(parts)
            left, right, corner, half = A[nv:], B[nv:], A[:nb, :nb], parts[-nb * nb:].reshape(nb, nb)
            target = parts
        else:  # A then B written by the tape where they are
            function, target = robot._function("tangent_linearization")[0], out[: n * (n + m)]
        packed, call, pointers = function.bind_raw((nx + nb, m, p.size, 0), target)
        packed[nx + nb + m:] = p
        x_part, u_part = packed[:nx], packed[nx + nb: nx + nb + m]

        def run(x: Vector, u: Vector, _alive: tuple[np.ndarray, ...] = (packed, target, out)) -> float | None:
            x_part[...] = x
            u_part[...] = u
            call(t, *pointers)
            if nv > SOLVE_LIMIT:  # the sum of the entries written: the rest of out is constant
                total: float = solve(L, G, left, right, half, corner)
                return total
            return None

        return run

    def linearization_call(self, t: float, p: Vector) -> tuple[Any, np.ndarray]:
        """:meth:`linearization` as raw machine code for callers that own the memory (linearize's lean path), as a
        model's ``linearization_call`` (robodyn.model.protocol): ``(call, template)``, a
        :class:`robodyn.codegen.llvm.native.RawCall` reading the stored state x ``(nq + nv,)`` followed by the chart's
        ``nb`` zeros and u, and writing A and B where it is told (up to SOLVE_LIMIT velocities the tape's
        ``tangent_linearization``, every entry; above, the tape's ``jacobians`` into a held buffer, then the compiled
        sparse solve into the velocity rows and -1/2 ad(v) into the base's block, returning the sum of what it
        wrote: one thread at a time), and the flat [A | B | C | D] holding the other entries (A's identity, C = I,
        D = 0; NaN where the call writes)."""
        from robodyn.rigid.dynamics import SOLVE_LIMIT

        robot = self.robot
        nv, nb, m = robot.nv, robot.nb, robot.n_inputs
        n = 2 * nv
        size = n * (n + m)
        template = np.zeros(2 * size)
        template[:size] = np.nan  # written by the call
        template[size: size + n * n].reshape(n, n)[...] = np.eye(n)
        if nv <= SOLVE_LIMIT:
            return robot._function("tangent_linearization")[0].bind_parameters(p), template
        A, B = template[: n * n].reshape(n, n), template[n * n: size].reshape(n, m)
        A[:nv], B[:nv] = 0.0, 0.0
        A[:nv, nv:] = np.eye(nv)  # the configuration rows [-1/2 ad(v_base), I]: the block written by the call
        A[:nb, :nb] = np.nan
        function, parts = robot._function("jacobians")
        call = robot.factored_solve().raw_call(function.bind_parameters(p), parts, n, (nv * n, n * n + nv * m, size),
                                               (parts - nb * nb, nb, n))
        return call, template

    @property
    def rotation(self) -> slice:
        """The stored state's entries of the base rotation (a unit quaternion, or cos and sin)."""
        rotation: slice = self.robot._rotation
        return rotation

    def checked(self, x: Vector) -> Vector:
        """A stored state ``(nq + nv,)`` with its base rotation checked unit (robodyn.mechanisms.floating.chain)."""
        checked: Vector = self.robot.normalized(self.robot.state_vector(x))
        return checked

    def neutral(self, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``values`` with the base rotation left out filled with no rotation (base_qw = 1, or base_cos = 1)."""
        filled = dict(values or {})
        unit = "base_qw" if self.robot.base == "floating" else "base_cos"
        rotation = [c for c in self.robot.base_coordinates if c not in ("base_x", "base_y", "base_z")]
        if not any(c in filled for c in rotation):
            filled[unit] = 1.0
        return filled

    def tangent_model(self, centre: Vector) -> TangentModel:
        """The dynamics in the tangent space at the stored state ``centre`` ``(nq + nv,)``, as a Euclidean model
        (:class:`TangentModel`)."""
        return TangentModel(self, centre)


class StoredSymbols:
    """A robot's stored states, inputs and parameters as real sympy symbols of their names, and a parser of
    expressions in them (text by the safe parser): the symbol table of its events given as text (``base_z - 0.2``).

    ``derived`` names values computed from (t, x, u, p) by ``values(t, x, u, p) -> (len(derived),)`` — a chain's
    contact gaps — which expressions may use too (``d_symbols``; robodyn.codegen.source.event_source prints them
    from the model's own compiled function). InputError when one clashes with a state, input or parameter.
    """

    def __init__(self, robot: Any, derived: Sequence[str] = (),
                 values: Callable[[float, Any, Any, Any], Any] | None = None):
        from robodyn.base.errors import InputError
        from robodyn.model.expr import TIME, symbol

        self.name = robot.name
        self.t_symbol = TIME
        self.x_symbols = tuple(symbol(s) for s in robot.states)
        self.u_symbols = tuple(symbol(s) for s in robot.inputs)
        self.p_symbols = tuple(symbol(s) for s in robot.parameters)
        self._stored = self.x_symbols
        self._table = {s.name: s for s in (*self.x_symbols, *self.u_symbols, *self.p_symbols)}
        clash = sorted(set(derived) & set(self._table))
        if clash:
            raise InputError(f"model {robot.name!r}: the names {clash} clash with states, inputs or parameters: "
                             "rename the contact", key="contacts")
        self.d_symbols = tuple(symbol(n) for n in derived)
        self._values = values
        self._table.update({s.name: s for s in self.d_symbols})

    def expression(self, value: Any, where: str) -> Any:
        """A sympy expression in the symbols from text, a number or a sympy expression (matched by name)."""
        import sympy

        from robodyn.base.errors import InputError
        from robodyn.model.expr import TIME, parse_expression

        if isinstance(value, str | int | float) and not isinstance(value, bool):
            return parse_expression(value, self._table, where=f"{self.name}: {where}")
        if not isinstance(value, sympy.Basic):
            raise InputError(f"{self.name}: {where}: expected an expression, got {value!r}")
        known = {**self._table, TIME.name: TIME}
        unknown = sorted(s.name for s in value.free_symbols if s.name not in known)
        if unknown:
            raise InputError(f"{self.name}: {where}: unknown symbol(s) {', '.join(unknown)} (known: "
                             f"{', '.join(self._table)}, t)")
        return value.xreplace({s: known[s.name] for s in value.free_symbols})

    def lambdify(self, exprs: Any) -> Any:
        """``fn(t, x, u, p)`` of a sympy matrix at a stored state (numpy)."""
        from robodyn.codegen.printer import lambdify_entries

        shape, values = exprs.shape, self._values
        if values is None or not self.d_symbols:
            entries = lambdify_entries((self.t_symbol, self._stored, self.u_symbols, self.p_symbols), list(exprs))
            return lambda t, x, u, p: entries(t, x, u, p).reshape(shape)
        derived = lambdify_entries((self.t_symbol, self._stored, self.u_symbols, self.p_symbols, self.d_symbols),
                                   list(exprs))
        return lambda t, x, u, p: derived(t, x, u, p, values(t, x, u, p)).reshape(shape)


class ChartSymbols(StoredSymbols):
    """:class:`StoredSymbols` of the robot, for the chart's state: ``x_symbols`` also name the tangent coordinates
    (as the chart's states do), expressions may use only the stored names, and :meth:`lambdify`'s functions take a
    chart state (projected to the stored one first)."""

    def __init__(self, chart: ChartModel):
        from robodyn.model.expr import symbol

        stored = chart.robot.symbol_table()
        super().__init__(chart.robot, [s.name for s in stored.d_symbols], stored._values)
        self.chart = chart
        self.x_symbols = (*self.x_symbols, *(symbol(s) for s in chart.tangent))

    def lambdify(self, exprs: Any) -> Any:
        stored, project = super().lambdify(exprs), self.chart.project
        return lambda t, x, u, p: stored(t, project(x), u, p)


_SERIES = 0.1  # Below this angle the coefficients' derivatives come from their Taylor series (error < 1e-16).


def _rotation_coefficients(theta: float) -> tuple[float, float, float, float]:
    """b = (1 - cos t)/t^2, c = (t - sin t)/t^3 (as integrate_configuration computes them) and b'(t)/t, c'(t)/t:
    SO(3)'s V = I + b [w] + c [w]^2 and its derivative."""
    from robodyn.mechanisms.floating.configuration import rotation_series

    _, b, c = (float(k) for k in rotation_series(np.array(theta)))
    t2 = theta * theta
    if theta < _SERIES:
        return (b, c, -1 / 12 + t2 / 180 - t2 * t2 / 6720 + t2 ** 3 / 453600,
                -1 / 60 + t2 / 1260 - t2 * t2 / 60480 + t2 ** 3 / 4989600)
    s, co = np.sin(theta), np.cos(theta)
    return b, c, s / (t2 * theta) - 2 * (1 - co) / (t2 * t2), (1 - co) / (t2 * t2) - 3 * (theta - s) / (t2 * t2 * theta)


def _planar_coefficients(theta: float) -> tuple[float, float, float, float]:
    """a = sin t / t, b = (1 - cos t)/t (as integrate_configuration computes them) and their derivatives: SE(2)'s
    V = [[a, -b], [b, a]] and its derivative."""
    from robodyn.mechanisms.floating.configuration import rotation_series

    a, b, _ = (float(k) for k in rotation_series(np.array(abs(theta))))
    b *= theta
    t2 = theta * theta
    if abs(theta) < _SERIES:
        return (a, b, theta * (-1 / 3 + t2 / 30 - t2 * t2 / 840 + t2 ** 3 / 45360),
                0.5 - t2 / 8 + t2 * t2 / 144 - t2 ** 3 / 5760 + t2 ** 4 / 403200)
    s, c = np.sin(theta), np.cos(theta)
    return a, b, (theta * c - s) / t2, (theta * s - (1 - c)) / t2


def _skew(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


class TangentModel(Model):
    """A robot on a moving base in the tangent space at a fixed centre x0: a Euclidean model for the analyses
    that solve or sample around a point (``find_equilibrium``, ``validity``).

    Its states are z = (q (-) q0, v), named :attr:`ChartModel.tangent_states` — the coordinates of ``linearize``'s
    A (Pinocchio's ``difference``: SE(3)'s logarithm for a floating base, SE(2)'s for a planar one) — and
    ``f(t, z, u) = z'``, so its Jacobian at z = (0, v0) is that A. The base is at q0 Exp(delta) with delta =
    (rho, phi): the integrators' chart (robodyn.mechanisms.floating.chart: position and rotation apart, p = p0 + R0
    d_p) at
    d = (V(phi) rho, phi), V the left Jacobian of SO(3) (SE(3)'s translation part), and so

        phi' = d_phi',    rho' = V^-1 (d_p' - V'(phi)[phi'] rho)

    from the chart's rates (the robot's compiled ``chart_rhs``); joints and velocities are as stored. A point z
    is the stored state :meth:`stored`. The coordinates cover a rotation of less than a turn around x0.

    Reference: J. Sola, J. Deray, D. Atchuthan, "A micro Lie theory for state estimation in robotics",
    arXiv:1812.01537 (2018), eqs. (174)-(176) (SE(3)'s V) and example 6 (SE(2)).
    """

    kind = "tangent"

    def __init__(self, chart: ChartModel, centre: Vector):
        robot = chart.robot
        self.chart_model, self.robot = chart, robot
        self.centre = np.array(robot.normalized(np.asarray(centre, dtype=float)), dtype=float)
        self.centre.setflags(write=False)
        self.name = robot.name
        self.states = chart.tangent_states
        self.inputs = robot.inputs
        self.outputs = self.states
        self.parameters = robot.parameters

    def units(self) -> dict[str, str]:
        units = self.robot.units()
        rates = {"base_dx": "m", "base_dy": "m", "base_dz": "m", "base_rx": "rad", "base_ry": "rad", "base_rz": "rad",
                 "base_dtheta": "rad"}
        return {**{k: v for k, v in units.items() if k in self.states or k in self.inputs},
                **{k: v for k, v in rates.items() if k in self.states}}

    @property
    def outputs_are_states(self) -> bool:
        return True

    def _parts(self, z: Vector) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The translation rho, the rotation phi (or the angle) and V (3 x 3 or 2 x 2) of z's base part."""
        if self.robot.base == "floating":
            rho, phi = z[:3], z[3:6]
            b, c, _, _ = _rotation_coefficients(float(np.sqrt(phi @ phi)))
            skew = _skew(phi)
            return rho, phi, np.eye(3) + b * skew + c * (skew @ skew)
        a, b, _, _ = _planar_coefficients(float(z[2]))
        return z[:2], z[2:3], np.array([[a, -b], [b, a]])

    def chart_state(self, z: Vector) -> np.ndarray:
        """The chart state ``[c, q_joints, v, d]`` ``(nq + nv + nb,)`` of the point ``z`` ``(2 nv,)``."""
        robot = self.robot
        nb, base, nv = robot.nb, robot.joint.nq, robot.nv
        rho, phi, V = self._parts(z)
        y = np.concatenate([self.centre, V @ rho, phi])
        y[base: robot.nq] += z[nb:nv]
        y[robot.nq: robot.nq + nv] = z[nv:]
        return y

    def stored(self, z: Vector) -> np.ndarray:
        """The stored states ``(..., nq + nv)`` of the points ``z`` ``(..., 2 nv)``: x0 (+) z."""
        z = np.asarray(z, dtype=float)
        rows = z.reshape(-1, z.shape[-1])
        charted = np.array([self.chart_state(row) for row in rows]).reshape(*z.shape[:-1], -1)
        return self.chart_model.project(charted)

    def coordinates(self, x: Vector) -> np.ndarray:
        """The points ``(..., 2 nv)`` of stored states ``x`` ``(..., nq + nv)``: (q (-) q0, v)."""
        from robodyn.mechanisms.floating.configuration import configuration_difference

        robot = self.robot
        x = np.asarray(x, dtype=float)
        q = configuration_difference(robot.base, robot.nv, self.centre[: robot.nq], x[..., : robot.nq])
        return np.concatenate([q, x[..., robot.nq:]], -1)

    def _f(self, t: float, z: Vector, u: Vector, p: Vector) -> Any:
        robot = self.robot
        base, nq, nv = robot.joint.nq, robot.nq, robot.nv
        rates = robot.call("chart_rhs", t, self.chart_state(z), u, p)
        rho, phi, V = self._parts(z)
        d_rate = rates[nq + nv:]
        if robot.base == "floating":
            turn = d_rate[3:]
            b, c, db, dc = _rotation_coefficients(float(np.sqrt(phi @ phi)))
            along = float(phi @ turn)
            skew, skew_rate = _skew(phi), _skew(turn)
            dV = (db * along * skew + b * skew_rate + dc * along * (skew @ skew)
                  + c * (skew_rate @ skew + skew @ skew_rate))
            translation = np.linalg.solve(V, d_rate[:3] - dV @ rho)
        else:
            turn = d_rate[2:]
            _, _, da, dbp = _planar_coefficients(float(phi[0]))
            dV = turn[0] * np.array([[da, -dbp], [dbp, da]])
            translation = np.linalg.solve(V, d_rate[:2] - dV @ rho)
        return np.concatenate([translation, turn, rates[base: nq], rates[nq: nq + nv]])

    def _h(self, t: float, z: Vector, u: Vector, p: Vector) -> Any:
        return np.array(z, dtype=float)
