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
the quadrature and the sparse Jacobian's entries are then vectorized. Every entry of the constraint Jacobian is
a constant plus a coefficient times one derivative (a defect's -1, 1 or 1/2 and -c h times an entry of [A | B] at
one point, or an entry of a constraint's Jacobian): the pattern, those constants, coefficients and the place of
each derivative in the flat array of all of them are made once, in CasADi's column-major order, and
:meth:`Transcription.jacobian` is one gather. The pattern leaves out the entries that are zero by the problem's
contract: on a mechanical problem (x = (q, v), q' = v) the q rows of [A | B] are [0 I 0], so a q row of a defect
has 2 entries per point where n + m would be dense (checked at every point the Jacobian is evaluated at: a
problem that declares it falsely is refused, never given a wrong pattern). Symbolic structural zeros of the
dynamics' rows of A are not known through the contract, and a pattern measured at sample points could miss an
entry that vanishes there (a contact force off contact): those rows stay dense.
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
        points = np.arange(len(self.t))
        self._dropped = _Sources(len(self.t), self.n, self.m, 0, 0, 0).f(points)[:, ~self.structure()].ravel()

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
        sources), in CasADi's column-major order; a structural zero of f's Jacobian with no constant is left
        out (:meth:`structure`)."""
        N, n, m, h, lay = self.N, self.n, self.m, self.h, self.layout
        knot = np.concatenate([lay.X, lay.U], axis=1)  # (N + 1, n + m): the columns of [x_k, u_k]
        stages = 2 if self.scheme == "hermite_simpson" else 1
        first = np.arange(N)[:, None] * stages * n + np.arange(n)  # (N, n): each interval's first defect rows
        E, keep = np.eye(n, n + m), self.structure()
        k0, k1, km = np.arange(N), np.arange(1, N + 1), N + 1 + np.arange(N)
        sources = _Sources(len(self.t), n, m, self.n_path, self.n_terminal, N + 1)
        blocks: list[_Block]
        if self.scheme == "trapezoidal":
            blocks = [_Block(first, knot[:-1], -E, -h / 2, sources.f(k0), keep),
                      _Block(first, knot[1:], E, -h / 2, sources.f(k1), keep)]
        else:
            mid, second = np.concatenate([lay.XM, lay.UM], axis=1), first + n
            blocks = [_Block(first, knot[:-1], -E, -h / 6, sources.f(k0), keep),
                      _Block(first, knot[1:], E, -h / 6, sources.f(k1), keep),
                      _Block(first, mid, 0 * E, -2 * h / 3, sources.f(km), keep),
                      _Block(second, knot[:-1], -E / 2, -h / 8, sources.f(k0), keep),
                      _Block(second, knot[1:], -E / 2, h / 8, sources.f(k1), keep),
                      _Block(second, lay.XM, np.eye(n), 0.0, None, np.eye(n, dtype=bool))]
        if self.n_path:
            prow = self.n_defects + np.arange(N + 1)[:, None] * self.n_path + np.arange(self.n_path)
            blocks.append(_Block(prow, knot, np.zeros((self.n_path, n + m)), 1.0, sources.path(),
                                 np.ones((self.n_path, n + m), dtype=bool)))
        if self.n_terminal:
            trow = self.n_defects + (N + 1) * self.n_path + np.arange(self.n_terminal)
            blocks.append(_Block(trow[None, :], lay.X[-1:], np.zeros((self.n_terminal, n)), 1.0,
                                 sources.terminal(), np.ones((self.n_terminal, n), dtype=bool)))
        return JacobianTerms.assemble(blocks, sources.zero)

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
class _Block:
    """A block of the constraint Jacobian: rows (K, r) and cols (K, c) of its K copies, each entry
    constant (r, c) + coefficient * S[source (K, r, c)] (no source: the constant alone); ``keep`` (r, c) the
    entries of the source that may be nonzero."""

    rows: Index
    cols: Index
    constant: Array
    coefficient: float
    source: Index | None
    keep: NDArray[np.bool_]


@dataclass(frozen=True, slots=True, eq=False)
class JacobianTerms:
    """The constraint Jacobian's nonzeros (rows, cols (nnz,), sorted column by column as CasADi stores them),
    each entry constant + coefficient * S[source] with S the flat sources of :meth:`Transcription.jacobian`."""

    rows: Index
    cols: Index
    constant: Array
    coefficient: Array
    source: Index

    @classmethod
    def assemble(cls, blocks: list[_Block], zero: int) -> JacobianTerms:
        """The blocks' entries that are not structurally zero, sorted; ``zero`` the index of S's 0."""
        rows, cols, sources, constants, coefficients = [], [], [], [], []
        for b in blocks:
            shape = (len(b.rows), *b.constant.shape)
            kept = (b.constant != 0) | (b.keep if b.source is not None else False)
            rows.append(np.broadcast_to(b.rows[:, :, None], shape)[:, kept].ravel())
            cols.append(np.broadcast_to(b.cols[:, None, :], shape)[:, kept].ravel())
            source = np.full(shape, zero, dtype=np.intp) if b.source is None else b.source
            sources.append(source[:, kept].ravel())
            constants.append(np.broadcast_to(b.constant, shape)[:, kept].ravel())
            coefficients.append(np.full(shape, 0.0 if b.source is None else b.coefficient)[:, kept].ravel())
        row, col = np.concatenate(rows), np.concatenate(cols)
        order = np.lexsort((row, col))
        arrays = [row, col, np.concatenate(constants), np.concatenate(coefficients), np.concatenate(sources)]
        for k, array in enumerate(arrays):
            arrays[k] = array[order]
            arrays[k].flags.writeable = False
        return cls(*arrays)


class _Sources:
    """Where each derivative sits in the flat sources S = [A, B (the dynamics' Jacobians at the P points), gx, gu
    (the path constraints' at the knots), the terminal constraints' Jacobian, 0] (each array raveled)."""

    def __init__(self, P: int, n: int, m: int, n_path: int, n_terminal: int, knots: int) -> None:
        self.n, self.m, self.n_path, self.n_terminal, self.knots = n, m, n_path, n_terminal, knots
        self.offsets = np.cumsum([0, P * n * n, P * n * m, knots * n_path * n, knots * n_path * m,
                                  n_terminal * n])
        self.zero = int(self.offsets[-1])

    def _split(self, first: int, points: Index, r: int) -> Index:
        """(K, r, n + m) the sources of [gx | gu] blocks of r rows at ``points`` (K,), the x part starting at
        offset ``first`` and the u part at the next."""
        n, m = self.n, self.m
        p, i = points[:, None, None], np.arange(r)[None, :, None]
        x = self.offsets[first] + p * r * n + i * n + np.arange(n)
        u = self.offsets[first + 1] + p * r * m + i * m + np.arange(m)
        return np.concatenate([x, u], axis=2)

    def f(self, points: Index) -> Index:
        """(K, n, n + m): the sources of [df/dx | df/du] at the points."""
        return self._split(0, points, self.n)

    def path(self) -> Index:
        """(N + 1, n_path, n + m): the path constraints' Jacobians at the knots."""
        return self._split(2, np.arange(self.knots), self.n_path)

    def terminal(self) -> Index:
        """(1, n_terminal, n): the terminal constraints' Jacobian."""
        return (self.offsets[4] + np.arange(self.n_terminal * self.n)).reshape(1, self.n_terminal, self.n)
