"""A chain's exact linearization from its tape: df/dx, df/du and [A | B | C | D], allocated or in place.

A mixin of :class:`robodyn.mechanisms.chain.system.ChainSystem` (the chain provides the compiled tape functions): the
Jacobians are solved on the tape for up to :data:`robodyn.rigid.dynamics.SOLVE_LIMIT` coordinates, else from the
tape's Cholesky factor of M and dr/dz by two triangular solves here; :meth:`bound_linearization` binds the tape's
argument block once for :class:`robodyn.Linearizer` (a loop then pays the compiled call and three copies).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.codegen.llvm.native import RawCall
from robodyn.model.system import Vector
from robodyn.rigid.dynamics import SOLVE_LIMIT

if TYPE_CHECKING:
    from robodyn.model.kinds.mechanical import ManipulatorSystem as _Base
else:
    _Base = object

__all__ = ["ChainLinearization", "FactoredSolve", "kernel_source"]


class FactoredSolve:
    """-M^-1 G from a tape's ``jacobians`` values (robodyn.rigid.dynamics): L, the factor of M taken in the tree's
    leaves-first ``order`` (``n * n``, row-major), then G ``(n, k)`` with its rows in that order; written with the
    rows back in model order, the first ``split`` columns into ``left`` ``(n, split)``, the rest into ``right``
    (and a ``block`` into ``target``, if given). The compiled sparse solve (robodyn.codegen.linalg.tree_solve)
    reads only the factor's ``pattern`` (CSR, from the tape's structural zeros), overwrites G and returns the sum
    of what it wrote; non-finite values pass through for the caller's check (a zero pivot gives inf or NaN)."""

    __slots__ = ("_columns", "_none", "_order", "_solve", "_starts", "k", "n")

    def __init__(self, order: list[int], pattern: tuple[list[int], list[int]], k: int):
        from robodyn.codegen.linalg import tree_solve  # numba: here, for the large trees that need it

        self.n, self.k = len(order), k
        self._order = np.array(order, dtype=np.int64)
        self._starts, self._columns = (np.array(e, dtype=np.int64) for e in pattern)
        self._solve = tree_solve
        self._none = np.empty((0, 0))

    @classmethod
    def of(cls, memo: dict[Any, Any], program: Any, k: int) -> FactoredSolve:
        """The solve of ``program``'s (robodyn.rigid.dynamics.TreeProgram) ``jacobians`` with ``k`` columns, made
        once per model (in its ``memo``)."""
        if "factored solve" not in memo:
            memo["factored solve"] = cls(program.factor_order, program.factor_pattern(), k)
        solve: FactoredSolve = memo["factored solve"]
        return solve

    def views(self, parts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """L ``(n, n)`` and G ``(n, k)`` as views of ``parts``."""
        n, k = self.n, self.k
        return parts[: n * n].reshape(n, n), parts[n * n: n * n + n * k].reshape(n, k)

    def __call__(self, L: np.ndarray, G: np.ndarray, left: np.ndarray, right: np.ndarray,
                 block: np.ndarray | None = None, target: np.ndarray | None = None) -> float:
        none = self._none
        total: float = self._solve(L, G, self._starts, self._columns, self._order, -1.0, left, right,
                                   none if block is None else block, none if target is None else target)
        return total

    def raw_call(self, tape: RawCall, size: int, split: int, out: tuple[int, int, int],
                 block: tuple[int, int, int] = (0, 0, 0)) -> RawCall:
        """``tape`` (the compiled ``jacobians`` with its parameters bound: ``size`` values, L, G and any block) then
        this solve on addresses (robodyn.codegen.llvm.solve: the same bits) as one :class:`RawCall` writing into its
        ``out``: -M^-1 G's first ``split`` columns and the rest where ``out`` = (left's start, right's start, the size
        of ``out``) says, and the ``block`` (its start in the tape's values, nb, the target's row length) into the
        top left corner. Its function returns the sum of what it wrote; it holds the tape's values: one caller
        (thread) at a time."""
        import ctypes

        from robodyn.codegen.llvm.solve import tree_solve_ir, tree_solve_plan

        parts = np.zeros(size)
        plan = tree_solve_plan((self.n, self.k, split), size, out, block, (self._starts, self._columns, self._order))
        at_parts, at_plan = (ctypes.addressof(ctypes.c_char.from_buffer(a)) for a in (parts, plan))  # type: ignore[arg-type]
        solve, compiled = tree_solve_ir(), tape.function

        def function(t: float, at_x: int, at_u: int, at_p: int, at_a: int, at_out: int,
                     _alive: tuple[np.ndarray, ...] = (parts, plan)) -> float:
            compiled(t, at_x, at_u, at_p, at_a, at_parts)
            total: float = solve(at_parts, at_plan, at_out)
            return total

        return RawCall(function, tape.at_p, tape.at_a, tape.kept, sums=True)


def kernel_source(name: str, program: Any, output: str, finish: tuple[str, str, tuple[Any, ...]] | None = None) -> str:
    """The kernels' ``name(t, x, u, p, out)``: the program's tape function ``output`` (robodyn.rigid.dynamics),
    optionally finished by a compiled helper (codegen.tape_llvm.tape_source's ``finish``)."""
    from robodyn.codegen.llvm.tape import tape_source

    inner = f"_chain_{name}"
    return "\n".join([tape_source(inner, program.tape, program.outputs(output), "hjit", finish=finish), "", "@jit",
                      f"def {name}(t, x, u, p, out):", f"    {inner}(t, x, u, p, x, out)", ""])


class ChainLinearization(_Base):
    """Exact Jacobians and linearizations of a chain (mixin: the chain provides ``_call`` and its tape)."""

    _call: Callable[..., np.ndarray]  # the chain's compiled tape functions (robodyn.mechanisms.chain.system)
    _function: Callable[[str], tuple[Any, int]]
    _finite_or_singular: Callable[..., np.ndarray]
    _program: Any

    def kernel_jacobian_source(self) -> str:
        """``jac(t, x, u, p, out)``: the tape's factor of M and dr/dz, solved by manipulator_jacobians."""
        program = self._program
        starts, columns = program.factor_pattern()
        finish = ("robodyn.codegen.linalg", "manipulator_jacobians",
                  (self.n_coordinates, self.n_inputs, tuple(starts), tuple(columns), tuple(program.factor_order)))
        return kernel_source("jac", program, "jacobians", finish)

    @property
    def parameter_jacobian_method(self) -> str:
        return "tape"

    def parameter_jacobian_raw(self, t: float, x: Vector, u: Vector, p: Vector) -> np.ndarray:
        """Exact df/dp ``(2n, n_params)``: da/dp = -M^-1 dr/dp at the held forward-dynamics acceleration, on the tape
        (robodyn.rigid.dynamics, ``parameter_jacobian``)."""
        if not self.parameters:
            return np.zeros((self.n_states, 0))
        values = self._call("parameter_jacobian", t, x, u, p)
        return self._finite_or_singular(values, t, x, u, p).reshape(self.n_states, len(self.parameters))

    def kernel_parameter_jacobian_source(self) -> str:
        """``jacp(t, x, u, p, out)``: the tape's df/dp."""
        return kernel_source("jacp", self._program, "parameter_jacobian")

    def _factored_solve(self) -> FactoredSolve:
        """The solve of the tape's ``jacobians`` (above SOLVE_LIMIT coordinates)."""
        return FactoredSolve.of(self.memo(), self._program, 2 * self.n_coordinates + self.n_inputs)

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
        A = out[: 4 * n * n].reshape(2 * n, 2 * n)
        A[:n] = 0.0
        A[:n, n:] = np.eye(n)
        B = out[4 * n * n:].reshape(2 * n, m)
        B[:n] = 0.0
        solve = self._factored_solve()
        solve(*solve.views(parts), A[n:], B[n:])
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

    def bound_linearization(self, t: float, p: Vector, out: np.ndarray) -> Callable[[Vector, Vector], float | None]:
        n2, m = self.n_states, self.n_inputs
        if not self.outputs_are_states:
            return super().bound_linearization(t, p, out)
        size = n2 * (n2 + m)
        C, D = self.output_jacobians_raw(t, np.zeros(n2), np.zeros(m), p)  # y = x: I and 0, written once
        out[size: size + C.size], out[size + C.size:] = C.reshape(-1), D.reshape(-1)
        if self.n_coordinates > SOLVE_LIMIT:
            return self._bound_factored(t, p, out)
        # the tape's fourth argument a (accelerations, for inverse dynamics) is never read by the Jacobians of the
        # forward dynamics (tests/mechanisms/chain/test_chain_tape.py checks the tape): it gets an empty part of the
        # packing
        packed, function, (at_x, at_u, at_p, at_a, at_out) = self._function("solved_jacobians")[0].bind_raw(
            (n2, m, p.size, 0), out[:size])
        packed[n2 + m:] = p
        x_part, u_part = packed[:n2], packed[n2: n2 + m]

        def run(x: Vector, u: Vector, _alive: tuple[np.ndarray, np.ndarray] = (packed, out)) -> None:
            x_part[...] = x
            u_part[...] = u
            function(t, at_x, at_u, at_p, at_a, at_out)

        return run

    def linearization_call(self, t: float, p: Vector) -> tuple[Any, np.ndarray] | None:
        """A and B as raw machine code (robodyn.codegen.llvm.native.RawCall) writing the entries that vary, with the
        template holding the others (C = I, D = 0; NaN where the call writes), for outputs that are the states: up
        to SOLVE_LIMIT coordinates the tape's solved Jacobians (every entry of A and B); above, the tape's factor
        and dr/dz into a held buffer, then the compiled sparse solve into A's and B's last rows (their first rows,
        [0, I] and 0, in the template; the call returns the sum of what it wrote and serves one thread at a time).
        The tape's fourth argument, the accelerations, is never read."""
        n, n2, m = self.n_coordinates, self.n_states, self.n_inputs
        if not self.outputs_are_states:
            return None
        size = n2 * (n2 + m)
        C, D = self.output_jacobians_raw(t, np.zeros(n2), np.zeros(m), p)
        template = np.full(size + C.size + D.size, np.nan)  # NaN: written by the call
        template[size: size + C.size], template[size + C.size:] = C.reshape(-1), D.reshape(-1)
        if n <= SOLVE_LIMIT:
            return self._function("solved_jacobians")[0].bind_parameters(p), template
        A, B = template[: n2 * n2].reshape(n2, n2), template[n2 * n2: size].reshape(n2, m)
        A[:n], B[:n] = 0.0, 0.0
        A[:n, n:] = np.eye(n)  # q' = q_dot: A's first rows [0, I], B's 0
        function, parts = self._function("jacobians")
        return self._factored_solve().raw_call(function.bind_parameters(p), parts, n2,
                                               (n * n2, n2 * n2 + n * m, size)), template

    def _bound_factored(self, t: float, p: Vector, out: np.ndarray) -> Callable[[Vector, Vector], float]:
        """:meth:`bound_linearization` above SOLVE_LIMIT coordinates: the tape's factor and dr/dz into a held
        buffer (one compiled call), then the compiled sparse solve into A's and B's lower rows; the constant rows
        written once; ``run`` returns the sum of the entries it wrote, for the caller's finite check."""
        n, n2, m = self.n_coordinates, self.n_states, self.n_inputs
        A, B = out[: n2 * n2].reshape(n2, n2), out[n2 * n2: n2 * (n2 + m)].reshape(n2, m)
        A[:n], B[:n] = 0.0, 0.0
        A[:n, n:] = np.eye(n)
        function, size = self._function("jacobians")
        parts = np.empty(size)
        solve = self._factored_solve()
        L, G = solve.views(parts)
        left, right = A[n:], B[n:]
        packed, call, pointers = function.bind_raw((n2, m, p.size, 0), parts)
        packed[n2 + m:] = p
        x_part, u_part = packed[:n2], packed[n2: n2 + m]

        def run(x: Vector, u: Vector, _alive: tuple[np.ndarray, ...] = (packed, parts, out)) -> float:
            x_part[...] = x
            u_part[...] = u
            call(t, *pointers)
            return solve(L, G, left, right)  # the sum of the rows written: the rest of out is constant

        return run
