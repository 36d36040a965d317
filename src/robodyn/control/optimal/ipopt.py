"""IPOPT on a sparse nonlinear program whose values and exact Jacobians robodyn computes.

The program: minimize f(z) subject to lbg <= g(z) <= ubg and lbz <= z <= ubz, given as a :class:`SparseNLP`
(values, the objective's gradient and the constraint Jacobian's entries at a fixed sparsity pattern). IPOPT
(Wächter & Biegler, "On the implementation of an interior-point filter line-search algorithm for large-scale
nonlinear programming", Math. Programming 106, 2006) is CasADi's bundled build, reached through
``casadi.nlpsol``. IPOPT calls three functions of z, each a ``casadi.Callback`` given to nlpsol as itself: the
program (f, g), and as nlpsol's ``grad_f`` and ``jac_g`` options (f, df/dz) and (g, dg/dz) with the declared
sparsity. CasADi never differentiates anything itself, no MX graph wraps the calls (one Python call per
function IPOPT asks for, where a program called inside an MX graph with a Jacobian Callback took two for a
derivative), and IPOPT receives robodyn's numbers written straight into CasADi's buffers (``eval_buffer``: no
DM made). The three share one cache: the values and the derivatives are computed once per point. The Hessian of
the Lagrangian is IPOPT's limited-memory quasi-Newton (L-BFGS) approximation.

CasADi is optional: ``pip install robodyn[collocation]`` (or ``casadi``).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError

__all__ = ["IPOPT_STATUS", "IpoptRun", "SparseNLP", "solve_ipopt"]

Array = NDArray[np.float64]
Index = NDArray[np.intp]
Progress = Callable[[int, float, float], object]

#: IPOPT's return statuses in words (IpReturnCodes.h); ``converged`` is True for the first two.
IPOPT_STATUS: Final[Mapping[str, str]] = {
    "Solve_Succeeded": "converged: optimal to the requested tolerance",
    "Solved_To_Acceptable_Level": "converged to IPOPT's acceptable level only (looser than the tolerance)",
    "Infeasible_Problem_Detected": "infeasible: IPOPT found the constraints locally infeasible; loosen the bounds "
                                   "or constraints, lengthen the horizon or start from a better guess",
    "Maximum_Iterations_Exceeded": "not converged: the iteration limit was reached; raise max_iterations or "
                                   "start from a better guess",
    "Search_Direction_Becomes_Too_Small": "not converged: the search direction became too small (the problem "
                                          "may be badly scaled)",
    "Diverging_Iterates": "not converged: the iterates diverged (the problem may be unbounded: add bounds)",
    "Restoration_Failed": "not converged: the feasibility restoration failed (the constraints may be infeasible)",
    "Error_In_Step_Computation": "not converged: the linear solver failed in a step (the problem may be "
                                 "degenerate)",
    "Invalid_Number_Detected": "failed: the model returned NaN or infinity during the solve",
    "Not_Enough_Degrees_Of_Freedom": "failed: more equality constraints than free variables",
    "Maximum_CpuTime_Exceeded": "not converged: IPOPT's time limit was reached",
    "Maximum_WallTime_Exceeded": "not converged: IPOPT's time limit was reached",
    "User_Requested_Stop": "stopped on request",
    "Feasible_Point_Found": "stopped at a feasible point (not optimal)",
}
#: IPOPT relaxes bounds by bound_relax_factor (1e-8) while it iterates; the answer is projected back into the
#: original bounds, so that an input bound is never exceeded by the returned trajectory.
DEFAULTS: Final[Mapping[str, Any]] = {"ipopt.honor_original_bounds": "yes"}
#: CasADi's ``nlp_grad`` (the gradient of the Lagrangian, for the multipliers of p and a recomputation of those of
#: z after the solve) would be made by differentiating the program, which has no derivatives of its own: not made.
#: The bound multipliers stay IPOPT's; there is no p.
WITHOUT_NLP_GRAD: Final[Mapping[str, Any]] = {"no_nlp_grad": True, "calc_lam_p": False, "calc_lam_x": False}
CONVERGED: Final = frozenset({"Solve_Succeeded", "Solved_To_Acceptable_Level"})


class SparseNLP(Protocol):
    """A nonlinear program with an exact sparse constraint Jacobian.

    ``size`` variables, ``n_constraints`` constraints; ``rows`` and ``cols`` (nnz,) the Jacobian's pattern (no
    repeated pair); :meth:`values` gives (f, g (n_constraints,)), :meth:`derivatives` (df/dz (size,), the
    Jacobian's entries (nnz,) in the pattern's order).
    """

    @property
    def size(self) -> int: ...
    @property
    def n_constraints(self) -> int: ...
    @property
    def rows(self) -> Index: ...
    @property
    def cols(self) -> Index: ...
    def values(self, z: Array) -> tuple[float, Array]: ...
    def derivatives(self, z: Array) -> tuple[Array, Array]: ...


@dataclass(frozen=True, slots=True, eq=False)
class IpoptRun:
    """What IPOPT returned: z (size,) and f, g (n_constraints,) evaluated there, its iteration count, its
    return status (the IPOPT name), whether it converged, and the seconds spent in the solve."""

    z: Array
    f: float
    g: Array
    iterations: int
    return_status: str
    converged: bool
    seconds: float

    @property
    def status(self) -> str:
        """The return status in words."""
        return IPOPT_STATUS.get(self.return_status, f"not converged: IPOPT returned {self.return_status}")


def _casadi() -> Any:
    try:
        import casadi
    except ImportError as error:  # pragma: no cover - casadi is in the test environment
        raise InputError("collocation needs IPOPT through CasADi: pip install casadi (robodyn[collocation])") \
            from error
    return casadi


def solve_ipopt(nlp: SparseNLP, z0: Array, bounds: tuple[Array, Array, Array, Array], *,
                options: Mapping[str, Any] | None = None, progress: Progress | None = None,
                violation: Callable[[Array, Array], float] | None = None) -> IpoptRun:
    """Solve ``nlp`` from z0 with IPOPT.

    Parameters
    ----------
    nlp : SparseNLP
    z0 : (size,) the starting point.
    bounds : (lbz (size,), ubz (size,), lbg (n_constraints,), ubg (n_constraints,)); +-inf where unbounded.
    options : IPOPT's options by name (``tol``, ``max_iter``, ``hessian_approximation``, ``mu_init``, ...).
    progress : called as progress(iteration, f, violation) after each IPOPT iteration (violation from the
        ``violation(z, g)`` given, else 0).
    """
    ca = _casadi()
    errors: list[BaseException] = []
    oracles = _oracles(ca, nlp, errors)
    settings: dict[str, Any] = {"print_time": False, "ipopt.print_level": 0, "ipopt.sb": "yes",
                                "ipopt.hessian_approximation": "limited-memory", **DEFAULTS,
                                "grad_f": oracles["grad_f"], "jac_g": oracles["jac_g"], **WITHOUT_NLP_GRAD}
    settings.update({f"ipopt.{key}": value for key, value in (options or {}).items()})
    if progress is not None:
        monitor = _monitor(ca, nlp, progress, violation, errors)
        settings["iteration_callback"] = monitor
    solver = ca.nlpsol("collocation", "ipopt", oracles["nlp"], settings)
    lbz, ubz, lbg, ubg = bounds
    start = time.perf_counter()
    try:
        answer = solver(x0=z0, lbx=lbz, ubx=ubz, lbg=lbg, ubg=ubg)
    except RuntimeError as error:
        if errors:
            raise errors[0] from error
        raise
    seconds = time.perf_counter() - start
    if errors:
        raise errors[0]
    stats = solver.stats()
    status = str(stats.get("return_status", "unknown"))
    z_final = np.asarray(answer["x"], dtype=float).ravel().copy()
    f_final, g_final = nlp.values(z_final)  # at the answer projected into the bounds, not IPOPT's last iterate
    return IpoptRun(z_final, float(f_final), np.asarray(g_final, dtype=float).copy(),
                    int(stats.get("iter_count", 0)), status, status in CONVERGED, seconds)


class _Cache:
    """The last point's values and derivatives: IPOPT asks for f and g (and their derivatives) separately at
    the same z; the NLP computes both from one sweep over the points."""

    def __init__(self, nlp: SparseNLP) -> None:
        self.nlp = nlp
        self.key_values: bytes | None = None
        self.key_derivatives: bytes | None = None
        self.values: tuple[float, Array] = (0.0, np.zeros(0))
        self.derivatives: tuple[Array, Array] = (np.zeros(0), np.zeros(0))

    def value_at(self, z: Array) -> tuple[float, Array]:
        key = z.tobytes()
        if key != self.key_values:
            self.values, self.key_values = self.nlp.values(z), key
        return self.values

    def derivatives_at(self, z: Array) -> tuple[Array, Array]:
        key = z.tobytes()
        if key != self.key_derivatives:
            self.derivatives, self.key_derivatives = self.nlp.derivatives(z), key
        return self.derivatives


def _buffer(view: Any) -> Array:
    """The float64 entries of one of CasADi's argument buffers (a memoryview of its nonzeros; None: none)."""
    return np.zeros(0) if view is None else np.frombuffer(view, dtype=np.float64)


def _write(view: Any, values: Array) -> None:
    """Write ``values`` into one of CasADi's result buffers (None or empty: an output nobody asked for)."""
    if view is not None and len(view):
        np.frombuffer(view, dtype=np.float64)[:] = values


def _pattern(ca: Any, nlp: SparseNLP) -> tuple[Any, Index | None]:
    """The constraint Jacobian's casadi.Sparsity and the permutation of the NLP's entries into its order
    (CasADi stores entries column by column; None when the NLP gives them in that order already)."""
    order = np.lexsort((nlp.rows, nlp.cols))
    colind = np.searchsorted(nlp.cols[order], np.arange(nlp.size + 1))
    sparsity = ca.Sparsity(nlp.n_constraints, nlp.size, colind.tolist(), nlp.rows[order].tolist())
    return sparsity, None if np.array_equal(order, np.arange(len(order))) else order


#: The three functions of z IPOPT calls, by CasADi's names: the program, the objective's gradient, the
#: constraints' Jacobian; each (x, p) -> its two outputs (p empty).
_ORACLES: Final = {"nlp": ("f", "g"), "grad_f": ("f", "grad_f_x"), "jac_g": ("g", "jac_g_x")}


@functools.cache
def _oracle_class(ca: Any) -> Any:
    """The Callback class, made once casadi is imported (casadi stays an optional import)."""

    class Oracle(ca.Callback):
        """One of :data:`_ORACLES` over the shared :class:`_Cache`: "nlp" (x, p) -> (f, g); "grad_f" -> (f,
        df/dz (size,)); "jac_g" -> (g, dg/dz with the NLP's pattern)."""

        def __init__(self, kind: str, cache: _Cache, errors: list[BaseException], pattern: Any,
                     order: Index | None) -> None:
            ca.Callback.__init__(self)
            nlp = cache.nlp
            self.kind, self.cache, self.errors, self.order = kind, cache, errors, order
            self.n_entries = len(nlp.rows)
            scalar, g = ca.Sparsity.dense(1, 1), ca.Sparsity.dense(nlp.n_constraints, 1)
            self.inputs = [ca.Sparsity.dense(nlp.size, 1), ca.Sparsity(0, 1)]
            self.outputs = {"nlp": [scalar, g], "grad_f": [scalar, ca.Sparsity.dense(nlp.size, 1)],
                            "jac_g": [g, pattern]}[kind]
            self.construct(kind, {})

        def get_n_in(self) -> int:
            return 2

        def get_n_out(self) -> int:
            return 2

        def get_name_in(self, i: int) -> str:
            return ("x", "p")[i]

        def get_name_out(self, i: int) -> str:
            return str(_ORACLES[self.kind][i])

        def get_sparsity_in(self, i: int) -> Any:
            return self.inputs[i]

        def get_sparsity_out(self, i: int) -> Any:
            return self.outputs[i]

        def has_eval_buffer(self) -> bool:
            return True

        def eval_buffer(self, arg: list[Any], res: list[Any]) -> int:
            """The outputs written straight into CasADi's buffers (no DM made); the Jacobian's entries in
            CasADi's column-major order."""
            nlp, kind = self.cache.nlp, self.kind
            z = _buffer(arg[0]).copy()
            try:
                f, g = self.cache.value_at(z)
                grad, entries = self.cache.derivatives_at(z) if kind != "nlp" else (g, g)
            except Exception as error:  # kept for solve_ipopt to raise; NaN makes IPOPT stop or step back
                self.errors.append(error)
                f, g = math.nan, np.full(nlp.n_constraints, np.nan)
                grad, entries = np.full(nlp.size, np.nan), np.full(self.n_entries, np.nan)
            if kind == "jac_g":
                _write(res[0], g)
                _write(res[1], entries if self.order is None else entries[self.order])
            else:
                _write(res[0], np.array([f], dtype=float))
                _write(res[1], g if kind == "nlp" else grad)
            return 0

    return Oracle


def _oracles(ca: Any, nlp: SparseNLP, errors: list[BaseException]) -> dict[str, Any]:
    """The three Callbacks of :data:`_ORACLES` over one cache."""
    cache = _Cache(nlp)
    pattern, order = _pattern(ca, nlp)
    oracle = _oracle_class(ca)
    return {kind: oracle(kind, cache, errors, pattern, order) for kind in _ORACLES}


def _monitor(ca: Any, nlp: SparseNLP, progress: Progress, violation: Callable[[Array, Array], float] | None,
             errors: list[BaseException]) -> Any:
    """CasADi's iteration callback: reports (iteration, f, violation) to ``progress`` after each iteration."""

    class Monitor(ca.Callback):
        def __init__(self) -> None:
            ca.Callback.__init__(self)
            self.iteration = 0
            self.construct("progress", {})

        def get_n_in(self) -> int:
            return int(ca.nlpsol_n_out())

        def get_n_out(self) -> int:
            return 1

        def get_name_in(self, i: int) -> str:
            return str(ca.nlpsol_out(i))

        def get_name_out(self, i: int) -> str:
            return "ret"

        def get_sparsity_in(self, i: int) -> Any:
            name = ca.nlpsol_out(i)
            size = {"f": 1, "lam_p": 0}.get(name, nlp.size if name in ("x", "lam_x") else nlp.n_constraints)
            return ca.Sparsity.dense(size, 1)

        def has_eval_buffer(self) -> bool:
            return True

        def eval_buffer(self, arg: list[Any], res: list[Any]) -> int:
            """Read the iterate from CasADi's buffers (as the program's callbacks do) and write 1 to stop."""
            z, f, g = _buffer(arg[0]).copy(), float(_buffer(arg[1])[0]), _buffer(arg[2]).copy()
            try:
                progress(self.iteration, f, 0.0 if violation is None else violation(z, g))
            except Exception as error:
                errors.append(error)
                _write(res[0], np.ones(1))  # stop IPOPT; the error is raised after the solve
                return 0
            self.iteration += 1
            _write(res[0], np.zeros(1))
            return 0

    return Monitor()
