"""A model from plain Python callables: :class:`System` (f and h as functions of float64 vectors).

The contract's numeric members come from :class:`robodyn.model.system.Model`; a ``System`` has no closed forms, so
consumers differentiate it numerically (complex step when its functions accept complex numbers, else central
differences) and simulate it on the interpreted path. With ``sample=T`` it is a discrete-time model (``f`` the
update map x[k+1] = f(t_k, x[k], u[k])): a diagram runs it as a sampled block, calling it once per instant (a
controller or an estimator whose step is Python code: a QP solver, a filter), while the rest of the diagram stays
compiled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from numpy.typing import ArrayLike

from robodyn.base.errors import InputError
from robodyn.base.numbers import check_period
from robodyn.model.roles import Role
from robodyn.model.system import Model, Vector, default_values, name_tuple
from robodyn.model.values import check_names

__all__ = ["System"]


class System(Model):
    """A model from plain Python callables.

    Parameters
    ----------
    f
        ``f(t, x, u, p) -> xdot`` with ``x`` ``(n,)``, ``u`` ``(m,)``, ``p`` ``(n_params,)`` float64
        arrays in the order of the names given here, returning ``(n,)``.
    states, inputs
        Names of the states and inputs.
    h
        Optional ``h(t, x, u, p) -> y`` returning ``(len(outputs),)``. Without it ``y = x`` and the
        outputs are named like the states.
    outputs
        Output names (required with ``h``).
    parameters
        Parameter names and default values, in the order ``p`` has.
    name
        The model's name.
    sample
        A sample period T in s: f is then the update map of a discrete-time model (which may have no states: a
        sampled, held static map).
    rest
        Optional ``rest(t, x, u, p) -> x_rest or None``: the state the model rests at near x with inputs u
        (:meth:`rest_state`).
    role
        What the model does in a loop that reports show (robodyn.model.roles), if anything.

    Shapes are checked on every call; a wrong shape raises :class:`~robodyn.base.errors.ShapeError`.

    Examples
    --------
    >>> sys = System(lambda t, x, u, p: [x[1], -p[0] * x[0]], states=["q", "v"], parameters={"k": 4.0})
    >>> sys.f(0.0, {"q": 1.0, "v": 0.0})
    array([ 0., -4.])
    """

    def __init__(
        self,
        f: Callable[..., ArrayLike],
        states: Sequence[str],
        inputs: Sequence[str] | None = None,
        *,
        h: Callable[..., ArrayLike] | None = None,
        outputs: Sequence[str] | None = None,
        parameters: Mapping[str, float] | None = None,
        name: str = "system",
        sample: float | None = None,
        rest: Callable[..., Vector | None] | None = None,
        role: Role | None = None,
    ):
        if not callable(f):
            raise InputError(f"system {name!r}: f must be callable f(t, x, u, p), got {type(f).__name__}")
        if h is not None and not callable(h):
            raise InputError(f"system {name!r}: h must be callable h(t, x, u, p), got {type(h).__name__}")
        if h is None and outputs is not None:
            raise InputError(f"system {name!r}: outputs are named but no h is given: pass h=...")
        if h is not None and outputs is None:
            raise InputError(f"system {name!r}: h is given but outputs are not named: pass outputs=[...]")
        self.name = name
        self.states = name_tuple(states, "states")
        self.inputs = name_tuple(inputs, "inputs")
        self.outputs = name_tuple(outputs, "outputs") if h is not None else self.states
        self.parameters = default_values(parameters, f"system {name!r}")
        groups = {"states": self.states, "inputs": self.inputs, "parameters": tuple(self.parameters)}
        if h is not None:
            groups["outputs"] = self.outputs
        check_names(groups, where=f"system {name!r}")
        self._period = None if sample is None else check_period(sample, f"system {name!r}")
        if not self.states and self._period is None:
            raise InputError(f"system {name!r}: a model needs at least one state (or a sample period: a sampled "
                             "static map)")
        self._rhs = f
        self._out = h
        self._rest, self._roles = rest, (() if role is None else (role,))

    def _f(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return self._rhs(t, x, u, p)

    def _h(self, t: float, x: Vector, u: Vector, p: Vector) -> Any:
        return x.copy() if self._out is None else self._out(t, x, u, p)

    def rest_state(self, t: float, x: Vector, u: Vector, p: Vector) -> Vector | None:
        """The ``rest`` callable's answer (None without one)."""
        return None if self._rest is None else self._rest(t, x, u, p)

    def roles(self) -> tuple[Role, ...]:
        return self._roles

    kind = "python"

    @property
    def sample_period(self) -> float | None:
        """The sample period T in s (then ``f`` is the update map), or None for a continuous-time system."""
        return self._period

    @property
    def outputs_are_states(self) -> bool:
        return self._out is None
