"""The MPC's quadratic program, built once: min 1/2 z' P z + q' z subject to E z = b and lo <= G z <= hi.

The finite-horizon problem over N steps, in deviations dx = x - x_op, du = u - u_op of :mod:`.plant`,

    minimize   sum_{k<N} (x_k - r_k)' Q (x_k - r_k) + (u_k - v_k)' R (u_k - v_k) + (x_N - r_N)' Qf (x_N - r_N)
    subject to x_0 = x,  x_{k+1} = A x_k + B u_k + c,  u_lo <= u_k <= u_hi (k < N),  x_lo <= x_k <= x_hi (1 <= k <= N)

(r, v: the state and input references; Borrelli, Bemporad & Morari, *Predictive Control for Linear and Hybrid
Systems*, 2017, ch. 8 and 11), has two forms:

- :class:`SparseForm` ("sparse"): the states are variables, z = (x_0, ..., x_N, u_0, ..., u_{N-1}); P is block
  diagonal, the dynamics are the equality rows, bounds select variables. The matrices grow linearly with N.
- :class:`CondensedForm` ("condensed"): the states are eliminated, x_k = A^k x_0 + sum_{j<k} A^{k-1-j} (B u_j + c),
  z = (u_0, ..., u_{N-1}); P = 2 (S_u' Q S_u + R) is dense (N m)^2, the state bounds are dense rows S_u, and x_0 enters
  the gradient and the state bounds' limits.

The matrices (CSC) are made once; a solve changes only the vectors q, b, lo, hi (:meth:`vectors`). State bounds do not
apply to x_0 (the measured state: bounding it would make the problem infeasible as soon as a disturbance pushed the
state out). Inequality rows come stage by stage, inputs first ((u_0)_i, ..., (u_{N-1})_i, then (x_1)_j, ...,
(x_N)_j, for the bounded components i, j), so that :meth:`shift` moves a plan and its multipliers one step on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from robodyn.control.mpc.plant import Plant

__all__ = ["FORMULATIONS", "QP", "CondensedForm", "Formulation", "SparseForm", "formulation", "shift_blocks"]

Array = NDArray[np.float64]
Segments = tuple[tuple[int, int], ...]  # (block size, count) runs of a vector, each shifted by one block


@dataclass(frozen=True, slots=True, eq=False)
class QP:
    """The matrices of min 1/2 z' P z + q' z, E z = b, lo <= G z <= hi (all CSC; P symmetric, given whole).

    ``lower``, ``upper`` (rows of G,): whether each row's lower / upper limit is finite (fixed by the bounds);
    ``dense``: P and G are dense in fact (the condensed form), for solvers that have a dense backend.
    """

    P: sp.csc_matrix
    E: sp.csc_matrix
    G: sp.csc_matrix
    lower: NDArray[np.bool_]
    upper: NDArray[np.bool_]
    dense: bool


class Formulation(Protocol):
    """What the controller asks of a form of the QP (:class:`SparseForm`, :class:`CondensedForm`)."""

    qp: QP
    primal: Segments
    equality: Segments
    inequality: Segments

    def vectors(self, x0: Array, r: Array, v: Array) -> tuple[Array, Array, Array, Array]:
        """q, b, lo, hi for the initial deviation x0 (n,), state references r (N+1, n), input references v (N, m)."""
        ...

    def plan(self, x0: Array, z: Array) -> tuple[Array, Array]:
        """The deviations' states (N+1, n) and inputs (N, m) of a solution z (new arrays)."""
        ...


def shift_blocks(vector: Array, segments: Segments) -> Array:
    """``vector`` with each run of blocks moved one block earlier, its last block repeated (a warm start one sample
    later: the plan's tail, the last step held)."""
    out = np.empty_like(vector)
    start = 0
    for size, count in segments:
        stop = start + size * count
        run = vector[start:stop]
        out[start:stop - size] = run[size:]
        out[stop - size:stop] = run[stop - start - size:] if count else run[:0]
        start = stop
    return out


def _bounded(box: Array) -> NDArray[np.intp]:
    """The indices of the components with a finite bound on either side."""
    return np.flatnonzero(np.isfinite(box[:, 0]) | np.isfinite(box[:, 1]))


def _limits(plant: Plant, x_box: Array, u_box: Array, N: int) -> tuple[Array, Array]:
    """lo, hi of the inequality rows in deviations (stage by stage, inputs first), before the condensed shift."""
    iu, ix = _bounded(u_box), _bounded(x_box)
    lo = np.concatenate([np.tile(u_box[iu, 0] - plant.u_op[iu], N), np.tile(x_box[ix, 0] - plant.x_op[ix], N)])
    hi = np.concatenate([np.tile(u_box[iu, 1] - plant.u_op[iu], N), np.tile(x_box[ix, 1] - plant.x_op[ix], N)])
    return lo, hi


class SparseForm:
    """The states as variables (module docstring): z = (x_0, ..., x_N, u_0, ..., u_{N-1})."""

    def __init__(self, plant: Plant, N: int, Q: Array, R: Array, Qf: Array, x_box: Array, u_box: Array) -> None:
        n, m = plant.B.shape
        self.N, self.n, self.m, self.Q, self.R, self.Qf, self.c = N, n, m, Q, R, Qf, plant.c
        P = sp.block_diag([sp.kron(sp.eye(N), 2.0 * Q), 2.0 * Qf, sp.kron(sp.eye(N), 2.0 * R)], format="csc")
        Ex = sp.kron(sp.eye(N + 1), -sp.eye(n)) + sp.kron(sp.eye(N + 1, k=-1), plant.A)
        Eu = sp.kron(sp.vstack([sp.csc_matrix((1, N)), sp.eye(N)]), plant.B)
        E = sp.hstack([Ex, Eu], format="csc")
        iu, ix = _bounded(u_box), _bounded(x_box)
        Gu = sp.hstack([sp.csc_matrix((N * iu.size, (N + 1) * n)),
                        sp.kron(sp.eye(N), sp.eye(m, format="csr")[iu])])
        Gx = sp.hstack([sp.csc_matrix((N * ix.size, n)), sp.kron(sp.eye(N), sp.eye(n, format="csr")[ix]),
                        sp.csc_matrix((N * ix.size, N * m))])
        G = sp.vstack([Gu, Gx], format="csc")
        self.lo, self.hi = _limits(plant, x_box, u_box, N)
        self.qp = QP(P, E, G, np.isfinite(self.lo), np.isfinite(self.hi), dense=False)
        self.primal: Segments = ((n, N + 1), (m, N))
        self.equality: Segments = ((n, 1), (n, N))
        self.inequality: Segments = ((iu.size, N), (ix.size, N))

    def vectors(self, x0: Array, r: Array, v: Array) -> tuple[Array, Array, Array, Array]:
        weights = np.vstack([r[:-1] @ self.Q, r[-1:] @ self.Qf])
        q = -2.0 * np.concatenate([weights.ravel(), (v @ self.R).ravel()])
        b = np.concatenate([-x0, np.tile(-self.c, self.N)])
        return q, b, self.lo, self.hi

    def plan(self, x0: Array, z: Array) -> tuple[Array, Array]:
        cut = (self.N + 1) * self.n
        return z[:cut].reshape(self.N + 1, self.n).copy(), z[cut:].reshape(self.N, self.m).copy()


class CondensedForm:
    """The inputs as the only variables (module docstring): z = (u_0, ..., u_{N-1})."""

    def __init__(self, plant: Plant, N: int, Q: Array, R: Array, Qf: Array, x_box: Array, u_box: Array) -> None:
        n, m = plant.B.shape
        A, B, c = plant.A, plant.B, plant.c
        powers = [np.eye(n)]
        for _ in range(N):
            powers.append(A @ powers[-1])
        self.Sx = np.vstack(powers[1:])  # (N n, n): x_k = A^k x_0 + ...
        Su = np.zeros((N * n, N * m))
        for k in range(1, N + 1):
            for j in range(k):
                Su[(k - 1) * n:k * n, j * m:(j + 1) * m] = powers[k - 1 - j] @ B
        self.Sc = np.concatenate([sum((powers[i] @ c for i in range(k)), np.zeros(n)) for k in range(1, N + 1)])
        Qbar = sp.block_diag([sp.kron(sp.eye(N - 1), Q), Qf]).toarray() if N > 1 else Qf
        self.Rbar = np.kron(np.eye(N), R)
        self.W = 2.0 * Su.T @ Qbar  # (N m, N n): the gradient's weight on the predicted deviations from r
        H = 2.0 * (Su.T @ Qbar @ Su + self.Rbar)
        iu, ix = _bounded(u_box), _bounded(x_box)
        rows = np.concatenate([k * n + ix for k in range(N)]).astype(np.intp)
        G = np.vstack([np.kron(np.eye(N), np.eye(m)[iu]), Su[rows]])
        self.rows, self.N, self.n, self.m, self.Su, self.n_u = rows, N, n, m, Su, N * iu.size
        self.lo, self.hi = _limits(plant, x_box, u_box, N)
        self.qp = QP(sp.csc_matrix(0.5 * (H + H.T)), sp.csc_matrix((0, N * m)), sp.csc_matrix(G),
                     np.isfinite(self.lo), np.isfinite(self.hi), dense=True)
        self.primal: Segments = ((m, N),)
        self.equality: Segments = ()
        self.inequality: Segments = ((iu.size, N), (ix.size, N))

    def vectors(self, x0: Array, r: Array, v: Array) -> tuple[Array, Array, Array, Array]:
        free = self.Sx @ x0 + self.Sc  # the predicted deviations with u = u_op
        q = self.W @ (free - r[1:].ravel()) - 2.0 * self.Rbar @ v.ravel()
        lo, hi = self.lo.copy(), self.hi.copy()
        lo[self.n_u:] -= free[self.rows]
        hi[self.n_u:] -= free[self.rows]
        return q, np.zeros(0), lo, hi

    def plan(self, x0: Array, z: Array) -> tuple[Array, Array]:
        states = np.empty((self.N + 1, self.n))
        states[0] = x0
        states[1:] = (self.Sx @ x0 + self.Sc + self.Su @ z).reshape(self.N, self.n)
        return states, z.reshape(self.N, self.m).copy()


#: The forms by name: each made from (plant, N, Q, R, Qf, state bounds, input bounds).
FORMULATIONS: Final[Mapping[str, Callable[[Plant, int, Array, Array, Array, Array, Array], Formulation]]] = {
    "sparse": SparseForm, "condensed": CondensedForm}


def formulation(name: str, plant: Plant, N: int, Q: Array, R: Array, Qf: Array, x_box: Array,
                u_box: Array) -> Formulation:
    """The form ``name`` ("sparse" or "condensed") of the QP."""
    return FORMULATIONS[name](plant, N, Q, R, Qf, x_box, u_box)
