"""The batched evaluation of a problem over many points: the model's f and exact Jacobians at P points in one call
(:class:`ModelPoints`), and the batched members derived from per-point ones for a problem without a batch form
of its own (:class:`PointwiseBatch`).

:class:`ModelPoints` runs one compiled loop over the points through the addresses of the model's generated
``rhs_c`` and ``jac_c`` (robodyn.model.compiled.model_addresses, the functions the integrator kernels call; loops in
:mod:`.kernels`) when the model offers them: a compilable model with an exact Jacobian source, whose state is
its own (no chart, constraints or impacts: their compiled f reads more than x). Otherwise the model's ``f_many``
and a loop over ``jacobians_raw``. Either way row k equals ``f_raw`` / ``jacobians_raw`` at point k up to rounding
(the same generated expressions). The compiled loops release the GIL: many points run in one thread per CPU
(robodyn.base.threads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from robodyn.base.threads import in_pieces
from robodyn.control.optimal.protocol import BatchCostDerivatives, CompiledDynamics

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["ModelPoints", "PointwiseBatch", "points_arrays"]

Array = NDArray[np.float64]

_PIECE = 256  # points per thread at least (a Jacobian of a robot: a few us; a thread starts in ~50 us)


def points_arrays(t: Any, X: Any, U: Any) -> tuple[Array, Array, Array]:
    """(t (P,), X (P, n), U (P, m)) as float64 C-contiguous arrays (what the compiled loops read)."""
    return (np.ascontiguousarray(t, dtype=float).reshape(-1), np.ascontiguousarray(X, dtype=float),
            np.ascontiguousarray(U, dtype=float))


def _has_jacobian_kernel(model: ModelContract) -> bool:
    """Whether ``model`` has a compiled Jacobian's source, asked once per model (the answer writes the source's
    text: 23 ms for the Panda) and kept in its memo."""
    memo = model.memo()
    if "has jacobian kernel" not in memo:
        memo["has jacobian kernel"] = model.kernel_jacobian_source() is not None
    return bool(memo["has jacobian kernel"])


class ModelPoints:
    """A model's f and exact Jacobians at many points, at the parameters ``p`` (see the module docstring)."""

    __slots__ = ("_compiled", "_known", "m", "model", "n", "p")

    def __init__(self, model: ModelContract, p: Array) -> None:
        self.model, self.p = model, np.ascontiguousarray(p, dtype=float)
        self.n, self.m = model.n_states, model.n_inputs
        self._compiled: CompiledDynamics | None = None
        self._known = False

    def compiled(self) -> CompiledDynamics | None:
        """The addresses of the model's ``rhs_c`` and ``jac_c`` with the parameters (compiled or loaded on first
        use, then kept), or None for a model without them."""
        if not self._known:
            self._known = True
            model = self.model
            if (model.compilable and _has_jacobian_kernel(model) and model.chart() is None
                    and model.constraints() is None and model.impacts() is None and model.sampling() is None):
                from robodyn.model.compiled import model_addresses

                fns = model_addresses(model, jacobian=True)[0]
                if fns[0] != 0 and fns[2] != 0:
                    self._compiled = CompiledDynamics(fns, self.p)
        return self._compiled

    def f(self, t: Array, X: Array, U: Array) -> Array:
        """(P, n) f at the points t (P,), X (P, n), U (P, m)."""
        t, X, U = points_arrays(t, X, U)
        compiled = self.compiled()
        if compiled is None:
            return np.asarray(self.model.f_many(t, X, U, self.p), dtype=float).reshape(len(t), self.n)
        from robodyn.control.optimal.batch.kernels import f_points

        out = np.empty((len(t), self.n))
        fns, p = compiled.addresses, self.p
        in_pieces(lambda a, b: f_points(fns, t[a:b], X[a:b], U[a:b], p, out[a:b]), len(t), _PIECE)
        return out

    def jacobians(self, t: Array, X: Array, U: Array) -> tuple[Array, Array]:
        """(A (P, n, n), B (P, n, m)) the exact df/dx and df/du at the points."""
        t, X, U = points_arrays(t, X, U)
        n, m, P = self.n, self.m, len(t)
        compiled = self.compiled()
        if compiled is None:
            A, B = np.empty((P, n, n)), np.empty((P, n, m))
            for k in range(P):
                A[k], B[k] = self.model.jacobians_raw(float(t[k]), X[k], U[k], self.p)
            return A, B
        from robodyn.control.optimal.batch.kernels import jacobian_points

        flat = np.empty((P, n * (n + m)))
        fns, p = compiled.addresses, self.p
        in_pieces(lambda a, b: jacobian_points(fns, t[a:b], X[a:b], U[a:b], p, flat[a:b]), P, _PIECE)
        return flat[:, :n * n].reshape(P, n, n), flat[:, n * n:].reshape(P, n, m)


class PointwiseBatch:
    """The batched members of a :class:`~.protocol.TranscribableProblem` from its per-point ones, one Python call
    per point: for a problem class with no batch form of its own (a subclass's own batched members come first).
    ``compiled_dynamics()`` is None."""

    def f_points(self, t: Array, X: Array, U: Array) -> Array:
        rows = [self.f(float(tk), xk, uk) for tk, xk, uk in zip(t, X, U, strict=True)]  # type: ignore[attr-defined]
        return np.array(rows, dtype=float).reshape(len(rows), np.shape(X)[1])

    def f_jacobians_points(self, t: Array, X: Array, U: Array) -> tuple[Array, Array]:
        pairs = [self.f_jacobians(float(tk), xk, uk)  # type: ignore[attr-defined]
                 for tk, xk, uk in zip(t, X, U, strict=True)]
        P, n, m = len(pairs), np.shape(X)[1], np.shape(U)[1]
        return (np.array([a for a, _ in pairs], dtype=float).reshape(P, n, n),
                np.array([b for _, b in pairs], dtype=float).reshape(P, n, m))

    def running_points(self, t: Array, X: Array, U: Array) -> Array:
        return np.array([self.running(float(tk), xk, uk)  # type: ignore[attr-defined]
                         for tk, xk, uk in zip(t, X, U, strict=True)], dtype=np.float64)

    def running_derivatives_points(self, t: Array, X: Array, U: Array) -> BatchCostDerivatives:
        rows = [self.running_derivatives(float(tk), xk, uk)  # type: ignore[attr-defined]
                for tk, xk, uk in zip(t, X, U, strict=True)]
        P, n, m = len(rows), np.shape(X)[1], np.shape(U)[1]

        def stack(name: str, shape: tuple[int, ...]) -> Array:
            return np.array([getattr(d, name) for d in rows], dtype=float).reshape(P, *shape)

        return BatchCostDerivatives(stack("l", ()), stack("lx", (n,)), stack("lu", (m,)), stack("lxx", (n, n)),
                                    stack("luu", (m, m)), stack("lux", (m, n)))

    def path_points(self, t: Array, X: Array, U: Array) -> Array:
        k = int(self.n_path)  # type: ignore[attr-defined]
        rows = [self.path(float(tk), xk, uk) for tk, xk, uk in zip(t, X, U, strict=True)]  # type: ignore[attr-defined]
        return np.array(rows, dtype=float).reshape(len(rows), k)

    def path_jacobians_points(self, t: Array, X: Array, U: Array) -> tuple[Array, Array]:
        k, P, n, m = int(self.n_path), len(t), np.shape(X)[1], np.shape(U)[1]  # type: ignore[attr-defined]
        gx, gu = np.empty((P, k, n)), np.empty((P, k, m))
        for j in range(P):
            gx[j], gu[j] = self.path_jacobians(float(t[j]), X[j], U[j])  # type: ignore[attr-defined]
        return gx, gu

    def compiled_dynamics(self) -> CompiledDynamics | None:
        return None
