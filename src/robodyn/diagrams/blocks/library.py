"""The block library: the actuators, sensors and controllers of block diagrams, as ordinary symbolic models.

Each function returns a :class:`~robodyn.model.kinds.symbolic.SymbolicSystem` (compiled, with exact Jacobians) whose
ports are the promised names below; a diagram file names them as ``model:`` (``{model: pid, parameters: {kp:
20}}``), the parameters being this function's arguments. Blocks without dynamics (``gain``, ``sum``,
``saturation``, ``quantizer``, ``lti`` with ``D`` alone, ``dc_motor`` with ``L = 0``) have no states: y = h(t, u).

========== ================== ============== ===================================================================
block      inputs             outputs        equations
========== ================== ============== ===================================================================
gain       u                  y              y = k u
sum        u1 … un            y              y = Σ sᵢ uᵢ, sᵢ the signs (``"+-"``: y = u1 − u2)
integrator u                  y              x' = u, y = y0 + x (x starts at 0: y starts at y0)
first_order u                 y              tau y' + y = K u
pid        r, y               u              e = r − y, v = kp e + ki xi + kd (e − xd)/tf, xi' = e, xd' = (e − xd)/tf
saturation u                  y              y = min(upper, max(lower, u)) (its corners are events in a diagram)
lti        u1 … um            y1 … yp        x' = A x + B u, y = C x + D u (or num/den, SISO)
dc_motor   v, omega           tau, i         L i' = v − R i − ke N omega, tau = eta N kt i
quantizer  u                  y              y = q round(u / q) = q floor(u / q + 1/2)
========== ================== ============== ===================================================================

Structure is fixed when a block is made: a ``pid`` made with ``ki = 0`` has no integral state (a PD is a static
block when ``kd = 0`` too), one with ``kd = 0`` no derivative state, so closed-loop models have no spurious
modes; give a gain a non-zero value at creation to tune it later with ``--param``. Likewise ``dc_motor`` with
``L = 0`` is the static limit i = (v − ke N omega) / R, and ``lti``'s matrices and ``sum``'s signs are not
parameters.

The motor's rotor inertia reflected through the gear, N² Jm, is not in the block: it belongs to the driven
joint (the ``armature`` of chain and URDF joints), whose inertia it adds to.

With limits ``umin``/``umax`` the ``pid`` output is u = min(umax, max(umin, v)) and its integral has
back-calculation anti-windup (Åström & Hägglund, *Advanced PID Control*, 2006, §3.5): xi' = e + (u − v) / (ki tt),
tracking time ``tt`` (default the integral time kp / ki).

A block has at most :data:`MAX_BLOCK_PORTS` inputs, outputs and states each, and an ``lti`` block at most
:data:`MAX_LTI_ENTRIES` nonzero matrix entries: larger ones are refused before anything is built (their generated
code takes minutes to compile).

Each block is tested against its closed form (tests/diagrams/blocks/test_blocks.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import sympy

from robodyn.base.budget import check_count
from robodyn.base.errors import InputError, ShapeError, UnknownNameError
from robodyn.base.numbers import finite_number
from robodyn.model.expr import symbol
from robodyn.model.kinds.symbolic import SymbolicSystem
from robodyn.model.names import did_you_mean

__all__ = ["BLOCKS", "MAX_BLOCK_PORTS", "MAX_LTI_ENTRIES", "dc_motor", "first_order", "gain", "integrator", "lti",
           "make_block", "pid", "quantizer", "saturation", "sum"]

#: Inputs, outputs or states of one library block: a sum of 100 inputs compiles in 0.1 s, of 1,000 in 6 s, and
#: 3,000 overflow Python's recursion in the generated code.
MAX_BLOCK_PORTS: Final = 100
#: Nonzero entries of an lti block's A, B, C and D, each a term of its generated code: a dense 30-state block is
#: built and evaluated in ~1 s, a 60-state one (3,700 entries) in 35 s.
MAX_LTI_ENTRIES: Final = 1_000
_FINITE_NUMBER: Final = "{what} must be a finite number, got {value!r}"


def _check_ports(name: str, **counts: int) -> None:
    """Refuse a block of more than MAX_BLOCK_PORTS inputs, outputs or states (``counts``: by kind)."""
    for kind, count in counts.items():
        check_count(count, MAX_BLOCK_PORTS, f"its {kind}", "split it into smaller blocks", f"block {name!r}")


def _number(value: Any, what: str, block: str, *, positive: bool = False, nonzero: bool = False) -> float:
    """A block's finite number (> 0 with ``positive``, not 0 with ``nonzero``), or InputError naming the block."""
    number = finite_number(value, f"block {block!r}: {what}", not_real=_FINITE_NUMBER, not_finite=_FINITE_NUMBER,
                           positive="{what} must be positive, got {number}" if positive else None)
    if nonzero and number == 0:
        raise InputError(f"block {block!r}: {what} must not be zero")
    return number


def gain(k: float = 1.0, *, sample: float | None = None, name: str = "gain") -> SymbolicSystem:
    """y = k u: a static gain (no states)."""
    return _sampled(SymbolicSystem([], ["u"], [], parameters={"k": _number(k, "k", name)}, outputs={"y": "k*u"},
                                   name=name), "gain", sample)


def sum(signs: str = "++", *, sample: float | None = None, name: str = "sum") -> SymbolicSystem:
    """y = Σ sᵢ uᵢ over the inputs u1 … un, one per character of ``signs`` (``"+-"``: y = u1 − u2)."""
    if not isinstance(signs, str) or not signs or set(signs) - {"+", "-"}:
        raise InputError(f"block {name!r}: signs must be text of + and - (one per input, e.g. \"+-\"), got {signs!r}")
    check_count(len(signs), MAX_BLOCK_PORTS, "its inputs (one per sign)", "add the signals with several sum blocks",
                f"block {name!r}")
    inputs = [f"u{i + 1}" for i in range(len(signs))]
    terms = [symbol(u) if s == "+" else -symbol(u) for u, s in zip(inputs, signs)]
    return _sampled(SymbolicSystem([], inputs, [], outputs={"y": sympy.Add(*terms)}, name=name), "sum", sample)


def integrator(y0: float = 0.0, *, sample: float | None = None, name: str = "integrator") -> SymbolicSystem:
    """x' = u, y = y0 + x: the integral of u starting at y0 (the state x starts at 0)."""
    return _sampled(SymbolicSystem(["x"], ["u"], {"x": "u"}, parameters={"y0": _number(y0, "y0", name)},
                                   outputs={"y": "y0 + x"}, name=name), "integrator", sample)


def first_order(K: float = 1.0, tau: float = 1.0, *, sample: float | None = None,
                name: str = "first_order") -> SymbolicSystem:
    """tau y' + y = K u: a first-order lag (a sensor's or an actuator's), state and output y."""
    values = {"K": _number(K, "K", name), "tau": _number(tau, "tau", name, positive=True)}
    return _sampled(SymbolicSystem(["y"], ["u"], {"y": "(K*u - y)/tau"}, parameters=values, name=name),
                    "first_order", sample)


def pid(kp: float = 1.0, ki: float = 0.0, kd: float = 0.0, tf: float = 0.01, umin: float | None = None,
        umax: float | None = None, tt: float | None = None, *, sample: float | None = None,
        discretization: str = "backward_euler", name: str = "pid") -> SymbolicSystem:
    """A PID controller with a filtered derivative, u = kp e + ki ∫e + kd s/(tf s + 1) e with e = r − y.

    States: ``xi`` (∫e, when ki ≠ 0) and ``xd`` (the derivative filter's, when kd ≠ 0): v = kp e + ki xi +
    kd (e − xd)/tf. With ``umin``/``umax``, u = min(umax, max(umin, v)) and xi' = e + (u − v)/(ki tt)
    (back-calculation anti-windup, tracking time ``tt``, default kp/ki).
    """
    values = {"kp": _number(kp, "kp", name)}
    ki_value, kd_value = _number(ki, "ki", name), _number(kd, "kd", name)
    e = "(r - y)"
    v = f"kp*{e}"
    states: list[str] = []
    dynamics: dict[str, str] = {}
    if ki_value != 0:
        values["ki"] = ki_value
        states.append("xi")
        v += " + ki*xi"
    if kd_value != 0:
        values["kd"], values["tf"] = kd_value, _number(tf, "tf", name, positive=True)
        states.append("xd")
        dynamics["xd"] = f"({e} - xd)/tf"
        v += f" + kd*({e} - xd)/tf"
    limited = umin is not None or umax is not None
    u = v
    if umin is not None:
        values["umin"] = _number(umin, "umin", name)
        u = f"max(umin, {u})"
    if umax is not None:
        values["umax"] = _number(umax, "umax", name)
        u = f"min(umax, {u})"
    if umin is not None and umax is not None and values["umin"] >= values["umax"]:
        raise InputError(f"block {name!r}: umin = {values['umin']} must be below umax = {values['umax']}")
    if "xi" in states:
        if limited:
            values["tt"] = _number(values["kp"] / ki_value if tt is None else tt, "tt", name, positive=True)
            dynamics["xi"] = f"{e} + (({u}) - ({v}))/(ki*tt)"
        else:
            dynamics["xi"] = e
    elif tt is not None:
        raise InputError(f"block {name!r}: tt (the anti-windup tracking time) needs an integral: give ki")
    if sample is not None:
        from robodyn.diagrams.blocks.sampled import discrete_pid
        from robodyn.model.kinds.discrete import check_period

        return discrete_pid(values, check_period(sample, f"block {name!r}"), discretization,
                            (umin is not None, umax is not None), name)
    made = SymbolicSystem(states, ["r", "y"], {s: dynamics[s] for s in states}, parameters=values,
                          outputs={"u": u}, name=name)
    unlimited = made.expression(v, "the unlimited output")
    return _with_corners(made, [unlimited - symbol(k) for k in ("umin", "umax") if k in values])


def saturation(lower: float = -1.0, upper: float = 1.0, *, sample: float | None = None,
               name: str = "saturation") -> SymbolicSystem:
    """y = min(upper, max(lower, u))."""
    values = {"lower": _number(lower, "lower", name), "upper": _number(upper, "upper", name)}
    if values["lower"] >= values["upper"]:
        raise InputError(f"block {name!r}: lower = {values['lower']} must be below upper = {values['upper']}")
    made = SymbolicSystem([], ["u"], [], parameters=values, outputs={"y": "min(upper, max(lower, u))"}, name=name)
    return _sampled(_with_corners(made, [symbol("u") - symbol("lower"), symbol("u") - symbol("upper")]),
                    "saturation", sample)


def quantizer(q: float = 1.0, *, sample: float | None = None, name: str = "quantizer") -> SymbolicSystem:
    """y = q round(u / q) = q floor(u / q + 1/2) (halves rounded up): an encoder of resolution q (dy/du = 0
    between steps)."""
    step = symbol("q")
    rounded = sympy.floor(symbol("u") / step + sympy.Rational(1, 2))
    made = SymbolicSystem([], ["u"], [], parameters={"q": _number(q, "q", name, positive=True)},
                          outputs={"y": step * rounded}, name=name)
    steps = sympy.sin(sympy.pi * (symbol("u") / step + sympy.Rational(1, 2)))  # zero where the output steps
    return _sampled(_with_corners(made, [steps]), "quantizer", sample)


def dc_motor(R: float = 1.0, L: float = 1e-3, kt: float = 0.1, ke: float = 0.1, N: float = 1.0, eta: float = 1.0,
             *, sample: float | None = None, name: str = "dc_motor") -> SymbolicSystem:
    """A DC motor behind a gear of ratio N and efficiency eta: voltage v and load-side speed omega in, load-side
    torque tau and current i out (its state ``i_a``). L i' = v − R i − ke N omega, tau = eta N kt i; with L = 0
    the static limit i = (v − ke N omega)/R (no state). The rotor inertia N² Jm belongs to the driven joint (its
    armature)."""
    values = {"R": _number(R, "R", name, positive=True), "kt": _number(kt, "kt", name),
              "ke": _number(ke, "ke", name), "N": _number(N, "N", name, nonzero=True), "eta": _number(eta, "eta", name)}
    inductance = _number(L, "L", name)
    if inductance < 0:
        raise InputError(f"block {name!r}: L must be positive (or 0 for the static limit), got {inductance}")
    if inductance == 0:
        current = "(v - ke*N*omega)/R"
        motor = SymbolicSystem([], ["v", "omega"], [], parameters=values,
                               outputs={"tau": f"eta*N*kt*{current}", "i": current}, name=name)
    else:
        values = {"R": values["R"], "L": inductance, **{k: values[k] for k in ("kt", "ke", "N", "eta")}}
        motor = SymbolicSystem(["i_a"], ["v", "omega"], {"i_a": "(v - R*i_a - ke*N*omega)/L"}, parameters=values,
                               outputs={"tau": "eta*N*kt*i_a", "i": "i_a"}, name=name)
    return _sampled(_with_units(motor, {"v": "V", "omega": "rad/s", "tau": "N m", "i": "A", "i_a": "A", "R": "ohm",
                                        "L": "H", "kt": "N m/A", "ke": "V s/rad"}), "dc_motor", sample)


def _with_corners(model: SymbolicSystem, corners: Sequence[Any]) -> SymbolicSystem:
    """``model`` declaring where its equations have corners (``switching_expressions``: a diagram stops its
    integration there, robodyn.diagrams.switching)."""
    object.__setattr__(model, "_switching", tuple(corners))
    return model


def _with_units(model: SymbolicSystem, units: Mapping[str, str]) -> SymbolicSystem:
    """``model`` with the units of the names it has (``robodyn show``, plots and reports print them)."""
    names = {*model.states, *model.inputs, *model.outputs, *model.parameters}
    object.__setattr__(model, "declared_units", MappingProxyType({k: v for k, v in units.items() if k in names}))
    return model


def lti(A: Any = None, B: Any = None, C: Any = None, D: Any = None, *, num: Any = None, den: Any = None,
        inputs: Sequence[str] | None = None, outputs: Sequence[str] | None = None, sample: float | None = None,
        name: str = "lti") -> SymbolicSystem:
    """x' = A x + B u, y = C x + D u (states x1 … xn, inputs u1 … um, outputs y1 … yp unless named); ``D`` alone
    is a static gain matrix; ``num``/``den`` (SISO, highest power first) a proper transfer function, realized in
    controllable canonical form (scipy.signal.tf2ss)."""
    if num is not None or den is not None:
        if any(m is not None for m in (A, B, C, D)):
            raise InputError(f"block {name!r}: give A, B, C, D or num/den, not both")
        A, B, C, D = _realization(num, den, name)
    matrices = [None if m is None else _matrix(m, k, name) for m, k in zip((A, B, C, D), "ABCD")]
    a, b, c, d = matrices
    if a is None and d is None:
        raise InputError(f"block {name!r}: give A, B, C (and D), D alone (a static gain), or num/den")
    n = 0 if a is None else a.shape[0]
    if a is not None and a.shape != (n, n):
        raise ShapeError(f"block {name!r}: A has shape {a.shape}; it must be square (n x n)")
    m = (b.shape[1] if b is not None else d.shape[1] if d is not None else 0)
    p = (c.shape[0] if c is not None else d.shape[0] if d is not None else 0)
    b = np.zeros((n, m)) if b is None else b
    c = np.zeros((p, n)) if c is None else c
    d = np.zeros((p, m)) if d is None else d
    for label, matrix, shape in (("B", b, (n, m)), ("C", c, (p, n)), ("D", d, (p, m))):
        if matrix.shape != shape:
            raise ShapeError(f"block {name!r}: {label} has shape {matrix.shape}, expected {shape} for {n} states, "
                             f"{m} inputs and {p} outputs")
    if m == 0 or p == 0:
        raise ShapeError(f"block {name!r}: an lti block needs at least one input and one output")
    _check_ports(name, states=n, inputs=m, outputs=p)
    check_count(int(np.sum([np.count_nonzero(matrix) for matrix in (a, b, c, d) if matrix is not None])),
                MAX_LTI_ENTRIES, "its nonzero matrix entries", "reduce the model (fewer states) or split it into "
                "blocks", f"block {name!r}")
    u_names = _port_names(inputs, "u", m, "inputs", name)
    y_names = _port_names(outputs, "y", p, "outputs", name)
    x_symbols = [symbol(f"x{i + 1}") for i in range(n)]
    u_symbols = [symbol(u) for u in u_names]
    x_vector, u_vector = sympy.Matrix(n, 1, x_symbols), sympy.Matrix(m, 1, u_symbols)
    exact = np.vectorize(lambda v: sympy.Float(float(v)) if v != int(v) else sympy.Integer(int(v)), otypes=[object])

    def product(matrix: np.ndarray, vector: sympy.Matrix) -> sympy.Matrix:
        return sympy.Matrix(matrix.shape[0], matrix.shape[1], list(exact(matrix).ravel())) * vector \
            if matrix.size else sympy.zeros(matrix.shape[0], 1)

    f = product(a, x_vector) + product(b, u_vector) if a is not None else sympy.zeros(0, 1)
    h = product(c, x_vector) + product(d, u_vector)
    return _sampled(SymbolicSystem([s.name for s in x_symbols], u_names, list(f),
                                   outputs=dict(zip(y_names, list(h))), name=name), "lti", sample)


def _sampled(block: SymbolicSystem, kind: str, sample: float | None) -> SymbolicSystem:
    """``block`` itself, or its exact discrete form at the period ``sample`` (robodyn.diagrams.blocks.sampled)."""
    if sample is None:
        return block
    from robodyn.diagrams.blocks.sampled import discrete_form
    from robodyn.model.kinds.discrete import check_period

    return discrete_form(block, kind, check_period(sample, f"block {block.name!r}"))


def _matrix(value: Any, label: str, name: str) -> np.ndarray:
    try:
        matrix = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"block {name!r}: {label} must be a matrix of numbers (a list of rows), got {value!r}") \
            from None
    if matrix.ndim == 0:
        matrix = matrix.reshape(1, 1)
    if matrix.ndim != 2:
        raise ShapeError(f"block {name!r}: {label} must be a matrix (a list of rows), got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise InputError(f"block {name!r}: {label} has entries that are not finite numbers")
    return matrix


def _realization(num: Any, den: Any, name: str) -> tuple[Any, Any, Any, Any]:
    try:
        numerator, denominator = (np.atleast_1d(np.array(v, dtype=float)) for v in (num, den))
    except (TypeError, ValueError):
        raise InputError(f"block {name!r}: num and den must be lists of numbers (highest power first)") from None
    if numerator.ndim != 1 or denominator.ndim != 1 or not denominator.size or not np.all(np.isfinite(
            np.concatenate([numerator, denominator]))):
        raise InputError(f"block {name!r}: num and den must be lists of finite numbers (highest power first)")
    denominator = np.trim_zeros(denominator, "f")
    numerator = np.trim_zeros(numerator, "f") if np.any(numerator) else np.zeros(1)
    if not denominator.size:
        raise InputError(f"block {name!r}: den is zero")
    if numerator.size > denominator.size:
        raise InputError(f"block {name!r}: num/den is improper (numerator of higher degree): it has no state-space "
                         "form; add a filter pole")
    _check_ports(name, states=denominator.size - 1)  # the realization's states, one per pole
    import scipy.signal

    A, B, C, D = scipy.signal.tf2ss(numerator, denominator)
    return (A if A.size else None), (B if A.size else None), (C if A.size else None), D


def _port_names(given: Sequence[str] | None, stem: str, count: int, what: str, name: str) -> list[str]:
    if given is None:
        return [f"{stem}{i + 1}" for i in range(count)]
    names = [str(g) for g in given]
    if len(names) != count:
        raise ShapeError(f"block {name!r}: {len(names)} {what} named for {count}")
    return names


#: block name -> the function that makes it (``model:`` of a diagram file)
BLOCKS: Final[Mapping[str, Callable[..., SymbolicSystem]]] = {
    "gain": gain, "sum": sum, "integrator": integrator, "first_order": first_order, "pid": pid,
    "saturation": saturation, "lti": lti, "dc_motor": dc_motor, "quantizer": quantizer,
}


def make_block(kind: str, parameters: Mapping[str, Any] | None = None, *, name: str | None = None) -> SymbolicSystem:
    """The library block ``kind`` made with ``parameters`` (its function's arguments), named ``name`` (default
    ``kind``); an unknown kind or argument is an UnknownNameError listing the known ones."""
    import inspect

    factory = BLOCKS.get(kind)
    if factory is None:
        raise UnknownNameError(f"unknown block {kind!r} (blocks: {', '.join(BLOCKS)})"
                               f"{did_you_mean(kind, list(BLOCKS))}")
    allowed = [p for p in inspect.signature(factory).parameters if p != "name"]
    given = dict(parameters or {})
    unknown = [k for k in given if k not in allowed]
    if unknown:
        raise UnknownNameError(f"block {kind!r} has no parameter {unknown[0]!r} (its parameters: {', '.join(allowed)})"
                               f"{did_you_mean(unknown[0], allowed)}")
    return factory(**given, name=name or kind)
