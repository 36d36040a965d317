"""The model contract: the capabilities every consumer asks a model for.

Simulation, the stiff solvers, linearization, equilibria, existence, classification, validity and the
command line never test a model's class or read its private attributes: they ask for a capability,
and a model that lacks one answers ``None`` (or ``False``). :class:`~robodyn.model.system.Model`
implements every method below with that answer; each model kind overrides what it can do.

Numbers
    ``f_raw(t, x, u, p)`` and ``h_raw(t, x, u, p)`` evaluate on float64 vectors in model order that are
    already validated (``arguments`` validates user values) and return shape-checked ``(n,)`` and
    ``(n_outputs,)`` arrays. ``h_many`` and ``h_batch`` evaluate outputs along trajectories.
Derivatives
    ``jacobian_method`` names the exact derivative the model has (``"symbolic"``, ``"manipulator"``,
    ``"linear"``) or is ``None``; then ``jacobians_raw`` gives df/dx, df/du and ``linearization_raw``
    all of A, B, C, D at once (the fast path of :func:`robodyn.linearize`). ``output_jacobians_raw``
    gives exact dh/dx, dh/du, or None.
Code
    ``kernel_rhs_source()`` is the numba source of ``rhs(t, x, u, p, out)`` for the compiled kernels, or
    None for models given as Python callables (which then run the same kernels interpreted).
    ``symbol_table()`` gives the symbols of states, inputs and parameters for event expressions.
Structure
    ``linear_model(params)``: the exact LinearSystem of a model linear by construction;
    ``affine_form(p)``: (A, B, c) with x' = A x + B u + c for a linear time-invariant model;
    ``manipulator()``: the second-order parts (:class:`Manipulator`); ``explicit_form(limit)``: x' = f as
    sympy expressions with df/dx, for interval arithmetic; ``classification_basis`` and
    ``classification_equations()``: how :func:`robodyn.classify` can decide; ``scalar_damping()``;
    ``show_text()`` / ``latex_text()``: what ``robodyn show`` prints; ``kinematics()``: the frames of a
    rigid-body model and their compiled functions (:class:`KinematicTree`), None for other models.
Caches
    ``memo()`` is a per-model store for what consumers derive from the model's equations (simulation
    plans, for instance). A model owns it; copies made by ``with_parameters`` share it, so nothing in
    it may depend on parameter values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["ExplicitForm", "KinematicTree", "Manipulator", "ModelContract"]


@dataclass(frozen=True, slots=True)
class ExplicitForm:
    """x' = f(t, x, u, p) as sympy expressions, with the exact Jacobian df/dx.

    f : sympy Matrix (n, 1); x, u, p : the symbols in model order; jacobian : sympy Matrix (n, n)
    """

    f: Any
    x: tuple[Any, ...]
    u: tuple[Any, ...]
    p: tuple[Any, ...]
    jacobian: Any


@runtime_checkable
class KinematicTree(Protocol):
    """The frames of a rigid-body model (robodyn.model.chain_frames.ChainFrames).

    ``frames``: every frame name; ``parents``: frame -> the frame it hangs from (None for the base);
    ``body_parents``: each body's parent body (-1: the base), in the body order of ``origins``;
    ``evaluate(quantity, frame, x, p)``: ``pose`` (12: R row-major, p), ``jacobian`` (6n, world-aligned),
    ``bias`` (6: J'q') of a frame, or ``origins`` (frame None: 3 per body) at states x ``(N, 2n)``,
    ``(N, size)``.
    """

    frames: tuple[str, ...]
    parents: Mapping[str, str | None]
    body_parents: tuple[int, ...]

    def evaluate(self, quantity: str, frame: str | None, x: np.ndarray, p: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class Manipulator(Protocol):
    """The parts of a second-order model M(q) q'' = r(t, q, q', u), state ``[q..., q_dot...]``."""

    @property
    def n_coordinates(self) -> int: ...

    @property
    def coordinates(self) -> tuple[str, ...]: ...

    def mass_raw(self, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> np.ndarray:
        """M(q) ``(n, n)``."""
        ...

    def rhs_terms(self, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """r = Q - c ``(n,)`` and dr/du ``(n, m)`` at a point."""
        ...

    def check_mass(self, mass: np.ndarray, x: np.ndarray) -> None:
        """Raise SingularMatrixError naming q when ``mass`` is not positive definite."""
        ...


@runtime_checkable
class ModelContract(Protocol):
    """What a model offers its consumers (implemented with "not available" defaults by Model)."""

    name: str
    states: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    parameters: Mapping[str, float]

    @property
    def kind(self) -> str: ...

    @property
    def order(self) -> int: ...

    @property
    def jacobian_method(self) -> str | None: ...

    @property
    def outputs_are_states(self) -> bool: ...

    @property
    def classification_basis(self) -> str: ...

    def arguments(self, t: Any, x: Any, u: Any, params: Any) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]: ...

    def f_raw(self, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> np.ndarray: ...

    def h_raw(self, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> np.ndarray: ...

    def h_many(self, t: np.ndarray, x: np.ndarray, u: np.ndarray, p: Any) -> np.ndarray: ...

    def jacobians_raw(self, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]: ...

    def output_jacobians_raw(self, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray
                             ) -> tuple[np.ndarray, np.ndarray] | None: ...

    def linearization_raw(self, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray
                          ) -> tuple[np.ndarray, ...]: ...

    def kernel_rhs_source(self) -> str | None: ...

    def symbol_table(self) -> Mapping[str, Any] | None: ...

    def linear_model(self, params: Any = None) -> Any: ...

    def affine_form(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None: ...

    def manipulator(self) -> Manipulator | None: ...

    def kinematics(self) -> KinematicTree | None: ...

    def position_limits(self) -> dict[str, tuple[float | None, float | None]]: ...

    def units(self) -> dict[str, str]: ...

    def energy(self, x: Any, params: Any = None) -> tuple[float, float] | None: ...

    def explicit_form(self, max_coordinates: int) -> ExplicitForm | None: ...

    def classification_equations(self) -> Sequence[tuple[str, Any]] | None: ...

    def memo(self) -> dict[Any, Any]: ...
