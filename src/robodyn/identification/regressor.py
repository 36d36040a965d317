"""The inverse-dynamics regressor: joint torques linear in a robot's physical parameters, tau = Y(q, q', q'') theta.

:func:`regressor` evaluates the model's compiled regressor (the contract's ``torque_regressor()``: chains and URDF
robots on the tape, robodyn.mechanisms.chain.regressor) at one point or at many samples, and returns a
:class:`Regressor`: ``Y``, the column ``names`` and the model's current ``values`` of those parameters, so that
``Y @ values`` is the model's inverse dynamics. The columns are each moving body's ten standard inertial
parameters in its joint frame about the frame's origin — ``<link>.m``, ``.mx``, ``.my``, ``.mz`` (the first moments
m c), ``.Ixx``, ``.Ixy``, ``.Iyy``, ``.Ixz``, ``.Iyz``, ``.Izz`` (the order of Pinocchio's
``computeJointTorqueRegressor``) — then each joint's ``<joint>.armature`` (reflected rotor inertia),
``.viscous``, ``.coulomb`` (times tanh(q'/eps), the model's smoothed Coulomb friction) and, where the joint has
them, ``.coulomb_offset`` and ``.stiffness``. Reference: W. Khalil, E. Dombre, *Modeling, Identification and
Control of Robots*, Hermes Penton 2002.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError, ShapeError
from robodyn.model.protocol import ModelContract, TorqueRegressor
from robodyn.model.system import Values, require_model
from robodyn.model.values import values_to_vector

__all__ = ["Regressor", "evaluate", "model_regressor", "regressor", "samples"]


@dataclass(frozen=True, slots=True, eq=False)
class Regressor:
    """The regressor at one point or at N samples.

    Y : (n, P) or (N, n, P)
        Joint torques per unit of each parameter (rows: ``coordinates``; columns: ``names``).
    names : (P,)
        What each column multiplies.
    values : (P,)
        The model's values of those parameters (at the ``params`` given): ``Y @ values`` is its inverse dynamics.
    coordinates : (n,)
        The rows' joints.
    """

    Y: NDArray[np.float64]
    names: tuple[str, ...]
    values: NDArray[np.float64]
    coordinates: tuple[str, ...]

    def __post_init__(self) -> None:
        size, n = len(self.names), len(self.coordinates)
        if self.Y.ndim not in (2, 3) or self.Y.shape[-2:] != (n, size):
            raise ShapeError(f"Regressor: Y has shape {self.Y.shape}, expected ({n}, {size}) or (N, {n}, {size})")
        if self.values.shape != (size,):
            raise ShapeError(f"Regressor: values has shape {self.values.shape}, expected ({size},)")
        for array in (self.Y, self.values):
            array.setflags(write=False)

    @property
    def torques(self) -> NDArray[np.float64]:
        """``Y @ values``: the inverse dynamics, (n,) or (N, n)."""
        return self.Y @ self.values

    def _repr_html_(self) -> str:
        from robodyn.display import block, heading, html_table

        samples = "one point" if self.Y.ndim == 2 else f"{self.Y.shape[0]} samples"
        rows = [(name, value) for name, value in zip(self.names, self.values)]
        return block([heading(f"Regressor at {samples}: {len(self.coordinates)} joints x {len(self.names)} "
                              "parameters"), html_table(rows, header=("parameter", "value"), row_header=True)])


def model_regressor(model: ModelContract, where: str) -> TorqueRegressor:
    """``model.torque_regressor()``, or InputError naming the models that have one."""
    require_model(model, where)
    found = model.torque_regressor()
    if found is None:
        raise InputError(f"{where}: model {model.name!r} has no rigid-body regressor (chains and URDF robots on the "
                         "tape have one; symbolic models, closed chains and moving bases do not): load a chain file "
                         "or a URDF robot")
    return found


def samples(value: Values | ArrayLike, coordinates: tuple[str, ...], what: str, where: str = "regressor"
            ) -> tuple[NDArray[np.float64], bool]:
    """``value`` as an (N, n) float array — a vector in coordinate order, a mapping by name, or N rows — and
    whether it was one point; a non-finite entry is refused with its row."""
    n = len(coordinates)
    if isinstance(value, Mapping):
        return values_to_vector(value, coordinates, what, default=0.0)[None, :], True
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{where}: {what} must be numbers, got {type(value).__name__}") from None
    if array.ndim not in (1, 2) or array.shape[-1] != n:
        raise ShapeError(f"{where}: {what} has shape {array.shape}: give ({n},) or (N, {n}), one entry per "
                         f"coordinate ({', '.join(coordinates)})")
    rows = array.reshape(-1, n)
    bad = np.flatnonzero(~np.all(np.isfinite(rows), axis=1))
    if bad.size:
        at = f" in row {bad[0]}" if array.ndim == 2 else ""
        raise InputError(f"{where}: {what}{at} is not finite ({rows[bad[0]].tolist()}): give finite numbers")
    return np.ascontiguousarray(rows), array.ndim == 1


def evaluate(found: TorqueRegressor, q: NDArray[np.float64], qd: NDArray[np.float64], qdd: NDArray[np.float64],
             p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Y (N, n, P) at N checked samples of q, q', q'' (N, n) each and the parameter vector ``p``."""
    count, n, size = len(q), len(found.coordinates), len(found.names)
    Y = np.empty((count, n, size))
    found.matrices(np.ascontiguousarray(np.concatenate([q, qd], axis=1)), np.ascontiguousarray(qdd), p,
                   Y.reshape(count, n * size))
    return Y


def regressor(model: ModelContract, q: Values | ArrayLike, qd: Values | ArrayLike, qdd: Values | ArrayLike, *,
              params: Values | None = None) -> Regressor:
    """The regressor of ``model`` at positions ``q``, velocities ``qd`` and accelerations ``qdd``.

    Parameters
    ----------
    model
        A chain or a URDF robot on the tape (``model.torque_regressor()`` is not None).
    q, qd, qdd
        ``(n,)`` in coordinate order (or ``{name: value}`` mappings) for one point, or ``(N, n)`` for N samples.
    params
        Parameter overrides (the geometry and gravity they change enter Y; the inertial ones enter ``values``).

    Returns
    -------
    Regressor
        ``Y`` (n, P) for one point, (N, n, P) for samples; ``Y @ values`` equals ``model.inverse_dynamics``.

    Examples
    --------
    >>> arm = robodyn.load("two_link_arm")  # doctest: +SKIP
    >>> r = robodyn.regressor(arm, [0.1, 0.2], [0.0, 0.0], [0.0, 0.0])  # doctest: +SKIP
    >>> r.Y @ r.values  # the gravity torques  # doctest: +SKIP
    """
    found = model_regressor(model, "regressor")
    coordinates = found.coordinates
    given = [samples(v, coordinates, what) for v, what in ((q, "q"), (qd, "qd"), (qdd, "qdd"))]
    arrays = [array for array, _ in given]
    if len({len(a) for a in arrays}) != 1:
        raise ShapeError(f"regressor: q, qd and qdd have {', '.join(str(len(a)) for a in arrays)} samples: give "
                         "as many of each")
    p = model.parameter_vector(params)
    Y = evaluate(found, arrays[0], arrays[1], arrays[2], p)
    single = all(point for _, point in given)
    values = found.values(p)
    return Regressor(Y[0] if single else Y, found.names, values, coordinates)
