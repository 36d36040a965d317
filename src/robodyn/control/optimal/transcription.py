"""Direct collocation: an optimal control problem written as a sparse nonlinear program.

Two transcriptions of a :class:`~robodyn.control.optimal.protocol.TranscribableProblem` on the knots
t_k = k h (h = T / N, k = 0..N) (Betts, *Practical Methods for Optimal Control*, 2nd ed., SIAM 2010, sec. 4.5;
Kelly, "An Introduction to Trajectory Optimization", SIAM Review 59(4), 2017, secs. 3-4):

- ``trapezoidal``: decision variables x_k, u_k at the knots (u linear between knots); defects
  x_{k+1} - x_k - h/2 (f_k + f_{k+1}) = 0; running cost by the trapezoid rule. Second order.
- ``hermite_simpson`` in the *separated* form: the midpoint state x_m and input u_m of each interval are decision
  variables too; defects x_{k+1} - x_k - h/6 (f_k + 4 f_m + f_{k+1}) = 0 (Simpson) and
  x_m - (x_k + x_{k+1})/2 - h/8 (f_k - f_{k+1}) = 0 (the cubic Hermite interpolant at the midpoint); running
  cost by Simpson's rule. Fourth order. Separated rather than compressed (Betts sec. 4.6.6 recommends it for
  sparse solvers): each defect depends on f at one point through that point's own variables, so its Jacobian is
  made of the blocks h c [A | B] at each point, never a product A_m dx_m/dx_k; the constraint Jacobian stays
  sparser, and the cost and midpoint terms stay separable (block-diagonal Hessians).

Decision vector z: for k = 0..N-1 the knot block [x_k, u_k] followed (Hermite–Simpson) by the midpoint block
[x_m, u_m]; then [x_N, u_N]. x_0 is fixed to ``problem.x0`` by its bounds; input and state bounds are variable
bounds at every point. Constraints g: the defects interval by interval, then the path inequalities
g(t_k, x_k, u_k) <= 0 at the knots k = 0..N, then the terminal equalities e(x_N) = 0. The objective is the
quadrature of the running cost plus l_T(x_N).

The values and Jacobians at all the collocation points (2N + 1 for Hermite–Simpson, N + 1 for trapezoidal) come
from one batched call each (``problem.f_points``, ``problem.f_jacobians_points``, ``problem.running_points``,
``problem.running_derivatives_points``, ``problem.path_points``, ``problem.path_jacobians_points``); the defects,
the quadrature and the sparse Jacobian's entries are then vectorized: each entry of the constraint Jacobian is a
constant plus a coefficient times one derivative, set up once in CasADi's column-major order, so that
:meth:`Transcription.jacobian` is one gather. Its pattern leaves out the zeros the problem's contract promises: a
mechanical problem's q rows of [A | B] are [0 I 0] (q' = v; checked wherever the Jacobian is evaluated). The zeros
of the other rows are not known through the contract (sampled points could miss an entry that vanishes there, such
as a contact force off contact): those stay dense.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError, ShapeError
from robodyn.control.optimal.protocol import TranscribableProblem

__all__ = ["TRANSCRIPTIONS", "Layout", "Transcription"]

Array = NDArray[np.float64]
Index = NDArray[np.intp]

TRANSCRIPTIONS: Final = ("trapezoidal", "hermite_simpson")


@dataclass(frozen=True, slots=True, eq=False)
class Layout:
    """Where each point's variables sit in the decision vector z.

    X : (N + 1, n), U : (N + 1, m) the indices of the knots' states and inputs; XM : (N, n), UM : (N, m) the
    midpoints' (no rows for trapezoidal). ``size`` is len(z).
    """

    X: Index
    U: Index
    XM: Index
    UM: Index
    size: int

    @classmethod
    def build(cls, n: int, m: int, knots: int, midpoints: bool) -> Layout:
        block = n + m
        stride = 2 * block if midpoints else block
        knot = np.arange(knots + 1)[:, None] * stride
        mid = np.arange(knots)[:, None] * stride + block
        XM = mid + np.arange(n) if midpoints else np.zeros((0, n), dtype=np.intp)
        UM = mid + n + np.arange(m) if midpoints else np.zeros((0, m), dtype=np.intp)
        return cls(knot + np.arange(n), knot + n + np.arange(m), XM, UM, knots * stride + block)

    @property
    def points(self) -> tuple[Index, Index]:
        """((P, n), (P, m)): the indices of every collocation point's x and u, knots first, then midpoints."""
        return np.concatenate([self.X, self.XM]), np.concatenate([self.U, self.UM])


@dataclass(frozen=True, slots=True, eq=False)
class PointValues:
    """Values at the P collocation points (knots first): X (P, n), U (P, m) the points, F (P, n) the dynamics,
    L (P,) the running cost."""

    X: Array
    U: Array
    F: Array
    L: Array


class Transcription:
    """One problem transcribed by one scheme: values, sparse Jacobian, bounds and guesses of the NLP.

    Parameters
    ----------
    problem : TranscribableProblem
    scheme : ``"trapezoidal"`` or ``"hermite_simpson"``
    """

    def __init__(self, problem: TranscribableProblem, scheme: str) -> None:
        if scheme not in TRANSCRIPTIONS:
            raise InputError(f"unknown transcription {scheme!r}: use one of {', '.join(TRANSCRIPTIONS)}")
        self.problem = problem
        self.scheme = scheme
        self.n, self.m, self.N = len(problem.states), len(problem.inputs), int(problem.knots)
        self.h = float(problem.horizon) / self.N
        self.layout = Layout.build(self.n, self.m, self.N, scheme == "hermite_simpson")
        t = np.asarray(problem.times(), dtype=float)
        self.t = np.concatenate([t, t[:-1] + self.h / 2]) if scheme == "hermite_simpson" else t
        self.weights = self._quadrature()
        self.n_defects = self.N * self.n * (2 if scheme == "hermite_simpson" else 1)
        self.n_path, self.n_terminal = int(problem.n_path), int(problem.n_terminal)
        self.n_constraints = self.n_defects + (self.N + 1) * self.n_path + self.n_terminal
        self._ix, self._iu = self.layout.points
        self.terms = self._terms()
        self.rows, self.cols = self.terms.rows, self.terms.cols
        P, n, m = len(self.t), self.n, self.m  # where the structural zeros of A and B sit in the flat derivatives
        self._dropped = _sources(0, P * n * n, np.arange(P), n, n, m)[:, ~self.structure()].ravel()

    def _quadrature(self) -> Array:
        """(P,) the weights of the running cost at the points: trapezoid h/2, h, ..., h, h/2; Simpson h/6 at the
        interval ends (h/3 where two intervals meet) and 2h/3 at the midpoints."""
        N, h = self.N, self.h
        if self.scheme == "trapezoidal":
            w = np.full(N + 1, h)
            w[[0, -1]] = h / 2
            return w
        w = np.full(2 * N + 1, 2 * h / 3)
        w[: N + 1] = h / 3
        w[[0, N]] = h / 6
        return w

    # --- points ---------------------------------------------------------------------------------------------
    def points(self, z: Array) -> tuple[Array, Array]:
        """((P, n), (P, m)): x and u at every collocation point (knots, then midpoints)."""
        return z[self._ix], z[self._iu]

    def evaluate(self, z: Array) -> PointValues:
        """f and l at every point (one batched call each)."""
        p, X, U = self.problem, *self.points(z)
        F = np.asarray(p.f_points(self.t, X, U), dtype=float).reshape(X.shape)
        L = np.asarray(p.running_points(self.t, X, U), dtype=float).reshape(len(X))
        return PointValues(X, U, F, L)

    def objective(self, z: Array, values: PointValues) -> float:
        """The quadrature of the running cost plus the terminal cost at x_N."""
        return float(self.weights @ values.L) + float(self.problem.terminal(values.X[self.N]))

    def constraints(self, z: Array, values: PointValues) -> Array:
        """(n_constraints,) the defects, the path inequalities at the knots, the terminal equalities (``values``:
        :meth:`evaluate` at z, which holds the points)."""
        N, h, F = self.N, self.h, values.F
        X = values.X[: N + 1]
        F0, F1 = F[:N], F[1 : N + 1]
        parts: list[Array]
        if self.scheme == "trapezoidal":
            parts = [(X[1:] - X[:-1] - h / 2 * (F0 + F1)).ravel()]
        else:
            FM = F[N + 1 :]
            simpson = X[1:] - X[:-1] - h / 6 * (F0 + 4 * FM + F1)
            midpoint = values.X[N + 1 :] - (X[:-1] + X[1:]) / 2 - h / 8 * (F0 - F1)
            parts = [np.stack([simpson, midpoint], axis=1).ravel()]
        p = self.problem
        if self.n_path:
            parts.append(np.asarray(p.path_points(self.t[: N + 1], X, values.U[: N + 1]), dtype=float).ravel())
        if self.n_terminal:
            parts.append(np.asarray(p.terminal_constraint(X[-1]), dtype=float))
        return np.concatenate(parts)

    # --- derivatives ----------------------------------------------------------------------------------------
    def structure(self) -> NDArray[np.bool_]:
        """(n, n + m): the entries of [df/dx | df/du] that may be nonzero. All of them, except on a mechanical
        problem (``problem.mechanical`` = nq > 0: x = (q, v) with q' = v), whose first nq rows are [0 I 0] by
        the contract: row i has its one entry at column nq + i. :meth:`jacobian` checks the zeros at every
        point it evaluates, so no nonzero is ever left out of the pattern silently."""
        n, m = self.n, self.m
        nq = int(self.problem.mechanical)
        keep = np.ones((n, n + m), dtype=bool)
        if nq:
            if 2 * nq != n:
                raise InputError(f"a mechanical problem with nq = {nq} needs 2 nq states, it has {n}: set "
                                 "mechanical to 0 for a first-order model")
            keep[:nq] = False
            keep[np.arange(nq), nq + np.arange(nq)] = True
        return keep

    def _terms(self) -> JacobianTerms:
        """The constraint Jacobian's entries as constant + coefficient * S[source] (S: :meth:`jacobian`'s flat
        derivatives, ending in a 0 where a block has a constant alone or a structural zero of f's Jacobian)."""
        N, n, m, h, lay, P = self.N, self.n, self.m, self.h, self.layout, len(self.t)
        knot = np.concatenate([lay.X, lay.U], axis=1)  # (N + 1, n + m): the columns of [x_k, u_k]
        stages = 2 if self.scheme == "hermite_simpson" else 1
        first = np.arange(N)[:, None] * stages * n + np.arange(n)  # (N, n): each interval's first defect rows
        # where A, B (P points), gx, gu (N + 1 knots), the terminal constraints' Jacobian start in S; then the 0
        start = np.cumsum([0, P * n * n, P * n * m, (N + 1) * self.n_path * n, (N + 1) * self.n_path * m,
                           self.n_terminal * n])
        zero, E, keep = int(start[-1]), np.eye(n, n + m), self.structure()

        def f_at(k: Index) -> Index:
            return np.where(keep, _sources(start[0], start[1], k, n, n, m), zero)

        k0, k1, km = np.arange(N), np.arange(1, N + 1), N + 1 + np.arange(N)
        if self.scheme == "trapezoidal":
            blocks = [(first, knot[:-1], -E, -h / 2, f_at(k0)), (first, knot[1:], E, -h / 2, f_at(k1))]
        else:
            mid, second = np.concatenate([lay.XM, lay.UM], axis=1), first + n
            blocks = [(first, knot[:-1], -E, -h / 6, f_at(k0)), (first, knot[1:], E, -h / 6, f_at(k1)),
                      (first, mid, 0 * E, -2 * h / 3, f_at(km)), (second, knot[:-1], -E / 2, -h / 8, f_at(k0)),
                      (second, knot[1:], -E / 2, h / 8, f_at(k1)),
                      (second, lay.XM, np.eye(n), 0.0, np.full((N, n, n), zero))]
        if self.n_path:
            prow = self.n_defects + np.arange(N + 1)[:, None] * self.n_path + np.arange(self.n_path)
            blocks.append((prow, knot, np.zeros((self.n_path, n + m)), 1.0,
                           _sources(start[2], start[3], np.arange(N + 1), self.n_path, n, m)))
        if self.n_terminal:
            trow = self.n_defects + (N + 1) * self.n_path + np.arange(self.n_terminal)
            blocks.append((trow[None, :], lay.X[-1:], np.zeros((self.n_terminal, n)), 1.0,
                           (start[4] + np.arange(self.n_terminal * n)).reshape(1, self.n_terminal, n)))
        return JacobianTerms.assemble(blocks, zero)

    def jacobian(self, z: Array) -> tuple[Array, Array]:
        """(grad (len(z),), values (len(rows),)): the objective's gradient and the constraint Jacobian's entries
        at (:attr:`rows`, :attr:`cols`), from the problem's exact Jacobians."""
        p, X, U = self.problem, *self.points(z)
        N = self.N
        A, B = p.f_jacobians_points(self.t, X, U)
        parts = [np.asarray(A, dtype=float).ravel(), np.asarray(B, dtype=float).ravel()]
        if self.n_path:
            gx, gu = p.path_jacobians_points(self.t[: N + 1], X[: N + 1], U[: N + 1])
            parts += [np.asarray(gx, dtype=float).ravel(), np.asarray(gu, dtype=float).ravel()]
        if self.n_terminal:
            parts.append(np.asarray(p.terminal_constraint_jacobian(X[N]), dtype=float).ravel())
        parts.append(np.zeros(1))
        S, terms = np.concatenate(parts), self.terms
        if len(self._dropped) and np.any(S[self._dropped]):
            nq = int(p.mechanical)
            raise InputError(f"the problem declares mechanical = {nq} (x = (q, v) with q' = v) but the Jacobian of "
                             f"the first {nq} rows of its f is not [0 I 0]: set mechanical to 0")
        entries = terms.constant + terms.coefficient * S[terms.source]
        d = p.running_derivatives_points(self.t, X, U)
        grad = np.zeros(self.layout.size)
        grad[self._ix] = self.weights[:, None] * d.lx
        grad[self._iu] = self.weights[:, None] * d.lu
        grad[self.layout.X[-1]] += p.terminal_derivatives(X[N]).lx
        return grad, entries

    # --- bounds, guesses, results -----------------------------------------------------------------------------
    def bounds(self) -> tuple[Array, Array, Array, Array]:
        """(lbz, ubz, lbg, ubg): variable bounds (x_0 fixed to problem.x0) and constraint bounds."""
        lay, p = self.layout, self.problem
        lbz, ubz = np.full(lay.size, -np.inf), np.full(lay.size, np.inf)
        xb, ub = np.asarray(p.state_bounds, dtype=float), np.asarray(p.input_bounds, dtype=float)
        for ix, iu in ((lay.X, lay.U), (lay.XM, lay.UM))[: 2 if self.scheme == "hermite_simpson" else 1]:
            lbz[ix], ubz[ix] = xb[:, 0], xb[:, 1]
            lbz[iu], ubz[iu] = ub[:, 0], ub[:, 1]
        lbz[lay.X[0]] = ubz[lay.X[0]] = np.asarray(p.x0, dtype=float)
        lbg, ubg = np.zeros(self.n_constraints), np.zeros(self.n_constraints)
        lbg[self.n_defects : self.n_defects + (self.N + 1) * self.n_path] = -np.inf
        return lbz, ubz, lbg, ubg

    def guess(self, X: Array, U: Array) -> Array:
        """z from states at the knots X (N + 1, n) and inputs U (N, m) (u_N = u_{N-1}) or (N + 1, m); the
        midpoints from the Hermite interpolant of X and the mean of the neighbouring inputs."""
        N, n, m, lay = self.N, self.n, self.m, self.layout
        X, U = np.asarray(X, dtype=float), np.asarray(U, dtype=float)
        if X.shape != (N + 1, n) or U.shape not in ((N, m), (N + 1, m)):
            raise ShapeError(f"a guess of states {X.shape} and inputs {U.shape}: expected ({N + 1}, {n}) and "
                             f"({N}, {m}) (or ({N + 1}, {m}) with the input at t_N)")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(U))):
            raise InputError("a guess holds NaN or infinite values: give finite states and inputs")
        if len(U) == N:
            U = np.concatenate([U, U[-1:]])
        z = np.zeros(lay.size)
        z[lay.X], z[lay.U] = X, U
        if self.scheme == "hermite_simpson":
            F = np.asarray(self.problem.f_points(self.t[: N + 1], X, U), dtype=float).reshape(X.shape)
            z[lay.XM] = (X[:-1] + X[1:]) / 2 + self.h / 8 * (F[:-1] - F[1:])
            z[lay.UM] = (U[:-1] + U[1:]) / 2
        z[lay.X[0]] = np.asarray(self.problem.x0, dtype=float)
        return z

    def unpack(self, z: Array) -> tuple[Array, Array]:
        """(X (N + 1, n), U (N + 1, m)): the states and inputs at the knots."""
        return z[self.layout.X], z[self.layout.U]

    def violation(self, z: Array, g: Array) -> float:
        """The largest violation of the defects, the variable bounds, the path inequalities and the terminal
        equalities (0 when there is nothing to violate)."""
        lbz, ubz, lbg, ubg = self.bounds()
        worst = np.concatenate([lbz - z, z - ubz, lbg - g, g - ubg])
        return float(max(0.0, np.max(worst, initial=0.0)))


@dataclass(frozen=True, slots=True, eq=False)
class JacobianTerms:
    """The constraint Jacobian's nonzeros (rows, cols (nnz,), sorted column by column as CasADi stores them),
    each entry constant + coefficient * S[source] with S the flat derivatives of :meth:`Transcription.jacobian`."""

    rows: Index
    cols: Index
    constant: Array
    coefficient: Array
    source: Index

    @classmethod
    def assemble(cls, blocks: list[tuple[Index, Index, Array, float, Index]], zero: int) -> JacobianTerms:
        """From blocks (rows (K, r), cols (K, c), constant (r, c), coefficient, source (K, r, c)): the entries
        with a constant or a source other than S's 0 (index ``zero``), sorted."""
        parts = []
        for rows, cols, constant, coefficient, source in blocks:
            kept = (source != zero) | (constant != 0)
            parts.append((np.broadcast_to(rows[:, :, None], source.shape)[kept],
                          np.broadcast_to(cols[:, None, :], source.shape)[kept],
                          np.broadcast_to(constant, source.shape)[kept], np.full(kept.sum(), coefficient),
                          source[kept]))
        arrays = [np.concatenate(part) for part in zip(*parts, strict=True)]
        order = np.lexsort((arrays[0], arrays[1]))
        for k, array in enumerate(arrays):
            arrays[k] = array[order]
            arrays[k].flags.writeable = False
        return cls(*arrays)


def _sources(x_start: int, u_start: int, points: Index, r: int, n: int, m: int) -> Index:
    """(K, r, n + m): where the entries of [gx | gu] at ``points`` (K,) sit in the flat derivatives, for gx
    (P, r, n) raveled from x_start and gu (P, r, m) from u_start."""
    p, i = points[:, None, None], np.arange(r)[None, :, None]
    return np.concatenate([x_start + p * r * n + i * n + np.arange(n), u_start + p * r * m + i * m + np.arange(m)],
                          axis=2)
