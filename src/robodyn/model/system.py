"""What a model is: named first-order dynamics x' = f(t, x, u, p), y = h(t, x, u, p).

:class:`Model` is the base every model shares (plain callables, symbolic, linear, mechanical,
Lagrangian). It owns the names and the conversion of user values — arrays or ``{name: value}``
mappings — into float64 vectors, and checks shapes and finiteness with errors that say what to change.
:class:`System` wraps plain Python callables.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from robodyn.base.errors import InputError, ShapeError
from robodyn.model.lean import LEAN_KEY, lean_f
from robodyn.model.parts import ModelParts
from robodyn.model.values import Values, Vector, check_names, real_array, real_scalar, values_to_vector

if TYPE_CHECKING:
    from robodyn.model.exported import ExportedFunctions
    from robodyn.model.kinds.linear import LinearSystem
    from robodyn.model.kinds.mechanical import ScalarDamping
    from robodyn.model.kinds.symbolic_form import SymbolicForm
    from robodyn.model.lean import RhsCall
    from robodyn.model.protocol import (
        Chart,
        Constraints,
        ExplicitForm,
        Impacts,
        KinematicTree,
        Manipulator,
        SymbolTable,
        TorqueRegressor,
    )

# the conversion of user values lives in robodyn.model.values; its names stay importable from here
__all__ = ["Model", "Values", "check_names", "default_values", "name_tuple", "real_array", "require_euclidean",
           "require_model", "values_to_vector"]


def require_model(value: object, where: str) -> None:
    """InputError unless ``value`` is a robodyn model (the API's entry points check what they are given)."""
    if not isinstance(value, Model):
        hint = f"robodyn.load({value!r})" if isinstance(value, str) else "robodyn.load(...) or a model class"
        raise InputError(f"{where}: expected a robodyn model, got {type(value).__name__}: make one with {hint}")


def require_euclidean(model: Any, where: str) -> None:
    """InputError for a model whose states lie on a manifold (a floating base), which ``where`` does not handle
    yet: its linearization is in the tangent space (q (-) q0), not in the stored coordinates."""
    if model.chart() is not None:
        raise InputError(f"{where}: model {model.name!r} has a moving base (states on a manifold: a unit quaternion): "
                         f"{where} in its tangent space is not available yet; simulate it, or compute its rigid-body "
                         "quantities (mass_matrix, acceleration, centroidal_map)")


class Model(ModelParts):
    """Base class of every model: names, parameters and numeric ``f`` and ``h``.

    Subclasses provide the attributes ``name``, ``states``, ``inputs``, ``outputs`` (tuples of names),
    ``parameters`` (read-only mapping name -> default) and the raw numeric methods
    ``_f(t, x, u, p)`` and ``_h(t, x, u, p)`` working on float64 vectors in model order.
    """

    __slots__ = ()

    name: str
    states: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    parameters: Mapping[str, float]

    #: Parameters a model file derives from others (``I: m*l**2``), name -> expression in the free parameters.
    #: They are substituted into the equations, so they follow every override of ``parameters`` and are not
    #: parameters themselves: :meth:`parameter_vector` refuses a value for one.
    derived_parameters: Mapping[str, str] = MappingProxyType({})

    #: Units by state, input or output name from a model file's ``units:`` (see :meth:`units`).
    declared_units: Mapping[str, str] = MappingProxyType({})

    #: 2 for models written as second-order equations (mechanical, Lagrangian), else 1.
    @property
    def order(self) -> int:
        return 1

    @property
    def n_states(self) -> int:
        return len(self.states)

    @property
    def n_inputs(self) -> int:
        return len(self.inputs)

    @property
    def n_outputs(self) -> int:
        return len(self.outputs)

    # --- values -----------------------------------------------------------------------------------
    def state_vector(self, x: Values, *, default: float | None = None) -> Vector:
        """``x`` as a float64 vector ``(n_states,)``; mappings must name every state unless ``default``."""
        return values_to_vector(x, self.states, "state", default=default)

    def input_vector(self, u: Values | None) -> Vector:
        """``u`` as a float64 vector ``(n_inputs,)``; ``None`` and names left out mean 0."""
        return values_to_vector(u, self.inputs, "input", default=0.0)

    def parameter_vector(self, params: Values | None = None) -> Vector:
        """Parameter values ``(n_params,)``: the defaults, overridden by name (or a full array).

        A derived parameter (:attr:`derived_parameters`) cannot be given: it follows the ones it is computed from.
        """
        if isinstance(params, Mapping) and self.derived_parameters:
            for key in params:
                if key in self.derived_parameters:
                    raise InputError(f"model {self.name!r}: parameter {key!r} is derived ({key} = "
                                     f"{self.derived_parameters[key]}) and follows the parameters it is computed "
                                     "from: set those instead, or give it a number in the model file")
        defaults = np.fromiter(self.parameters.values(), float, len(self.parameters))
        return values_to_vector(params, tuple(self.parameters), "parameter", default=defaults)

    def with_parameters(self, params: Mapping[str, float] | None = None, **values: float) -> Self:
        """A copy of the model whose parameter defaults are overridden by name.

        Compiled and symbolic parts are shared with the original (parameters are arguments to them).

        Examples
        --------
        >>> heavy = robodyn.load("pendulum").with_parameters(m=2.0)  # doctest: +SKIP
        """
        merged = {**(params or {}), **values}
        if not merged:
            return self
        vector = self.parameter_vector(merged)
        clone = copy.copy(self)
        object.__setattr__(clone, "parameters", MappingProxyType(dict(zip(self.parameters, vector.tolist()))))
        return clone

    # --- evaluation ---------------------------------------------------------------------------------
    def f(self, t: float, x: Values, u: Values | None = None, params: Values | None = None) -> Vector:
        """State derivative x' = f(t, x, u, p).

        Parameters
        ----------
        t : float
        x : (n_states,) or mapping state name -> value
        u : (n_inputs,) or mapping input name -> value; missing inputs are 0
        params : mapping parameter name -> value overriding the defaults, or a full array

        Returns
        -------
        xdot : (n_states,) float64
        """
        if params is None and type(t) is float:  # float64 vectors at the defaults: robodyn.model.lean
            try:  # this thread's binding of the model's compiled f, called here: one call less per f
                lean = self.__dict__[LEAN_KEY]
                xdot = lean.f(t, x, u) if lean.defaults is self.parameters else lean_f(self, t, x, u)
            except (KeyError, AttributeError):  # not bound yet (in this thread), or no instance dictionary
                xdot = lean_f(self, t, x, u)
            if xdot is not None:
                return xdot
        return self.f_raw(*self.arguments(t, x, u, params))

    def h(self, t: float, x: Values, u: Values | None = None, params: Values | None = None) -> Vector:
        """Outputs y = h(t, x, u, p), shape ``(n_outputs,)``; arguments as for :meth:`f`."""
        return self.h_raw(*self.arguments(t, x, u, params))

    def arguments(
        self, t: float, x: Values, u: Values | None, params: Values | None
    ) -> tuple[float, Vector, Vector, Vector]:
        """``(t, x, u, p)`` validated: a finite time and float64 vectors in model order (the raw forms' input)."""
        time = real_scalar(t, "time t")
        return time, self.state_vector(x), self.input_vector(u), self.parameter_vector(params)

    _arguments = arguments  # the name the model classes use internally

    def f_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> Vector:
        """f on validated float64 vectors (see :meth:`arguments`); the result's shape is checked, ``(n,)``."""
        return self._checked(self._f(t, x, u, p), self.n_states, "f")

    def h_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> Vector:
        """h on validated float64 vectors; the result's shape is checked, ``(n_outputs,)``."""
        return self._checked(self._h(t, x, u, p), self.n_outputs, "h")

    def _checked(self, value: Any, size: int, which: str) -> Vector:
        result = np.asarray(value, dtype=float)
        if result.ndim == 0 and size == 1:
            result = result.reshape(1)
        if result.shape != (size,):
            raise ShapeError(
                f"model {self.name!r}: {which} returned shape {result.shape}, expected ({size},): "
                f"return one value per {'state' if which == 'f' else 'output'}"
            )
        return result

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        raise NotImplementedError

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        raise NotImplementedError

    def _rhs_call(self, p: Vector) -> RhsCall | None:
        """The model's ``_f`` as raw machine code with the parameters ``p`` bound (:class:`robodyn.model.lean.RhsCall`)
        for :meth:`f`'s lean path, or None (the default): kinds whose f is one compiled function override it."""
        return None

    def f_many(self, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: Vector) -> np.ndarray:
        """x' at many points: t ``(T,)``, x ``(T, n)``, u ``(T, m)`` (validated float64) and one parameter vector
        -> ``(T, n)``, row k equal to ``f_raw(t[k], x[k], u[k], p)``. A loop over :meth:`f_raw` unless the model
        evaluates the points together (symbolic models: one vectorized call)."""
        rows = [self.f_raw(float(ti), xi, ui, p) for ti, xi, ui in zip(t, x, u)]
        return np.array(rows, dtype=float).reshape(len(rows), self.n_states)

    def h_many(self, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: Any) -> np.ndarray:
        """Outputs along a trajectory: t ``(T,)``, x ``(T, n)``, u ``(T, m)`` -> y ``(T, n_outputs)``.

        ``x`` itself when y = x. ``p`` is one parameter vector, or (from :meth:`h_batch`) a list with one
        entry per parameter: a number, or T values.
        """
        if self.outputs_are_states:
            return x
        rows = [self.h_raw(float(ti), xi, ui, _row(p, k)) for k, (ti, xi, ui) in enumerate(zip(t, x, u))]
        return np.array(rows, dtype=float).reshape(len(rows), self.n_outputs)

    def h_batch(self, t: np.ndarray, xs: np.ndarray, us: np.ndarray, parameters: np.ndarray) -> np.ndarray:
        """Outputs of N runs on one grid: t ``(T,)``, xs ``(N, T, n)``, us ``(N, T, m)``, parameters
        ``(N, n_p)`` -> ``(N, T, n_outputs)`` (``xs`` itself when y = x), in one :meth:`h_many` call."""
        if self.outputs_are_states:
            return xs
        N, T, n = xs.shape
        flat = self.h_many(np.tile(t, N), xs.reshape(N * T, n), us.reshape(N * T, us.shape[2]),
                           _parameter_columns(parameters, T))
        return flat.reshape(N, T, flat.shape[1])

    # --- the model contract (robodyn.model.protocol): "not available" unless a kind overrides -------------
    #: What kind of model this is, as ``robodyn show`` names it.
    kind: str = "model"

    @property
    def jacobian_method(self) -> str | None:
        """The exact derivative the model has (``symbolic``, ``manipulator``, ``linear``), or None."""
        return None

    @property
    def outputs_are_states(self) -> bool:
        """Whether y = x."""
        return False

    @property
    def record_key(self) -> str | None:
        """The content key of the parsed-model record this model was built from (a model file read through the
        cache, robodyn.files.records), which names what was remembered of its runs; None (the default) for
        a model built any other way."""
        return None

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        """Exact df/dx ``(n, n)`` and df/du ``(n, m)`` at a validated point (when :attr:`jacobian_method`)."""
        raise NotImplementedError(f"model {self.name!r} has no exact Jacobian")

    def output_jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector
                             ) -> tuple[np.ndarray, np.ndarray] | None:
        """Exact dh/dx ``(p, n)`` and dh/du ``(p, m)`` at a validated point, or None."""
        if self.outputs_are_states:
            return np.eye(self.n_states), np.zeros((self.n_states, self.n_inputs))
        return None

    @property
    def parameter_jacobian_method(self) -> str | None:
        """The exact df/dp the model has (``symbolic``, ``manipulator``, ``tape``, ``diagram``, ``linear``), or None:
        forward sensitivities then difference f (robodyn.integrate.paths.sensitivities says so in its result)."""
        return None

    def parameter_jacobian_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """Exact df/dp ``(n, n_params)`` at a validated point (when :attr:`parameter_jacobian_method`)."""
        raise NotImplementedError(f"model {self.name!r} has no exact parameter Jacobian")

    def output_parameter_jacobian_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray | None:
        """Exact dh/dp ``(n_outputs, n_params)`` at a validated point, or None (zeros when y = x)."""
        return np.zeros((self.n_states, len(self.parameters))) if self.outputs_are_states else None

    def kernel_parameter_jacobian_source(self) -> str | None:
        """numba source of ``jacp(t, x, u, p, out)`` writing the exact df/dp row-major ``(n, n_params)``, or None."""
        return None

    def linearization_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """A, B, C, D at a validated point, exactly, flat ``[A | B | C | D]`` row-major (when
        :attr:`jacobian_method` is set and the outputs have exact Jacobians)."""
        outputs = self.output_jacobians_raw(t, x, u, p)
        if outputs is None:
            raise NotImplementedError(f"model {self.name!r} has no exact output Jacobian")
        return np.concatenate([np.ravel(m) for m in (*self.jacobians_raw(t, x, u, p), *outputs)]).astype(float)

    def linearization_into(self, t: float, x: Vector, u: Vector, p: Vector, out: np.ndarray) -> None:
        """:meth:`linearization_raw` written into ``out`` (float64, C-contiguous, ``(n(n + m) + p(n + m),)``): the
        form for loops (:class:`robodyn.Linearizer`), which kinds with compiled derivatives fill without allocating."""
        out[...] = self.linearization_raw(t, x, u, p)

    def bound_linearization(self, t: float, p: Vector, out: np.ndarray) -> Callable[[Vector, Vector], float | None]:
        """``run(x, u)`` writing :meth:`linearization_into` at the time ``t`` and parameters ``p`` into ``out``: kinds
        with compiled derivatives bind their buffers once, so that a call pays for little but the compiled code.
        ``run`` leaves a non-finite result in ``out`` for its caller to check, and returns None — or, when every
        other entry of ``out`` stays as the binding wrote it, the sum of the entries it wrote (finite exactly when
        they all are, barring overflow), so that the check reads only those."""
        def run(x: Vector, u: Vector) -> float | None:
            self.linearization_into(t, x, u, p, out)
            return None

        return run

    def linearization_call(self, t: float, p: Vector) -> tuple[Any, np.ndarray] | None:
        """The exact linearization at ``t`` and ``p`` as raw machine code, for callers that own the memory: ``(call,
        template)``, a :class:`robodyn.codegen.llvm.native.RawCall` writing the entries of [A | B | C | D] that vary and
        the flat result ``template``: NaN where the call writes, the constant entries elsewhere; or None (the
        default). Its function returns None, or the sum of the entries it wrote (finite exactly when they all
        are, barring overflow)."""
        return None

    @property
    def compilable(self) -> bool:
        """Whether :meth:`kernel_rhs_source` gives numba source (False for models of Python callables)."""
        return False

    @property
    def self_contained(self) -> bool:
        """Whether the model's own file text determines it: the parsed-model cache (robodyn.files.cached)
        keeps a record only of such models (a diagram reads its blocks from other files)."""
        return True

    def kernel_rhs_source(self) -> str | None:
        """numba source of ``rhs(t, x, u, p, out)`` for the compiled kernels, or None (Python callables)."""
        return None

    def kernel_jacobian_source(self) -> str | None:
        """numba source of ``jac(t, x, u, p, out)`` writing the exact df/dx then df/du (row-major), or None."""
        return None

    def kernel_output_source(self) -> str | None:
        """numba source of ``out_fn(t, x, u, p, out)`` writing the outputs y, or None."""
        return None

    def kernel_event_source(self, events: Sequence[Any]) -> str:
        """numba source of ``event_fn(t, x, u, p, out)`` writing the values of ``events`` (sympy expressions in
        :meth:`symbol_table`'s symbols) at the kernels' state."""
        from robodyn.codegen.source import event_source

        return event_source(self.symbol_table(), events)

    def kernel_chart_source(self) -> str | None:
        """numba source of ``chart(t, x, xdot, p, out)`` for a model integrated in a chart
        (robodyn.mechanisms.floating.chart):
        the state and its derivative moved to the chart centred at x (``2 n`` values), or None."""
        return None

    def chart(self) -> Chart | None:
        """The model the integrators step in when this one's states lie on a manifold (a floating base:
        robodyn.mechanisms.floating.chart.ChartModel, with ``lift``, ``project``, ``tolerances``, ``neutral``), or
        None."""
        return None

    def constraints(self) -> Constraints | None:
        """The bilateral constraints of a model with closed loops or held points (robodyn.mechanisms.loops.constraints.
        ConstraintSet: residuals, assembly, independent coordinates), or None (the default)."""
        return None

    def torque_regressor(self) -> TorqueRegressor | None:
        """Inverse dynamics linear in the model's physical parameters, tau = Y(q, q', q'') theta
        (robodyn.model.protocol.TorqueRegressor: the column names, Y and theta compiled), or None (the default: no
        rigid bodies to identify)."""
        return None

    def exported_functions(self) -> ExportedFunctions | None:
        """The model's functions as outputs of one straight-line tape, for standalone code (robodyn.model.exported.
        ExportedFunctions, which robodyn.export_c writes as C), or None (the default: nothing to export yet)."""
        return None

    def impacts(self) -> Impacts | None:
        """The rigid contacts of a model whose velocities jump at impacts (robodyn.mechanisms.contact.impacts.ImpactSet:
        touchdown and lift-off events, the impact map, resting modes), which ``simulate`` integrates between, or
        None (the default)."""
        return None

    def raw_function(self, which: str) -> Callable[..., Any]:
        """The model's own ``f`` or ``h`` (``which``), unchecked: for probes that pass other shapes (points as
        columns, complex values) and check the results themselves."""
        return self._f if which == "f" else self._h

    def symbol_table(self) -> SymbolTable | None:
        """The model's symbols and expression parser (for events given as text), or None."""
        return None

    def linear_model(self, params: Values | None = None) -> LinearSystem | None:
        """The exact LinearSystem of a model that is linear by construction, or None."""
        return None

    def affine_form(self, p: Vector) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(A, B, c) with x' = A x + B u + c when the model is linear and time-invariant, else None."""
        linear = self.linear_model(p)
        if linear is None:
            return None
        return linear.A, linear.B, np.zeros(self.n_states)

    def manipulator(self) -> Manipulator | None:
        """The second-order parts (:class:`robodyn.model.protocol.Manipulator`), or None."""
        return None

    def kinematics(self) -> KinematicTree | None:
        """The frames and kinematic functions (:class:`robodyn.model.protocol.KinematicTree`), or None."""
        return None

    def position_limits(self) -> dict[str, tuple[float | None, float | None]]:
        """(lower, upper) position limits by coordinate, for those that have any (a URDF's ``<limit>``)."""
        return {}

    def input_limits(self) -> dict[str, tuple[float, float]]:
        """(lower, upper) of the inputs whose range the model's file states (an MJCF actuator's ``ctrlrange``), by
        input; stated, not applied: robodyn passes every input as given."""
        return {}

    def initial_state(self) -> Vector:
        """The state ``(n,)`` a run starts from when it is given none (``simulate(..., x0=None)``, ``robodyn
        simulate`` without ``--x0``): zeros, unless the model states its own (a floating base: no rotation; an MJCF
        robot: MuJoCo's ``qpos0`` at rest). A fresh array."""
        return np.zeros(self.n_states)

    def energy(self, x: Values, params: Values | None = None) -> tuple[float, float] | None:
        """Kinetic and potential energy ``(T, V)`` at the state ``x``, or None when the model has no energies
        (Lagrangian and chain models have them)."""
        return None

    def units(self) -> dict[str, str]:
        """Units of the states, inputs and outputs by name, for those the model knows (plots label axes with
        them): a model file's ``units:``; rigid-body models know their joints' (rad, rad/s, N m or m, m/s, N)."""
        return dict(self.declared_units)

    def mechanical_matrices(self, params: Values | None = None) -> tuple[np.ndarray, ...] | None:
        """``(M, B, K, F)`` of M q'' + B q' + K q = F u with constant matrices, or None."""
        return None

    def explicit_form(self, max_coordinates: int) -> ExplicitForm | None:
        """x' = f as sympy expressions with df/dx (:class:`robodyn.model.protocol.ExplicitForm`), or None.

        Second-order models invert M(q) symbolically for this, so only up to ``max_coordinates``.
        """
        return None

    def symbolic_form(self) -> SymbolicForm | None:
        """The dynamics and outputs as labelled sympy expressions
        (:class:`robodyn.model.kinds.symbolic_form.SymbolicForm`:
        what :func:`robodyn.classify` decides exactly from), or None when the model has no closed forms."""
        return None

    def linear_by_construction(self) -> str | None:
        """A sentence saying why the dynamics are linear whatever the parameters, or None."""
        return None

    def scalar_damping(self) -> ScalarDamping | None:
        """omega_n, zeta and regime (:class:`robodyn.model.kinds.mechanical.ScalarDamping`) of a linear mechanical
        model with one coordinate, else None."""
        return None

    def equation_terms(self) -> list[tuple[str, Any]] | None:
        """Named closed-form terms (M(q), C(q, q') q', g(q), Q) for ``robodyn show``, or None."""
        return None

    def show_text(self) -> str:
        """The equations (or a description) as ``robodyn show`` prints them."""
        return repr(self)

    def latex_text(self) -> str | None:
        """The equations as LaTeX, or None when the model has no symbolic equations."""
        return None

    def latex_lines(self) -> list[str] | None:
        """The equations as LaTeX, one ``lhs = rhs`` per line (dynamics, then outputs: what is typeset line by
        line), or None when the model has no symbolic equations."""
        return None

    # --- rich display in Jupyter (IPython's _repr_*_ protocol) -----------------------------------------
    def _repr_latex_(self) -> str | None:
        """The equations (:meth:`latex_text`) as display math ``$$...$$``, or None when the model has none."""
        latex = self.latex_text()
        return None if latex is None else f"$${latex}$$"

    def _repr_html_(self) -> str:
        """A summary: name, kind, signals, the parameters and the equations (robodyn.display.html.model_html)."""
        from robodyn import display  # for notebooks only

        return display.model_html(self)

    def memo(self) -> dict[Any, Any]:
        """The model's own store for objects derived from its equations (shared by parameter copies).

        Models without an instance dictionary (frozen LinearSystem) give a fresh store: nothing is kept.
        """
        attributes = getattr(self, "__dict__", None)
        if attributes is None:
            return {}
        store = attributes.get("_memo")
        if store is None:
            store = attributes["_memo"] = {}
        return store

    def default_parameters(self) -> tuple[list[float], Vector]:
        """The default parameter values as a list and a read-only array (cached per ``parameters`` mapping:
        a copy with other parameters has another mapping, so a value copied along with the model is not
        reused)."""
        attributes = getattr(self, "__dict__", None)
        cached = attributes.get("_default_parameters") if attributes is not None else None
        if cached is None or cached[0] is not self.parameters:
            vector = self.parameter_vector(None)
            vector.setflags(write=False)
            cached = (self.parameters, tuple(vector.tolist()), vector)
            if attributes is not None:
                attributes["_default_parameters"] = cached
        return list(cached[1]), cached[2]

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, states={list(self.states)}, "
            f"inputs={list(self.inputs)}, outputs={list(self.outputs)}, "
            f"parameters={dict(self.parameters)})"
        )


def _row(p: Any, k: int) -> Any:
    """Parameters of point k: ``p`` itself when it is one vector, else entry k of its varying columns."""
    if isinstance(p, np.ndarray):
        return p
    return np.array([c if np.ndim(c) == 0 else c[k] for c in p], dtype=float)


def _parameter_columns(parameters: np.ndarray, T: int) -> Any:
    """``parameters`` (N, n_p) for N runs of T points flattened to N * T: the one row when all are equal,
    else one value per parameter that is the same in every run and N * T values for each that varies."""
    same = parameters == parameters[0]
    if same.all():
        return parameters[0]
    return [parameters[0, k] if same[:, k].all() else np.repeat(parameters[:, k], T)
            for k in range(parameters.shape[1])]


def name_tuple(values: Iterable[str] | None, what: str) -> tuple[str, ...]:
    """``values`` (a list of names, not one string) as a tuple; None is none. ``what`` names them in errors."""
    if values is None:
        return ()
    if isinstance(values, str):
        raise InputError(f"{what} must be a list of names, got the string {values!r}: write [{values!r}]")
    if not isinstance(values, Iterable):
        raise InputError(f"{what} must be a list of names, got {type(values).__name__}: {values!r:.60}")
    return tuple(values)


def default_values(parameters: Mapping[str, float] | None, where: str) -> Mapping[str, float]:
    """A read-only ``{name: float}`` of a model's default parameters, each a finite real (``where`` names them)."""
    checked = {str(k): real_scalar(v, f"{where}: parameter {k!r}") for k, v in (parameters or {}).items()}
    return MappingProxyType(checked)


def __getattr__(name: str) -> Any:
    """``System`` moved to robodyn.model.kinds.callables; ``from robodyn.model.system import System`` still works."""
    if name == "System":
        from robodyn.model.kinds.callables import System

        return System
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
