"""A chain's exact linearization from its tape: df/dx, df/du and [A | B | C | D], allocated or in place.

A mixin of :class:`robodyn.model.chain.system.ChainSystem` (the chain provides the compiled tape functions): the
Jacobians are solved on the tape for up to :data:`robodyn.rigid.dynamics.SOLVE_LIMIT` coordinates, else from the
tape's Cholesky factor of M and dr/dz by two triangular solves here; :meth:`bound_linearization` binds the tape's
argument block once for :class:`robodyn.Linearizer` (a loop then pays the compiled call and three copies).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.model.system import Vector
from robodyn.rigid.dynamics import SOLVE_LIMIT

if TYPE_CHECKING:
    from robodyn.model.mechanical import ManipulatorSystem as _Base
else:
    _Base = object

__all__ = ["ChainLinearization", "solve_factored_into"]


def solve_factored_into(parts: np.ndarray, n: int, out: np.ndarray) -> None:
    """``out`` ``(n, k)`` = -M^-1 G from a tape's ``jacobians`` values ``parts``: L (the Cholesky factor of M,
    row-major, ``n * n``), then G ``(n, k)`` row-major. LAPACK's ``dpotrs`` on L's transpose (a view: Fortran order
    of the upper factor), no checks: non-finite values pass through for the caller's check (a factor with a zero
    pivot gives NaN or inf)."""
    from scipy.linalg import lapack  # here, not at module level: importing scipy.linalg costs ~0.2 s at start-up

    upper = parts[: n * n].reshape(n, n).T  # L row-major is L^T = U in Fortran order: A = U^T U
    solved, _ = lapack.dpotrs(upper, parts[n * n:].reshape(n, -1), lower=0)
    np.negative(solved, out=out)


class ChainLinearization(_Base):
    """Exact Jacobians and linearizations of a chain (mixin: the chain provides ``_call`` and its tape)."""

    _call: Callable[..., np.ndarray]  # the chain's compiled tape functions (robodyn.model.chain.system)
    _function: Callable[[str], tuple[Any, int]]
    _finite_or_singular: Callable[..., np.ndarray]

    def jacobians(self, t: float, x: Any, u: Any = None, params: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Exact df/dx ``(2n, 2n)`` and df/du ``(2n, m)``: A21 = -M^-1 dr/dq, A22 = -M^-1 dr/dq',
        B2 = -M^-1 dr/du with r = ID(q, q', q'') + joint terms - Q at the forward-dynamics q''
        (compiled straight-line code, robodyn.rigid.dynamics)."""
        return self.jacobians_raw(*self._arguments(t, x, u, params))

    def jacobians_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> tuple[np.ndarray, np.ndarray]:
        n2, m = self.n_states, self.n_inputs
        values = self._jacobians_into(np.empty(n2 * (n2 + m)), t, x, u, p)
        return values[: n2 * n2].reshape(n2, n2), values[n2 * n2:].reshape(n2, m)

    def _jacobians_into(self, out: np.ndarray, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """A then B, row-major, into ``out``: solved on the tape for up to SOLVE_LIMIT coordinates, else
        from the tape's Cholesky factor L of M and dr/dz by two triangular solves here."""
        n, m = self.n_coordinates, self.n_inputs
        if n <= SOLVE_LIMIT:
            return self._finite_or_singular(self._call("solved_jacobians", t, x, u, p, out=out), t, x, u, p)
        parts = self._finite_or_singular(self._call("jacobians", t, x, u, p), t, x, u, p)
        solved = np.empty((n, 2 * n + m))
        solve_factored_into(parts, n, solved)
        A = out[: 4 * n * n].reshape(2 * n, 2 * n)
        A[:n] = 0.0
        A[:n, n:] = np.eye(n)
        A[n:] = solved[:, : 2 * n]
        B = out[4 * n * n:].reshape(2 * n, m)
        B[:n] = 0.0
        B[n:] = solved[:, 2 * n:]
        return out

    def linearization_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        n2, m = self.n_states, self.n_inputs
        buffer = np.empty((n2 + self.n_outputs) * (n2 + m))
        self.linearization_into(t, x, u, p, buffer)
        return buffer

    def linearization_into(self, t: float, x: Vector, u: Vector, p: Vector, out: np.ndarray) -> None:
        size = self.n_states * (self.n_states + self.n_inputs)
        C, D = self.output_jacobians_raw(t, x, u, p)  # y = x: the constant I and 0, made once
        out[size: size + C.size] = C.reshape(-1)
        out[size + C.size:] = D.reshape(-1)
        self._jacobians_into(out[:size], t, x, u, p)  # A then B, on the tape

    def bound_linearization(self, t: float, p: Vector, out: np.ndarray) -> Callable[[Vector, Vector], None]:
        n2, m = self.n_states, self.n_inputs
        if not self.outputs_are_states:
            return super().bound_linearization(t, p, out)
        size = n2 * (n2 + m)
        C, D = self.output_jacobians_raw(t, np.zeros(n2), np.zeros(m), p)  # y = x: I and 0, written once
        out[size: size + C.size], out[size + C.size:] = C.reshape(-1), D.reshape(-1)
        if self.n_coordinates > SOLVE_LIMIT:
            return self._bound_factored(t, p, out)
        # the tape's fourth argument a (accelerations, for inverse dynamics) is never read by the Jacobians of the
        # forward dynamics (tests/model/test_chain_tape.py checks the tape): it gets an empty part of the packing
        packed, function, (at_x, at_u, at_p, at_a, at_out) = self._function("solved_jacobians")[0].bind_raw(
            (n2, m, p.size, 0), out[:size])
        packed[n2 + m:] = p
        x_part, u_part = packed[:n2], packed[n2: n2 + m]

        def run(x: Vector, u: Vector, _alive: tuple[np.ndarray, np.ndarray] = (packed, out)) -> None:
            x_part[...] = x
            u_part[...] = u
            function(t, at_x, at_u, at_p, at_a, at_out)

        return run

    def _bound_factored(self, t: float, p: Vector, out: np.ndarray) -> Callable[[Vector, Vector], None]:
        """:meth:`bound_linearization` above SOLVE_LIMIT coordinates: the tape's factor and dr/dz into a held
        buffer (one compiled call), then LAPACK's solve into A's and B's lower rows; the constant rows written once."""
        n, n2, m = self.n_coordinates, self.n_states, self.n_inputs
        A, B = out[: n2 * n2].reshape(n2, n2), out[n2 * n2: n2 * (n2 + m)].reshape(n2, m)
        A[:n], B[:n] = 0.0, 0.0
        A[:n, n:] = np.eye(n)
        function, size = self._function("jacobians")
        parts = np.empty(size)
        solved = np.empty((n, 2 * n + m))
        packed, call, pointers = function.bind_raw((n2, m, p.size, 0), parts)
        packed[n2 + m:] = p
        x_part, u_part = packed[:n2], packed[n2: n2 + m]

        def run(x: Vector, u: Vector, _alive: tuple[np.ndarray, ...] = (packed, parts, out)) -> None:
            x_part[...] = x
            u_part[...] = u
            call(t, *pointers)
            solve_factored_into(parts, n, solved)
            A[n:], B[n:] = solved[:, : 2 * n], solved[:, 2 * n:]

        return run
