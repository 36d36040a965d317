"""Linear time-invariant models x' = A x + B u, y = C x + D u, and their discrete-time form x[k+1] = A x[k] + B u[k]."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn import display
from robodyn.base.errors import InputError, NumericalError, ShapeError, UnknownNameError
from robodyn.base.names import RESERVED_NAMES, is_qualified_name, is_valid_name
from robodyn.linear.systems import check_period, require_continuous
from robodyn.model.system import Model, Vector, check_names

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from robodyn.linear.controllability import Controllability, Observability
    from robodyn.linear.lti import StepInfo
    from robodyn.linear.margins import Margins
    from robodyn.model.protocol import ModelContract

__all__ = ["DISCRETIZATIONS", "LinearSystem", "check_period", "control_module", "require_continuous"]

#: ``discretize(dt, method)``: robodyn's name -> scipy.signal.cont2discrete's (Tustin is scipy's "bilinear").
DISCRETIZATIONS: Final[Mapping[str, str]] = MappingProxyType({"zoh": "zoh", "foh": "foh", "tustin": "bilinear"})

_EMPTY: Mapping[str, float] = MappingProxyType({})
_EMPTY_UNITS: Mapping[str, str] = MappingProxyType({})


def _array(value: ArrayLike | None, label: str, name: str) -> NDArray[np.float64]:
    if value is None:
        raise ShapeError(f"linear system {name!r}: {label} is required")
    try:
        return np.array(value, dtype=float, ndmin=2)
    except (TypeError, ValueError):
        raise InputError(f"linear system {name!r}: {label} must be a matrix of numbers, got {value!r}") from None


def _matrix(value: ArrayLike | None, shape: tuple[int, int], label: str, name: str) -> NDArray[np.float64]:
    matrix = np.zeros(shape) if value is None else _array(value, label, name)
    if matrix.size == 0:
        matrix = matrix.reshape(shape)
    if matrix.shape != shape:
        raise ShapeError(f"linear system {name!r}: {label} has shape {matrix.shape}, expected {shape}")
    if not np.all(np.isfinite(matrix)):
        raise InputError(f"linear system {name!r}: {label} contains non-finite entries: give finite numbers")
    matrix.setflags(write=False)
    return matrix


def _default_names(names: Sequence[str] | None, prefix: str, count: int) -> tuple[str, ...]:
    return tuple(names) if names is not None else tuple(f"{prefix}{i + 1}" for i in range(count))


def _units(values: Mapping[str, str] | None, names: set[str], name: str) -> Mapping[str, str]:
    """Checked ``declared_units``: text by state, input or output name (read-only)."""
    if values is None:
        return _EMPTY_UNITS
    if not isinstance(values, Mapping):
        raise InputError(f"linear system {name!r}: declared_units must be a mapping name -> unit, e.g. "
                         f"{{'q': 'rad'}}, got {type(values).__name__}")
    for key, unit in values.items():
        if key not in names:
            raise UnknownNameError(f"linear system {name!r}: declared_units names {key!r}, which is not one of its "
                                   f"states, inputs or outputs ({', '.join(sorted(names))})")
        if not isinstance(unit, str):
            raise InputError(f"linear system {name!r}: the unit of {key!r} must be text such as 'rad', got {unit!r}")
    return MappingProxyType(dict(values))


def _source_units(model: ModelContract) -> Mapping[str, str]:
    """``model.units()`` of its states, inputs and outputs, computed once per model (kept in its memo: units do
    not depend on parameters)."""
    store = model.memo()
    units = store.get("linear system units")
    if units is None:
        names = {*model.states, *model.inputs, *model.outputs}
        units = MappingProxyType({k: v for k, v in model.units().items() if k in names})
        store["linear system units"] = units
    return units


def control_module() -> ModuleType:
    """python-control, imported on first use (an optional extra)."""
    try:
        return importlib.import_module("control")
    except ImportError:
        raise InputError("python-control is not installed: install robodyn[control] "
                         "(pip install 'robodyn[control]')") from None


#: python-control refuses '.' in a signal's or a system's name (it means subsystem.signal there): a diagram's
#: qualified names (``plant.q``) cross as ``plant/q``, which no robodyn name holds, and come back as they were.
CONTROL_DOT: Final = "/"


def _control_name(name: str) -> str:
    return name.replace(".", CONTROL_DOT)


def _labels(system: Any, attribute: str) -> tuple[str, ...] | None:
    """python-control's signal labels if every one is a valid robodyn name, a diagram's ``block/signal`` read as
    ``block.signal`` (its defaults ``x[0]`` are not names)."""
    labels = tuple(str(label).replace(CONTROL_DOT, ".") for label in getattr(system, attribute, None) or ())
    if labels and all((is_valid_name(label) or is_qualified_name(label)) and label not in RESERVED_NAMES
                      for label in labels):
        return labels
    return None


@dataclass(frozen=True, slots=True, eq=False)
class LinearSystem(Model):
    """Linear model x' = A x + B u, y = C x + D u (or, with ``dt``, x[k+1] = A x[k] + B u[k], y[k] = C x[k] + D u[k]),
    with names. Frozen; arrays are read-only.

    Parameters
    ----------
    A : (n, n)
    B : (n, m), or ``None`` for no inputs
    C : (p, n), or ``None`` for ``y = x`` (C = I)
    D : (p, m), or ``None`` for zeros
    states, inputs, outputs
        Names; default ``x1.., u1.., y1..`` (outputs default to the state names when C is ``None``).
    name
        The model's name.
    x_op, u_op : (n,), (m,), optional
        The operating point a linearization was taken at (the model is then in deviations from it).
    method
        How the matrices were obtained (``"symbolic"``, ``"central"``, ...), if by linearization.
    error_estimate
        An estimate of the largest absolute error in the matrices, if known.
    dt
        None for continuous time; a sample period > 0 in s for a discrete-time system, whose ``f`` is the update
        map A x + B u (:attr:`sample_period`). ``simulate`` steps it (method ``"discrete"``), ``modes`` gives
        its poles z; analyses of differential equations (validity, existence, equilibria) refuse it.
    declared_units
        Units by state, input or output name (``{"q": "rad"}``); ``linearize`` copies the model's.

    The analyses of a control engineer are methods: :meth:`discretize`, :meth:`step_info`,
    :meth:`frequency_response`, :meth:`bode`, :meth:`margins`, :meth:`controllability`, :meth:`observability`
    (computed by :mod:`robodyn.linear.lti` and :mod:`robodyn.linear.controllability`); controllers by
    :func:`robodyn.lqr` and :func:`robodyn.place`.
    """

    # Arguments may be None or array-likes; __post_init__ turns them into read-only float arrays and names.
    A: NDArray[np.float64]
    B: NDArray[np.float64] = None  # type: ignore[assignment]
    C: NDArray[np.float64] = None  # type: ignore[assignment]
    D: NDArray[np.float64] = None  # type: ignore[assignment]
    states: tuple[str, ...] = None  # type: ignore[assignment]
    inputs: tuple[str, ...] = None  # type: ignore[assignment]
    outputs: tuple[str, ...] = None  # type: ignore[assignment]
    name: str = "linear"
    x_op: NDArray[np.float64] | None = None
    u_op: NDArray[np.float64] | None = None
    method: str | None = None
    error_estimate: float | None = None
    dt: float | None = None
    declared_units: Mapping[str, str] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        name = self.name
        set_ = object.__setattr__
        for label in ("states", "inputs", "outputs"):
            value = getattr(self, label)
            if isinstance(value, str):
                raise InputError(f"linear system {name!r}: {label} must be a list of names, got the string "
                                 f"{value!r}: write [{value!r}]")
            if value is not None:
                set_(self, label, tuple(value))
        A = _array(self.A, "A", name)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
            raise ShapeError(f"linear system {name!r}: A must be a non-empty square matrix, got shape {A.shape}")
        n = A.shape[0]
        m = len(self.inputs) if self.inputs is not None else (
            0 if self.B is None else _array(self.B, "B", name).shape[1]
        )
        identity_output = self.C is None
        p = n if identity_output else (
            len(self.outputs) if self.outputs is not None else _array(self.C, "C", name).shape[0]
        )
        set_(self, "A", _matrix(A, (n, n), "A", name))
        set_(self, "B", _matrix(self.B, (n, m), "B", name))
        set_(self, "C", _matrix(np.eye(n) if identity_output else self.C, (p, n), "C", name))
        set_(self, "D", _matrix(self.D, (p, m), "D", name))
        states = _default_names(self.states, "x", n)
        set_(self, "states", states)
        set_(self, "inputs", _default_names(self.inputs, "u", m))
        set_(self, "outputs", states if identity_output and self.outputs is None
             else _default_names(self.outputs, "y", p))
        for label, names, size in (("states", self.states, n), ("inputs", self.inputs, m),
                                   ("outputs", self.outputs, p)):
            if len(names) != size:
                raise ShapeError(f"linear system {name!r}: {len(names)} {label} named for size {size}")
        groups = {"states": self.states, "inputs": self.inputs}
        if self.outputs != self.states:
            groups["outputs"] = self.outputs
        check_names(groups, where=f"linear system {name!r}", qualified=True)  # a diagram's: plant.q
        for label, value, size in (("x_op", self.x_op, n), ("u_op", self.u_op, m)):
            if value is not None:
                vector = np.array(value, dtype=float).reshape(-1)
                if vector.shape != (size,):
                    raise ShapeError(f"linear system {name!r}: {label} has {vector.size} entries, expected {size}")
                vector.setflags(write=False)
                set_(self, label, vector)
        if self.dt is not None:
            set_(self, "dt", check_period(self.dt, f"linear system {name!r}"))
        set_(self, "declared_units", _units(self.declared_units, {*self.states, *self.inputs, *self.outputs}, name))

    @classmethod
    def from_checked(
        cls,
        A: NDArray[np.float64],
        B: NDArray[np.float64],
        C: NDArray[np.float64],
        D: NDArray[np.float64],
        *,
        states: tuple[str, ...],
        inputs: tuple[str, ...],
        outputs: tuple[str, ...],
        name: str,
        x_op: NDArray[np.float64] | None = None,
        u_op: NDArray[np.float64] | None = None,
        method: str | None = None,
        error_estimate: float | None = None,
        source: ModelContract | None = None,
        frozen: bool = False,
    ) -> LinearSystem:
        """Construct without validation, for callers that built checked arrays from a validated model.

        The caller guarantees float64 arrays of consistent shapes with finite entries, and names taken from
        a model (already checked). The arrays are made read-only (``frozen``: they are already, views of one
        read-only buffer) and must not be written afterwards. ``source``, the model the matrices describe,
        gives the sample period (``dt``) and the units. ``linearize`` uses this on its hot path; everything
        else should call the constructor.
        """
        if not frozen:
            for array in (A, B, C, D, x_op, u_op):
                if array is not None:
                    array.setflags(write=False)
        return cls.from_fields(A, B, C, D, x_op, u_op, states, inputs, outputs, name, method, error_estimate,
                              None if source is None else source.sample_period,
                              _EMPTY_UNITS if source is None else _source_units(source))

    @classmethod
    def from_fields(cls, A: NDArray[np.float64], B: NDArray[np.float64], C: NDArray[np.float64],
                   D: NDArray[np.float64], x_op: NDArray[np.float64] | None, u_op: NDArray[np.float64] | None,
                   states: tuple[str, ...], inputs: tuple[str, ...], outputs: tuple[str, ...], name: str,
                   method: str | None, error_estimate: float | None, dt: float | None,
                   units: Mapping[str, str]) -> LinearSystem:
        """:meth:`from_checked` with read-only arrays and every field given, in order, ``dt`` and the units
        included: for callers that keep a model's fields and make many systems of it (linearize's lean path).
        Nothing is checked or copied."""
        self = object.__new__(cls)
        # the slots' own setters (module globals bound once below): 0.4 us less than object.__setattr__ by name
        _set_A(self, A)
        _set_B(self, B)
        _set_C(self, C)
        _set_D(self, D)
        _set_x_op(self, x_op)
        _set_u_op(self, u_op)
        _set_states(self, states)
        _set_inputs(self, inputs)
        _set_outputs(self, outputs)
        _set_name(self, name)
        _set_method(self, method)
        _set_error_estimate(self, error_estimate)
        _set_dt(self, dt)
        _set_declared_units(self, units)
        return self

    def __getstate__(self) -> tuple[Any, ...]:
        """The fields for pickle and deepcopy, the units as a plain dict (a read-only mapping proxy does not pickle)."""
        return tuple(dict(value) if name == "declared_units" else value
                     for name, value in ((f.name, getattr(self, f.name)) for f in fields(self)))

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for f, value in zip(fields(self), state):
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            object.__setattr__(self, f.name, MappingProxyType(value) if f.name == "declared_units" else value)

    # --- interoperability -----------------------------------------------------------------------------
    def to_control(self) -> Any:
        """This model as a python-control ``StateSpace`` with the signal names (dt = 0 for continuous time, the
        sample period for a discrete-time system). python-control refuses '.' in names: a diagram's ``plant.q`` is
        ``plant/q`` there (and :meth:`from_control` reads it back as ``plant.q``).

        Requires the ``control`` extra; raises :class:`~robodyn.base.errors.InputError` without it.
        """
        control = control_module()
        return control.StateSpace(np.array(self.A), np.array(self.B), np.array(self.C), np.array(self.D),
                                  0 if self.dt is None else self.dt,
                                  states=[_control_name(n) for n in self.states],
                                  inputs=[_control_name(n) for n in self.inputs],
                                  outputs=[_control_name(n) for n in self.outputs], name=_control_name(self.name))

    @classmethod
    def from_control(cls, system: Any, *, name: str | None = None) -> LinearSystem:
        """A LinearSystem from a python-control ``StateSpace``: continuous time for dt = 0 (or None), discrete
        time for a sample period dt > 0. dt = True (discrete time, period unspecified) is refused: set the period.

        Signal names come from ``state_labels``, ``input_labels`` and ``output_labels`` when every label of
        a group is a valid robodyn name; python-control's defaults (``x[0]``, ...) become ``x1``, ... .
        ``name`` defaults to the system's name.
        """
        control = control_module()
        if not isinstance(system, control.StateSpace):
            raise InputError(f"from_control expects a control.StateSpace, got {type(system).__name__}: "
                             "convert it with control.ss(sys)")
        period = None
        if not system.isctime():
            if system.dt is True:
                raise InputError(f"{system.name!r} is a discrete-time system with an unspecified sample period "
                                 "(dt=True): set it first, e.g. sys.dt = 0.01")
            period = check_period(system.dt, f"from_control: {system.name!r}")
        n, m = np.shape(system.B)
        p = np.shape(system.C)[0]
        return cls(np.asarray(system.A, dtype=float), np.asarray(system.B, dtype=float).reshape(n, m),
                   np.asarray(system.C, dtype=float), np.asarray(system.D, dtype=float).reshape(p, m),
                   states=_labels(system, "state_labels") or _default_names(None, "x", n),
                   inputs=_labels(system, "input_labels") or _default_names(None, "u", m),
                   outputs=_labels(system, "output_labels") or _default_names(None, "y", p),
                   name=name if name is not None else str(system.name).replace(CONTROL_DOT, "."), dt=period)

    def to_scipy(self) -> Any:
        """This model as a ``scipy.signal.StateSpace`` (with ``dt`` when discrete; scipy keeps no signal names)."""
        import scipy.signal  # slow to import, needed only here

        matrices = (np.array(self.A), np.array(self.B), np.array(self.C), np.array(self.D))
        if self.dt is None:
            return scipy.signal.StateSpace(*matrices)
        return scipy.signal.StateSpace(*matrices, dt=self.dt)

    # --- the analyses of linear systems (robodyn.linear.lti) ------------------------------------------
    def discretize(self, dt: float, method: str = "zoh") -> LinearSystem:
        """The discrete-time system sampled with period ``dt``, by ``scipy.signal.cont2discrete``.

        Parameters
        ----------
        dt
            The sample period in s (> 0).
        method
            ``"zoh"`` (zero-order hold: exact at the samples for inputs held over each period), ``"foh"``
            (first-order hold: inputs linear between samples; D changes) or ``"tustin"`` (the bilinear map
            s = 2 (z - 1) / (dt (z + 1))).

        Returns
        -------
        LinearSystem
            With ``dt``, the same names, units, ``x_op`` and ``u_op``; ``method`` records both steps
            (``"symbolic+zoh"``); ``error_estimate`` is kept only when it is 0 (exact matrices).
        """
        if self.dt is not None:
            raise InputError(f"discretize: {self.name!r} is already discrete-time (dt = {self.dt:g} s): "
                             "discretize the continuous-time system it came from")
        period = check_period(dt, "discretize")
        if method not in DISCRETIZATIONS:
            raise InputError(f"discretize: unknown method {method!r}: one of {', '.join(DISCRETIZATIONS)}")
        from scipy.signal import cont2discrete  # slow to import, needed only here

        n, m = self.B.shape
        B, D = (self.B, self.D) if m else (np.zeros((n, 1)), np.zeros((self.D.shape[0], 1)))  # scipy needs inputs
        with np.errstate(all="ignore"):
            try:
                Ad, Bd, Cd, Dd, _ = cont2discrete((self.A, B, self.C, D), period, method=DISCRETIZATIONS[method])
            except np.linalg.LinAlgError:  # tustin: I - A dt/2 singular
                raise NumericalError(f"discretize: I - A dt/2 is singular for dt = {period:g} (A has the eigenvalue "
                                     f"2/dt): choose another dt or method 'zoh'") from None
        A_d, B_d, C_d, D_d = (np.asarray(a, dtype=float) for a in (Ad, Bd[:, :m], Cd, Dd[:, :m]))
        if not all(np.all(np.isfinite(a)) for a in (A_d, B_d, C_d, D_d)):
            raise NumericalError(f"discretize: the sampled matrices of {self.name!r} overflow for dt = {period:g}: "
                                 "choose a smaller dt")
        recorded = method if self.method is None else f"{self.method}+{method}"
        return LinearSystem(A_d, B_d, C_d, D_d, states=self.states, inputs=self.inputs, outputs=self.outputs,
                            name=self.name, x_op=self.x_op, u_op=self.u_op, method=recorded,
                            error_estimate=0.0 if self.error_estimate == 0.0 else None, dt=period,
                            declared_units=self.declared_units)

    def step_info(self, T: ArrayLike | None = None, *, settling_threshold: float = 0.02,
                  rise_limits: tuple[float, float] = (0.1, 0.9)) -> StepInfo:
        """Rise and settling time, overshoot, peak ... of every (output, input) step response, python-control's
        definitions on the exact response: see :func:`robodyn.linear.lti.step_info`."""
        from robodyn.linear.lti import step_info

        return step_info(self, T, settling_threshold=settling_threshold, rise_limits=rise_limits)

    def frequency_response(self, w: ArrayLike) -> NDArray[np.complex128]:
        """G at s = j w (z = exp(j w dt) when discrete), shape ``(len(w), p, m)``: see
        :func:`robodyn.linear.lti.frequency_response`."""
        from robodyn.linear.lti import frequency_response

        return frequency_response(self, w)

    def bode(self, w: ArrayLike | None = None, *, margins: bool = True) -> Figure:
        """The Bode diagram (dB and degrees against rad/s), margins marked for one input and output: see
        :func:`robodyn.linear.plots.bode`."""
        from robodyn.linear.plots import bode

        return bode(self, w, margins=margins)

    def margins(self, *, input: str | None = None, output: str | None = None) -> Margins:
        """Gain, phase and stability margins of this system taken as a loop transfer L, from ``input`` to ``output``
        (needed when there are several), from the exact crossings: see :func:`robodyn.linear.margins.margins`."""
        from robodyn.linear.margins import margins

        return margins(self, input=input, output=output)

    def controllability(self, *, tolerance: float | None = None) -> Controllability:
        """The verdict (the PBH test on the balanced system), the Kalman matrix's rank and the Gramian: see
        :func:`robodyn.linear.controllability.controllability`."""
        from robodyn.linear.controllability import controllability

        return controllability(self, tolerance=tolerance)

    def observability(self, *, tolerance: float | None = None) -> Observability:
        """The verdict (the PBH test on the balanced system), the Kalman matrix's rank and the Gramian: see
        :func:`robodyn.linear.controllability.observability`."""
        from robodyn.linear.controllability import observability

        return observability(self, tolerance=tolerance)

    @property
    def parameters(self) -> Mapping[str, float]:  # type: ignore[override]
        """A linear model has no parameters."""
        return _EMPTY

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.A @ x + self.B @ u

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self.C @ x + self.D @ u

    # --- the model contract (robodyn.model.protocol) ---------------------------------------------------
    kind = "linear"

    @property
    def jacobian_method(self) -> str:
        return "linear"

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        return self.A, self.B

    def output_jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        return self.C, self.D

    @property
    def parameter_jacobian_method(self) -> str:
        return "linear"

    def parameter_jacobian_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """df/dp: ``(n, 0)``, a linear model has no parameters."""
        return np.zeros((self.A.shape[0], 0))

    def output_parameter_jacobian_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """dh/dp: ``(n_outputs, 0)``."""
        return np.zeros((self.C.shape[0], 0))

    @property
    def sample_period(self) -> float | None:
        """``dt``: the sample period in s of a discrete-time system, None for continuous time."""
        return self.dt

    def units(self) -> dict[str, str]:
        """``declared_units`` (for a linearization: the units of the model it came from)."""
        return dict(self.declared_units)

    def linear_model(self, params: Any = None) -> LinearSystem:
        return self

    def affine_form(self, p: Vector) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(A, B, 0) for continuous time; None for a discrete-time system (A x + B u is not a derivative)."""
        return None if self.dt is not None else (self.A, self.B, np.zeros(self.A.shape[0]))

    def linear_by_construction(self) -> str:
        if self.dt is not None:
            return f"x[k+1] = A x[k] + B u[k] with constant matrices (discrete time, dt = {self.dt:g} s)"
        return "x' = A x + B u with constant matrices"

    def explicit_form(self, max_coordinates: int) -> Any:
        """x' = A x + B u with A and B as sympy Floats (exact binary values)."""
        import sympy

        from robodyn.model.expr import symbol
        from robodyn.model.protocol import ExplicitForm

        def floats(array: np.ndarray) -> Any:
            return sympy.Matrix([[sympy.Float(float(v)) for v in row] for row in np.asarray(array)])

        x = tuple(symbol(s) for s in self.states)
        u = tuple(symbol(s) for s in self.inputs)
        f = floats(self.A) * sympy.Matrix(x)
        if u:
            f += floats(self.B) * sympy.Matrix(u)
        return ExplicitForm(f, x, u, (), floats(self.A))

    def h_many(self, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: Any) -> np.ndarray:
        return np.asarray(x @ self.C.T + u @ self.D.T, dtype=float)

    @property
    def eigenvalues(self) -> NDArray[np.complex128]:
        """Eigenvalues of A, sorted by real part then imaginary part, shape ``(n,)``."""
        values = np.linalg.eigvals(self.A).astype(complex)
        order = np.lexsort((values.imag, values.real))
        return np.asarray(values[order], dtype=np.complex128)

    # --- rich display in Jupyter ---------------------------------------------------------------------
    def _matrices(self) -> list[tuple[str, NDArray[np.float64], tuple[str, ...], tuple[str, ...]]]:
        """(label, matrix, row names, column names) of A, B, C, D, leaving out empty ones (no inputs)."""
        blocks = [("A", self.A, self.states, self.states), ("B", self.B, self.states, self.inputs),
                  ("C", self.C, self.outputs, self.states), ("D", self.D, self.outputs, self.inputs)]
        return [b for b in blocks if b[1].size]

    def _repr_latex_(self) -> str:
        """A, B, C and D as LaTeX ``bmatrix`` (B and D left out without inputs), as display math."""
        lines = [f"{label} &= {display.matrix_latex(matrix)}" for label, matrix, _, _ in self._matrices()]
        return "$$\\begin{aligned} " + " \\\\ ".join(lines) + " \\end{aligned}$$"

    def _repr_html_(self) -> str:
        """The names and the matrices as tables labelled with the state, input and output names."""
        summary: list[tuple[str, object]] = [("states", ", ".join(self.states)),
                                             ("inputs", ", ".join(self.inputs) or "none"),
                                             ("outputs", ", ".join(self.outputs))]
        for label, point, names in (("x_op", self.x_op, self.states), ("u_op", self.u_op, self.inputs)):
            if point is not None and point.size:
                summary.append((label, ", ".join(f"{n} = {display.number(v)}" for n, v in zip(names, point.tolist()))))
        if self.method is not None:
            summary.append(("method", self.method))
        if self.error_estimate is not None:
            summary.append(("error estimate", self.error_estimate))
        if self.dt is not None:
            summary.insert(0, ("time", self._time_text()))
        parts = [display.heading(f"LinearSystem {self.name!r}: {self._equations()}"),
                 display.html_table(summary, row_header=True)]
        parts += [display.matrix_html(matrix, rows, columns, title=label)
                  for label, matrix, rows, columns in self._matrices()]
        if not self.inputs:
            parts.append(display.note("no inputs: B and D are empty"))
        return display.block(parts)

    def _time_text(self) -> str:
        return "continuous-time" if self.dt is None else f"discrete-time, dt = {self.dt:g} s"

    def _equations(self) -> str:
        if self.dt is None:
            return "x' = A x + B u, y = C x + D u"
        return f"x[k+1] = A x[k] + B u[k], y[k] = C x[k] + D u[k] ({self._time_text()})"

    def __repr__(self) -> str:
        time = "" if self.dt is None else f"{self._time_text()}, "
        return (
            f"LinearSystem(name={self.name!r}, {time}states={list(self.states)}, inputs={list(self.inputs)}, "
            f"outputs={list(self.outputs)},\n  A={self.A.tolist()},\n  B={self.B.tolist()},\n"
            f"  C={self.C.tolist()},\n  D={self.D.tolist()})"
        )


# LinearSystem.from_fields's setters: each slot's own descriptor, bound once (the frozen dataclass forbids setattr)
_set_A, _set_B, _set_C, _set_D, _set_x_op, _set_u_op, _set_states, _set_inputs, _set_outputs, _set_name, _set_method, \
    _set_error_estimate, _set_dt, _set_declared_units = (
        getattr(LinearSystem, name).__set__ for name in (
            "A", "B", "C", "D", "x_op", "u_op", "states", "inputs", "outputs", "name", "method", "error_estimate", "dt",
            "declared_units"))
