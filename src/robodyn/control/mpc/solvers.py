"""The QP solvers an MPC can use, behind one call: OSQP, Clarabel and ProxQP (proxsuite), each set up once.

Each adapter takes the matrices of :class:`~robodyn.control.mpc.formulation.QP` at construction and solves for new
vectors (q, b, lo, hi) at every call, warm-started from a guess (primal and multipliers) when the method can use one:

- ``"osqp"``: ADMM with a cached factorization (Stellato et al., "OSQP: an operator
  splitting solver for quadratic programs", Math. Prog. Comp. 12, 2020); solution polishing on the active set makes
  the answer exact to rounding; warm-started from the previous plan shifted.
- ``"clarabel"``: an interior-point method (Goulart & Chen, "Clarabel: an interior-point solver for conic programs
  with quadratic objectives", 2024); data updates keep its symbolic factorization; no warm start (interior points
  start in the interior).
- ``"proxsuite"``: ProxQP, a primal-dual proximal augmented Lagrangian (Bambade et al., "ProxQP: an efficient and
  versatile quadratic programming solver for real-time robotics applications and beyond", 2023), its sparse backend
  (its dense one for the condensed form); warm-started.

- ``"auto"`` (the default, by measurement): a size rule. A small condensed problem (N m <= :data:`DENSE_LIMIT`
  inputs) goes to ProxQP's dense backend, warm-started, its iterations capped at :data:`PROXQP_CAP`; a step it leaves
  unsolved (an iteration limit, an infeasibility it suspects) goes to Clarabel on the same QP, which proves
  infeasibility in milliseconds (:class:`FallbackSolver`). Larger problems go to Clarabel on the sparse form.

A QP without bounds is no QP but one linear system: :class:`DirectSolver` solves it exactly, whichever solver was
named (the unconstrained MPC then equals the LQR to rounding). The statuses are one registry, :data:`STATUSES`
(status -> what it means). The tolerances (:data:`TOLERANCE`) put a plan whose bounds are inactive within ~1e-8 of
the LQR's (tests/control/mpc/test_mpc_controller.py).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from robodyn.base.errors import InputError
from robodyn.control.mpc.formulation import QP

__all__ = ["AUTO", "DEFAULT_SOLVER", "DENSE_LIMIT", "DENSE_MU_IN", "PROXQP_CAP", "SOLVERS", "STATUSES", "TOLERANCE",
           "Answer", "DirectSolver", "FallbackSolver", "QPSolver", "auto_formulation", "installed", "make_solver"]

Array = NDArray[np.float64]

#: The statuses of a solve and what each means (the first is the only success).
STATUSES: Final = {
    "solved": "the QP was solved to the solver's tolerance",
    "inaccurate": "the solver stopped near a solution but short of its tolerance",
    "infeasible": "no input sequence keeps the predicted states and inputs within their bounds from this state",
    "max_iterations": "the solver reached its iteration limit before its tolerance",
    "failed": "the solver failed (a numerical error)",
}

#: The default absolute and relative stopping tolerance of each solver (residuals in the QP's units: the weights
#: times the states and inputs), measured on the benchmark's problems against exact solutions (benchmarks/RESULTS.md,
#: "Issue 48: MPC's QP solver"): OSQP's polished answers are exact to ~1e-9 from ADMM stopped anywhere in
#: 1e-3 ... 1e-10;
#: at 1e-5 no polish failed in 720 solves (at 1e-3: three, 1e-4: one) and it takes 25-60 iterations (1e-10: 400).
#: Clarabel's and ProxQP's plans are within ~3e-7 and ~1e-10 of the exact ones at 1e-10 (at 1e-7: 7e-4 and 1e-8).
TOLERANCE: Final = {"osqp": 1e-5, "clarabel": 1e-10, "proxsuite": 1e-10}
TIGHT: Final = 1e-10  # OSQP's ADMM tolerance where it does not polish (the condensed form, a failed polish).
MAX_ITERATIONS: Final = 10_000  # Per solve: ADMM's count (OSQP); interior-point and ProxQP need tens.
#: The size rule's name (module docstring): ProxQP dense on a small condensed QP with Clarabel behind it, else Clarabel.
AUTO: Final = "auto"
#: Chosen by measurement (benchmarks/RESULTS.md, "Issue 48: MPC's QP solver" and "Issue 48: the 1 kHz loop"): on the
#: small problems (cart-pole, joint, double integrator; N m <= 50) ProxQP on the condensed form is the fastest solver
#: with plans exact to ~1e-10 once its duality gap is checked (without it the plans of the 1 kHz cart-pole were 5e-5
#: from the exact ones), 4-10x faster than Clarabel on the sparse form; Clarabel stays behind it for the steps it
#: leaves unsolved (ProxQP takes ~0.5 s to declare a QP infeasible: capped, it hands over in ~PROXQP_CAP iterations)
#: and for larger problems, where it was the most robust (before: the default for every problem).
DEFAULT_SOLVER: Final = AUTO
#: The condensed problem's variables N m up to which "auto" takes ProxQP's dense backend: the largest measured where
#: it was both the fastest and exact (cart-pole and joint at N = 50; the 12-state masses at N = 30, 90 variables,
#: reached ProxQP's iteration limit).
DENSE_LIMIT: Final = 50
#: ProxQP's first proximal parameter of the inequalities under "auto" (its default 0.1): measured on the cart-pole at
#: horizon 30 (benchmarks/RESULTS.md, "the 1 kHz loop"), 1e-3 halves the iterations at dt 1 ms (3.1 a solve instead of
#: 6.6) and leaves dt 20 ms as it was (1e-4 and below tripled them there); on the double integrator it made ProxQP
#: declare some feasible QPs infeasible: under "auto" Clarabel then takes the step, so it is "auto"'s alone.
DENSE_MU_IN: Final = 1e-3
#: ProxQP's iterations per solve under "auto" before Clarabel takes the step (its ``max_iter``; the count it reports
#: includes inner iterations): the benchmarks' solves report <= ~40, save one in 60 of the condensed double
#: integrator's, which reached the cap (~400 reported) and went to Clarabel; ProxQP alone ran three of those 60 to
#: MAX_ITERATIONS, and an infeasible QP runs there too (~0.5 s).
PROXQP_CAP: Final = 200


@dataclass(frozen=True, slots=True)
class Answer:
    """One solve: z (nz,), the multipliers of the equalities (neq,) and inequalities (nin,), the status (a key of
    :data:`STATUSES`), the solver's iterations and its own status text; ``solver``: the name of the solver that gave
    it when another than the adapter's (:class:`FallbackSolver`), else empty."""

    z: Array
    y_eq: Array
    y_in: Array
    status: str
    iterations: int
    detail: str
    solver: str = ""


Guess = tuple[Array, Array, Array]  # z, y_eq, y_in


class QPSolver(Protocol):
    """What an adapter does: solve the QP it was made with for new vectors (q, b, lo, hi); ``warm``: from the
    previous solution (``guess``, the previous plan shifted, when :attr:`shifts`), else cold."""

    shifts: bool
    name: str

    def solve(self, q: Array, b: Array, lo: Array, hi: Array, guess: Guess | None, warm: bool) -> Answer: ...


def _module(name: str, package: str) -> Any:
    try:
        return importlib.import_module(package)
    except ImportError:
        raise InputError(f"mpc: the QP solver {name!r} is not installed: pip install {package} (or robodyn[mpc] for "
                         f"the default, {DEFAULT_SOLVER!r})") from None


_BIG: Final = 1e30  # OSQP's infinity (OSQP_INFTY): limits beyond it are no limits.


class OSQPSolver:
    """OSQP on [E; G] with l = (b, lo), u = (b, hi); warm-started from the shifted plan.

    In the sparse form (equalities and inequalities) ADMM stops at the tolerance (default 1e-5) and the answer is
    polished: the KKT equations of the active set it found, solved to rounding (Stellato et al. 2020, sec. 4). Should
    the polish fail (a wrong active set), ADMM goes on from there to :data:`TIGHT` before the answer is given. The
    condensed form is not polished (OSQP prints a line at every polish that finds no active row, on stdout from C,
    whatever ``verbose`` says): its ADMM runs to :data:`TIGHT` unless a tolerance is given."""

    shifts = True
    name = "osqp"

    def __init__(self, qp: QP, tolerance: float | None) -> None:
        self.osqp = _module("osqp", "osqp")
        self.P = sp.triu(qp.P, format="csc")
        self.A = sp.vstack([qp.E, qp.G], format="csc")
        self.neq = qp.E.shape[0]
        self.polish = self.neq > 0 and self.A.shape[0] > self.neq
        default = TOLERANCE["osqp"] if self.polish else TIGHT
        self.tolerance = default if tolerance is None else tolerance
        self.solver: Any = None

    def _start(self, q: Array, low: Array, high: Array) -> None:
        self.solver = self.osqp.OSQP()
        self.solver.setup(self.P, q, self.A, low, high, verbose=False, eps_abs=self.tolerance, eps_rel=self.tolerance,
                          eps_prim_inf=1e-8, eps_dual_inf=1e-8, polishing=self.polish, max_iter=MAX_ITERATIONS,
                          check_termination=5)

    def _refine(self, result: Any) -> Any:
        """ADMM on from an answer whose polish failed, to TIGHT (then the tolerance is restored)."""
        self.solver.update_settings(eps_abs=TIGHT, eps_rel=TIGHT, polishing=False)
        self.solver.warm_start(x=result.x, y=result.y)
        refined = self.solver.solve(raise_error=False)
        self.solver.update_settings(eps_abs=self.tolerance, eps_rel=self.tolerance, polishing=True)
        refined.info.iter += result.info.iter
        return refined

    def solve(self, q: Array, b: Array, lo: Array, hi: Array, guess: Guess | None, warm: bool) -> Answer:
        low = np.maximum(np.concatenate([b, lo]), -_BIG)
        high = np.minimum(np.concatenate([b, hi]), _BIG)
        if self.solver is None:
            self._start(q, low, high)
        else:
            self.solver.update(q=q, l=low, u=high)
        if warm and guess is not None:
            self.solver.warm_start(x=guess[0], y=np.concatenate([guess[1], guess[2]]))
        elif not warm:
            self.solver.warm_start(x=np.zeros(self.P.shape[0]), y=np.zeros(self.A.shape[0]))
        result = self.solver.solve(raise_error=False)
        codes = self.osqp.SolverStatus
        detail = str(result.info.status)
        if self.polish and result.info.status_val == codes.OSQP_SOLVED and result.info.status_polish != 1:
            result = self._refine(result)
            detail = f"{result.info.status} (polish failed: ADMM refined to {TIGHT:g})"
        status = {codes.OSQP_SOLVED: "solved", codes.OSQP_SOLVED_INACCURATE: "inaccurate",
                  codes.OSQP_PRIMAL_INFEASIBLE: "infeasible", codes.OSQP_PRIMAL_INFEASIBLE_INACCURATE: "infeasible",
                  codes.OSQP_MAX_ITER_REACHED: "max_iterations"}.get(result.info.status_val, "failed")
        y = np.asarray(result.y, dtype=float)
        return Answer(np.asarray(result.x, dtype=float), y[:self.neq], y[self.neq:], status, int(result.info.iter),
                      detail)


class ClarabelSolver:
    """Clarabel on E z + s = b (zero cone), G z + s = hi, -G z + s = -lo (non-negative cones, finite limits only)."""

    shifts = False
    name = "clarabel"

    def __init__(self, qp: QP, tolerance: float | None) -> None:
        self.clarabel = _module("clarabel", "clarabel")
        self.tolerance = TOLERANCE["clarabel"] if tolerance is None else tolerance
        self.P = sp.triu(qp.P, format="csc")
        self.upper, self.lower = np.flatnonzero(qp.upper), np.flatnonzero(qp.lower)
        self.A = sp.vstack([qp.E, qp.G[self.upper], -qp.G[self.lower]], format="csc")
        self.neq, self.nin = qp.E.shape[0], qp.G.shape[0]
        cones = [self.clarabel.NonnegativeConeT(self.upper.size + self.lower.size)]
        self.cones = ([self.clarabel.ZeroConeT(self.neq)] if self.neq else []) + cones
        self.solver: Any = None

    def solve(self, q: Array, b: Array, lo: Array, hi: Array, guess: Guess | None, warm: bool) -> Answer:
        rhs = np.concatenate([b, hi[self.upper], -lo[self.lower]])
        if self.solver is None:
            settings = self.clarabel.DefaultSettings()
            settings.verbose = False
            settings.presolve_enable = False  # keeps every row, so that the vectors can be updated
            settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = self.tolerance
            settings.tol_ktratio = 1e-8
            settings.max_iter = 200
            self.solver = self.clarabel.DefaultSolver(self.P, q, self.A, rhs, self.cones, settings)
        else:
            self.solver.update(q=q, b=rhs)
        solution = self.solver.solve()
        codes = self.clarabel.SolverStatus
        status = {codes.Solved: "solved", codes.AlmostSolved: "inaccurate", codes.PrimalInfeasible: "infeasible",
                  codes.AlmostPrimalInfeasible: "infeasible", codes.MaxIterations: "max_iterations",
                  codes.MaxTime: "max_iterations"}.get(solution.status, "failed")
        z = np.asarray(solution.z, dtype=float)
        y_in = np.zeros(self.nin)
        y_in[self.upper] += z[self.neq:self.neq + self.upper.size]
        y_in[self.lower] -= z[self.neq + self.upper.size:]
        return Answer(np.asarray(solution.x, dtype=float), z[:self.neq], y_in, status, int(solution.iterations),
                      str(solution.status))


class ProxsuiteSolver:
    """ProxQP (sparse backend; dense for the condensed form, its duality gap checked to the tolerance as its
    residuals are) on H = P, A = E, C = G; warm-started from its previous result as it is (a guess given by the
    caller makes ProxQP factorize again: measured ~5x slower than the unshifted previous result,
    benchmarks/RESULTS.md)."""

    shifts = False
    name = "proxsuite"

    def __init__(self, qp: QP, tolerance: float | None, max_iterations: int = MAX_ITERATIONS,
                 mu_in: float | None = None) -> None:
        proxqp = _module("proxsuite", "proxsuite").proxqp
        tolerance = TOLERANCE["proxsuite"] if tolerance is None else tolerance
        nz, neq, nin = qp.P.shape[0], qp.E.shape[0], qp.G.shape[0]
        backend = proxqp.dense if qp.dense else proxqp.sparse
        self.solver = backend.QP(nz, neq, nin)
        settings = self.solver.settings
        settings.eps_abs, settings.eps_rel, settings.verbose = tolerance, 0.0, False
        settings.max_iter = max_iterations
        # its residuals say nothing of complementarity: without the duality gap checked the dense backend stopped
        # with plans 5e-5 from the exact ones on the condensed 1 kHz cart-pole (benchmarks/RESULTS.md, "the 1 kHz
        # loop"); the sparse one, exact to ~1e-10 without it, reached its iteration limit with it (a double integrator)
        settings.check_duality_gap = qp.dense
        settings.eps_duality_gap_abs = settings.eps_duality_gap_rel = tolerance
        if mu_in is not None:
            settings.default_mu_in = mu_in
        # ProxQP's default 1e-4 declared feasible QPs infeasible after a warm start (the constrained double
        # integrator of tests/control/mpc/test_mpc_controller.py): its certificate is asked to 1e-9
        settings.eps_primal_inf = settings.eps_dual_inf = 1e-9
        self.matrices = (qp.P.toarray(), qp.E.toarray(), qp.G.toarray()) if qp.dense else (qp.P, qp.E, qp.G)
        self.started = False
        codes, guesses = proxqp.QPSolverOutput, proxqp.InitialGuess
        self.statuses = {codes.PROXQP_SOLVED: "solved", codes.PROXQP_PRIMAL_INFEASIBLE: "infeasible",
                         codes.PROXQP_SOLVED_CLOSEST_PRIMAL_FEASIBLE: "infeasible",
                         codes.PROXQP_MAX_ITER_REACHED: "max_iterations"}
        self.guesses = {True: guesses.WARM_START_WITH_PREVIOUS_RESULT,
                        False: guesses.EQUALITY_CONSTRAINED_INITIAL_GUESS}
        self.warm: bool | None = None  # the initial guess set (it is set again only when it changes)

    def solve(self, q: Array, b: Array, lo: Array, hi: Array, guess: Guess | None, warm: bool) -> Answer:
        if not self.started:
            H, E, G = self.matrices
            equal, bound = (E, b) if b.size else (None, None)  # proxsuite's dense backend needs None for none
            self.solver.init(H, q, equal, bound, *((G, lo, hi) if lo.size else (None, None, None)))
            self.started = True
        else:
            self.solver.update(g=q, b=b if b.size else None, l=lo if lo.size else None, u=hi if hi.size else None)
        if warm != self.warm:
            self.solver.settings.initial_guess, self.warm = self.guesses[warm], warm
        self.solver.solve()
        results = self.solver.results
        status = self.statuses.get(results.info.status, "failed")
        return Answer(np.array(results.x, dtype=float), np.array(results.y, dtype=float),
                      np.array(results.z, dtype=float), status, int(results.info.iter), str(results.info.status))


class FallbackSolver:
    """``"auto"`` on a small condensed QP: ProxQP's dense backend (its iterations capped at :data:`PROXQP_CAP`, its
    first proximal parameter :data:`DENSE_MU_IN`), and
    Clarabel on the same QP, set up at its first use, for a step ProxQP leaves unsolved — Clarabel's answer (its
    status, ``solver="clarabel"``) is then the step's. ProxQP starts cold after such a step."""

    shifts = False
    name = AUTO

    def __init__(self, qp: QP, tolerance: float | None) -> None:
        self.qp, self.tolerance = qp, tolerance
        self.first = ProxsuiteSolver(qp, tolerance, PROXQP_CAP, DENSE_MU_IN)
        self.second: ClarabelSolver | None = None
        self.handed = False  # the previous step was Clarabel's: ProxQP's own previous result is no guess

    def solve(self, q: Array, b: Array, lo: Array, hi: Array, guess: Guess | None, warm: bool) -> Answer:
        answer = self.first.solve(q, b, lo, hi, guess, warm and not self.handed)
        self.handed = answer.status != "solved"
        if not self.handed:
            return Answer(answer.z, answer.y_eq, answer.y_in, answer.status, answer.iterations, answer.detail,
                          self.first.name)
        if self.second is None:
            self.second = ClarabelSolver(self.qp, self.tolerance)
        backup = self.second.solve(q, b, lo, hi, None, False)
        return Answer(backup.z, backup.y_eq, backup.y_in, backup.status, answer.iterations + backup.iterations,
                      f"{backup.detail} (proxsuite: {answer.detail} after {answer.iterations} iterations)",
                      self.second.name)


class DirectSolver:
    """A QP without inequality rows (no bounds) is one linear system, the KKT equations [[P, E'], [E, 0]] [z; y] =
    [-q; b] (Nocedal & Wright, *Numerical Optimization*, 2nd ed., sec. 16.1): factorized once (SuperLU, partial
    pivoting), solved exactly to rounding at every call, whatever solver was named; no iterations."""

    shifts = False
    name = "direct"

    def __init__(self, qp: QP, tolerance: float | None = None) -> None:
        from scipy.sparse.linalg import splu

        nz, neq = qp.P.shape[0], qp.E.shape[0]
        kkt = sp.bmat([[qp.P, qp.E.T], [qp.E, sp.csc_matrix((neq, neq))]], format="csc")
        self.nz, self.lu = nz, splu(kkt)

    def solve(self, q: Array, b: Array, lo: Array, hi: Array, guess: Guess | None, warm: bool) -> Answer:
        solution = self.lu.solve(np.concatenate([-q, b]))
        if not np.all(np.isfinite(solution)):
            return Answer(solution[:self.nz], solution[self.nz:], np.zeros(0), "failed", 0, "non-finite solution")
        return Answer(solution[:self.nz], solution[self.nz:], np.zeros(0), "solved", 0, "solved (KKT system)")


#: The solvers by name: the adapter, made from the QP's matrices.
SOLVERS: Final[dict[str, Callable[[QP, float | None], QPSolver]]] = {"osqp": OSQPSolver, "clarabel": ClarabelSolver,
                                                      "proxsuite": ProxsuiteSolver}


def installed() -> tuple[str, ...]:
    """The names of the solvers whose packages import."""
    found = []
    for name in SOLVERS:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        found.append(name)
    return tuple(found)


def auto_formulation(variables: int) -> str:
    """The form ``"auto"`` solves: ``"condensed"`` when its ``variables`` (N m) are at most :data:`DENSE_LIMIT` and
    ProxQP is installed, else ``"sparse"``."""
    return "condensed" if variables <= DENSE_LIMIT and "proxsuite" in installed() else "sparse"


def make_solver(name: str, qp: QP, tolerance: float | None = None) -> QPSolver:
    """The adapter ``name`` for ``qp`` (its :data:`TOLERANCE` unless given), or InputError naming the solvers; a QP
    without inequalities gets the :class:`DirectSolver` (``name`` is still checked to be installed). ``"auto"``:
    the :class:`FallbackSolver` on a condensed QP (ProxQP installed), else Clarabel."""
    if name == AUTO:
        chosen: QPSolver = (FallbackSolver(qp, tolerance) if qp.dense and "proxsuite" in installed()
                            else ClarabelSolver(qp, tolerance))
    elif not isinstance(name, str) or name not in SOLVERS:
        raise InputError(f"mpc: unknown QP solver {name!r}: one of {AUTO}, {', '.join(SOLVERS)}")
    else:
        chosen = SOLVERS[name](qp, tolerance)
    return DirectSolver(qp) if qp.G.shape[0] == 0 else chosen
