"""Modal analysis of x' = A x + B u: eigen-decomposition, modes with damping, stability.

:func:`modal_decomposition` (A = V Λ V^-1 and the Schur form A = Z T Z^H) and :func:`modes` (one row per real
eigenvalue or complex pair, and a verdict). The forced response by the convolution integral is in
:mod:`robodyn.analysis.response`.

Numerical multiplicity (Golub & Van Loan, *Matrix Computations*, 4th ed., 7.1-7.6). Rounding splits a
defective eigenvalue of a Jordan block of size k by about eps^(1/k) ||A||, so two computed eigenvalues count
as one when

    |λi - λj| <= max(CLUSTER_RTOL max(1, |λi|, |λj|),
                     min(CLUSTER_SAFETY eps ||A|| max(κi, κj), CLUSTER_CAP max(1, ||A||)))

with κ = ||x|| ||y|| the eigenvalue condition number (G&VL 7.2.2; y^H x = 1): a well-conditioned eigenvalue
merges only within 1e-8 relative, an ill-conditioned one also within its first-order error bound, capped at
1e-5 ||A|| (Jordan blocks of size 2 and 3). The geometric multiplicity of a cluster with center λ (the mean,
far better conditioned than its members) is the number of singular values of A - λI below
RANK_RTOL max(1, ||A||); A is *defective* when a cluster has fewer eigenvectors than members. Modal
coordinates V^-1 x carry errors ~ eps cond(V): above COND_LIMIT, and for defective A, reconstruction and the
forced response use the Schur form, whose basis is unitary.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray
from scipy.sparse.csgraph import connected_components

from robodyn import display
from robodyn.errors import InputError, ShapeError
from robodyn.signals.core import finite_number

__all__ = ["STABILITY", "ModalDecomposition", "Mode", "Modes", "modal_decomposition", "modes"]

Array = NDArray[np.float64]
ComplexArray = NDArray[np.complex128]

EPS: Final = float(np.finfo(float).eps)
CLUSTER_RTOL: Final = 1e-8  # Eigenvalues this close (relative to max(1, |λ|)) are one eigenvalue.
CLUSTER_SAFETY: Final = 100.0  # Safety factor on the first-order error bound eps ||A|| κ(λ).
CLUSTER_CAP: Final = 1e-5  # Widest merge (relative to max(1, ||A||)): (eps)^(1/3) splits of 3x3 Jordan blocks.
RANK_RTOL: Final = 1e-8  # Singular values of A - λI below RANK_RTOL max(1, ||A||) count as zero (~sqrt(eps)).
RESIDUAL_RTOL: Final = 100 * EPS  # ||A v - λ v|| above RESIDUAL_RTOL n max(1, ||A||): not backward stable.
COND_LIMIT: Final = 1e8  # cond(V) above which V Λ V^-1 loses more than half the digits: use the Schur form.
STABILITY: Final = ("asymptotically stable", "marginally stable", "unstable")


# --- validation -----------------------------------------------------------------------------------------
def _square(A: ArrayLike, what: str = "A") -> Array:
    """``A`` as a finite real square float matrix, or ShapeError / InputError naming the fix."""
    try:
        matrix = np.array(A, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a real matrix of numbers, got {A!r}") from None
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
        raise ShapeError(f"{what} must be a non-empty square (n, n) matrix, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise InputError(f"{what} contains non-finite entries (nan or inf): give finite numbers")
    return matrix


def _system_matrix(system: Any) -> tuple[Array, tuple[str, ...]]:
    if not hasattr(system, "A"):
        raise InputError(f"modes need a linear system with a matrix A, got {type(system).__name__}: "
                         "use robodyn.linearize(model, x, u) or model.to_linear()")
    A = _square(system.A, "system matrix A")
    names = getattr(system, "states", None)
    states = tuple(names) if names is not None else tuple(f"x{i + 1}" for i in range(A.shape[0]))
    if len(states) != A.shape[0]:
        raise ShapeError(f"{len(states)} state names for A of shape {A.shape}: give one name per state")
    return A, states


# --- the decomposition ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, eq=False)
class ModalDecomposition:
    """Eigen- and Schur decompositions of a real matrix A (n x n).

    Attributes
    ----------
    eigenvalues : (n,) complex, sorted by real part, then imaginary part
    V, V_inv : (n, n) complex
        Unit-norm right eigenvectors (column i for ``eigenvalues[i]``) and V^-1 (pseudo-inverse if V is
        singular). Nearly parallel columns when A is (nearly) defective: modal coordinates are then meaningless.
    condition
        cond(V) in the 2-norm; errors of V Λ V^-1 and of modal coordinates grow like eps * condition.
    defective
        Some eigenvalue has fewer independent eigenvectors than its algebraic multiplicity (module docstring).
    schur_T, schur_Z : (n, n) complex
        The complex Schur form A = Z T Z^H, T upper triangular, Z unitary: the stable basis.
    clusters, geometric
        Indices into ``eigenvalues`` of each numerically distinct eigenvalue (algebraic multiplicity = size),
        and the geometric multiplicity (independent eigenvectors) of each.
    norm
        ||A||_2.
    """

    eigenvalues: ComplexArray
    V: ComplexArray
    V_inv: ComplexArray
    condition: float
    defective: bool
    schur_T: ComplexArray
    schur_Z: ComplexArray
    clusters: tuple[tuple[int, ...], ...]
    geometric: tuple[int, ...]
    norm: float

    def __post_init__(self) -> None:
        n = self.eigenvalues.size
        shapes = {label: getattr(self, label).shape for label in ("eigenvalues", "V", "V_inv", "schur_T", "schur_Z")}
        if set(shapes.values()) != {(n,), (n, n)}:
            raise ShapeError(f"decomposition arrays must have shapes (n,) and (n, n), got {shapes}")
        if len(self.clusters) != len(self.geometric) or sorted(i for c in self.clusters for i in c) != list(range(n)):
            raise ShapeError("clusters must partition the eigenvalue indices, one geometric multiplicity each")

    @property
    def reliable(self) -> bool:
        """Whether the modal form V Λ V^-1 is trustworthy: A is not defective and cond(V) <= COND_LIMIT."""
        return not self.defective and self.condition <= COND_LIMIT

    def reconstruct(self) -> ComplexArray:
        """A (n, n) rebuilt: V Λ V^-1 when :attr:`reliable`, else Z T Z^H (for real A, Im is rounding)."""
        if self.reliable:
            return np.asarray((self.V * self.eigenvalues) @ self.V_inv, dtype=np.complex128)
        return np.asarray(self.schur_Z @ self.schur_T @ self.schur_Z.conj().T, dtype=np.complex128)

    def center(self, k: int) -> complex:
        """The eigenvalue of cluster ``k``: the mean of its members, real when the cluster is self-conjugate."""
        members = self.eigenvalues[list(self.clusters[k])]
        value = complex(np.mean(members))
        conjugate_closed = all(np.min(np.abs(members - z.conjugate())) == 0.0 for z in members)
        return complex(value.real, 0.0) if conjugate_closed else value


def _inverse(V: ComplexArray) -> ComplexArray:
    try:
        inverse = np.linalg.inv(V)
    except np.linalg.LinAlgError:  # exactly singular: the pseudo-inverse below
        inverse = np.full_like(V, np.nan)
    return np.asarray(inverse if np.all(np.isfinite(inverse)) else np.linalg.pinv(V), dtype=np.complex128)


def _repaired(A: Array, values: ComplexArray, V: ComplexArray, norm: float) -> ComplexArray:
    """V with eigenvectors whose residual is not backward stable replaced by the null vector of A - λI: geev's
    balancing can spoil them (James, Langou & Lowery, "On matrix balancing and eigenvector computation", 2014).
    """
    residual = np.linalg.norm(A @ V - V * values, axis=0)
    for i in np.flatnonzero(residual > RESIDUAL_RTOL * A.shape[0] * max(1.0, norm)):
        null = np.linalg.svd(A - values[i] * np.eye(A.shape[0]))[2][-1].conj()
        if np.linalg.norm(A @ null - values[i] * null) < residual[i]:
            V[:, i] = null
    return V


def _clusters(values: ComplexArray, kappa: Array, norm: float) -> list[tuple[int, ...]]:
    """Connected components of "numerically equal" eigenvalues (tolerance in the module docstring)."""
    size = np.maximum(1.0, np.maximum.outer(np.abs(values), np.abs(values)))
    perturbation = np.minimum(CLUSTER_SAFETY * EPS * norm * np.maximum.outer(kappa, kappa),
                              CLUSTER_CAP * max(1.0, norm))
    close = np.abs(values[:, None] - values[None, :]) <= np.maximum(CLUSTER_RTOL * size, perturbation)
    count, labels = connected_components(close, directed=False)
    return [tuple(int(i) for i in np.flatnonzero(labels == k)) for k in range(count)]


def _geometric_multiplicity(A: Array, center: complex, algebraic: int, norm: float) -> int:
    """Number of singular values of A - center I below RANK_RTOL max(1, ||A||), between 1 and ``algebraic``."""
    if algebraic == 1:
        return 1
    singular = np.linalg.svd(A - center * np.eye(A.shape[0]), compute_uv=False)
    nullity = int(np.sum(singular <= RANK_RTOL * max(1.0, norm)))
    return max(1, min(algebraic, nullity))


def modal_decomposition(A: ArrayLike) -> ModalDecomposition:
    """Eigen-decomposition A = V Λ V^-1 with a defectiveness test, and the complex Schur form A = Z T Z^H.

    Parameters
    ----------
    A : (n, n)
        A finite real square matrix.

    Returns
    -------
    ModalDecomposition
        ``defective`` compares each cluster's size with the rank deficiency of A - λI (module docstring).
        If A is defective or cond(V) > COND_LIMIT modal coordinates are unreliable: use the Schur form.

    Raises
    ------
    ShapeError, InputError
        A is not a non-empty square matrix; A has non-numeric or non-finite entries.

    References
    ----------
    G. H. Golub and C. F. Van Loan, *Matrix Computations*, 4th ed., 2013, sections 7.1-7.6.
    """
    matrix = _square(A)
    values, vectors = np.linalg.eig(matrix)
    order = np.lexsort((values.imag, values.real))
    values = np.asarray(values[order], dtype=np.complex128)
    norm = float(np.linalg.norm(matrix, 2))
    V = _repaired(matrix, values, np.array(vectors[:, order], dtype=np.complex128), norm)
    V_inv = _inverse(V)
    with np.errstate(over="ignore"):  # κ = inf for a singular V merges within the capped tolerance
        kappa = np.linalg.norm(V, axis=0) * np.linalg.norm(V_inv, axis=1)
        condition = float(np.linalg.cond(V, 2))
    clusters = _clusters(values, np.nan_to_num(kappa, nan=np.inf), norm)
    centers = [complex(np.mean(values[list(c)])) for c in clusters]
    geometric = tuple(_geometric_multiplicity(matrix, z, len(c), norm) for z, c in zip(centers, clusters))
    T, Z = scipy.linalg.schur(matrix, output="complex")
    return ModalDecomposition(
        eigenvalues=values, V=V, V_inv=V_inv, condition=condition if np.isfinite(condition) else math.inf,
        defective=any(g < len(c) for g, c in zip(geometric, clusters)),
        schur_T=np.asarray(T, dtype=np.complex128), schur_Z=np.asarray(Z, dtype=np.complex128),
        clusters=tuple(clusters), geometric=geometric, norm=norm,
    )


# --- modes ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Mode:
    """One real eigenvalue or complex-conjugate pair (reported once, with positive imaginary part).

    Attributes
    ----------
    eigenvalue, omega_n
        λ (for a multiple eigenvalue the mean of its computed copies); the natural frequency |λ| in rad/s.
    zeta
        Damping ratio -Re λ / |λ|: in (0, 1) for a damped pair, 1 for a stable real mode, -1 for an unstable
        real mode, negative for growing oscillations, 0 on the imaginary axis; ``None`` for λ = 0.
    time_constant
        1 / |Re λ| in s: the decay time to 1/e for stable modes, the e-folding *growth* time for unstable
        ones; ``None`` on the imaginary axis.
    period
        2π / |Im λ| in s (damped period); ``None`` for a real eigenvalue.
    shape
        The mode shape {state: component}, the eigenvector scaled so its largest component is exactly 1
        (real for a real eigenvalue). For a defective eigenvalue it is the leading Schur vector after
        reordering the Schur form to put λ first, an exact eigenvector of the computed form.
    multiplicity, geometric_multiplicity, shape_source
        Algebraic and geometric multiplicity; ``"eigenvector"`` or ``"schur vector"``.
    """

    eigenvalue: complex
    omega_n: float
    zeta: float | None
    time_constant: float | None
    period: float | None
    shape: Mapping[str, complex]
    multiplicity: int = 1
    geometric_multiplicity: int = 1
    shape_source: str = "eigenvector"

    def __post_init__(self) -> None:
        if not 1 <= self.geometric_multiplicity <= self.multiplicity:
            raise InputError(f"mode multiplicities must satisfy 1 <= geometric <= algebraic, got "
                             f"{self.geometric_multiplicity} and {self.multiplicity}")
        object.__setattr__(self, "shape", MappingProxyType(dict(self.shape)))

    @property
    def defective(self) -> bool:
        """Fewer independent eigenvectors than the multiplicity (a Jordan block)."""
        return self.geometric_multiplicity < self.multiplicity

    def to_dict(self) -> dict[str, Any]:
        """The CLI JSON row: eigenvalue and shape components as [re, im], ``None`` for undefined values."""
        return {
            "eigenvalue": [float(self.eigenvalue.real), float(self.eigenvalue.imag)],
            "omega_n": float(self.omega_n),
            **{key: None if value is None else float(value) for key, value in
               (("zeta", self.zeta), ("time_constant", self.time_constant), ("period", self.period))},
            "shape": {name: [float(c.real), float(c.imag)] for name, c in self.shape.items()},
            "multiplicity": self.multiplicity,  # an extension of the JSON contract (added keys only)
        }


@dataclass(frozen=True, slots=True)
class Modes:
    """The modes, largest real part first; ``stability`` (one of :data:`STABILITY`), an ``explanation`` naming
    the deciding eigenvalue, and the absolute real-part ``tolerance`` used (tolerance * max(1, ||A||_2)).
    """

    rows: tuple[Mode, ...]
    stability: str
    explanation: str
    tolerance: float
    states: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.stability not in STABILITY:
            raise InputError(f"stability must be one of {', '.join(STABILITY)}, got {self.stability!r}")
        object.__setattr__(self, "rows", tuple(self.rows))

    def to_dict(self) -> dict[str, Any]:
        """``{"modes": [row, ...], "stability": verdict, "explanation": sentence}``, JSON-ready.

        The keys of the CLI contract plus ``multiplicity`` per row and ``explanation`` (added keys only).
        """
        return {"modes": [row.to_dict() for row in self.rows], "stability": self.stability,
                "explanation": self.explanation}

    def table(self) -> str:
        """A plain-text table of the modes followed by the verdict and its explanation."""
        header = ("eigenvalue", "omega_n [rad/s]", "zeta", "time const [s]", "period [s]", "mult")
        lines = [[_complex_text(r.eigenvalue), _number(r.omega_n), _number(r.zeta), _number(r.time_constant),
                  _number(r.period), f"{r.multiplicity}{' (defective)' if r.defective else ''}"] for r in self.rows]
        widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
        render = ["  ".join(text.rjust(w) for text, w in zip(row, widths)) for row in [list(header), *lines]]
        render.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join([*render, "", f"{self.stability}: {self.explanation}"])

    def _repr_html_(self) -> str:
        """The table of :meth:`table` in HTML, then the verdict and its explanation (for Jupyter)."""
        header = ("eigenvalue", "omega_n [rad/s]", "zeta", "time const [s]", "period [s]", "multiplicity")
        rows = [(_complex_text(r.eigenvalue), _number(r.omega_n), _number(r.zeta), _number(r.time_constant),
                 _number(r.period), f"{r.multiplicity}{' (defective)' if r.defective else ''}") for r in self.rows]
        return display.block([display.heading(f"modes: {self.stability}"), display.html_table(rows, header=header),
                              display.note(self.explanation)])

    def _repr_latex_(self) -> str:
        """One line per mode: the eigenvalue, omega_n and zeta, as display math."""
        lines = []
        for k, row in enumerate(self.rows, 1):
            z = row.eigenvalue
            value = display.latex_number(z.real)
            if z.imag:
                value += f" \\pm {display.latex_number(abs(z.imag))}\\,i"
            zeta = r"\text{undefined}" if row.zeta is None else display.latex_number(row.zeta)
            lines.append(f"\\lambda_{{{k}}} &= {value}, & \\omega_n &= {display.latex_number(row.omega_n)}, "
                         f"& \\zeta &= {zeta}")
        verdict = f"\\text{{{self.stability}}}"
        return "$$\\begin{aligned} " + " \\\\ ".join([*lines, verdict]) + " \\end{aligned}$$"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def _complex_text(value: complex) -> str:
    return f"{value.real:.6g}" if value.imag == 0.0 else f"{value.real:.6g} ± {abs(value.imag):.6g}j"


def _shape(decomposition: ModalDecomposition, A: Array, k: int) -> tuple[ComplexArray, str]:
    """The (unnormalized) shape vector of cluster ``k`` and where it came from."""
    members = decomposition.clusters[k]
    if decomposition.geometric[k] == len(members):
        index = max(members, key=lambda i: decomposition.eigenvalues[i].imag)
        return decomposition.V[:, index], "eigenvector"
    values, chosen = decomposition.eigenvalues, set(members)

    def select(z: complex) -> bool:  # the Schur eigenvalue belongs to this cluster
        return int(np.argmin(np.abs(values - z))) in chosen

    _, Z, count = scipy.linalg.schur(A, output="complex", sort=select)
    if count == 0:  # reordering failed to select it: fall back to the eigenvector
        return decomposition.V[:, members[0]], "eigenvector"
    return np.asarray(Z[:, 0], dtype=np.complex128), "schur vector"


def _normalized(vector: ComplexArray, real: bool) -> ComplexArray:
    pivot = int(np.argmax(np.abs(vector)))
    scaled = vector / vector[pivot]
    scaled[pivot] = 1.0  # exactly, not 1 - eps from the complex division
    # For real λ and A, Re and Im of an eigenvector are eigenvectors; Re keeps the unit component.
    return np.asarray(scaled.real if real else scaled, dtype=np.complex128)


def _mode(decomposition: ModalDecomposition, A: Array, k: int, states: tuple[str, ...], tol: float) -> Mode:
    value = decomposition.center(k)
    real, magnitude = value.imag == 0.0, abs(value)
    on_axis, zero = abs(value.real) <= tol, magnitude <= tol
    vector, source = _shape(decomposition, A, k)
    return Mode(
        eigenvalue=value, omega_n=0.0 if zero else magnitude,
        zeta=None if zero else 0.0 if on_axis else -value.real / magnitude,
        time_constant=None if on_axis else 1.0 / abs(value.real),
        period=None if real or zero else 2.0 * math.pi / abs(value.imag),
        shape=dict(zip(states, (complex(c) for c in _normalized(vector, real)))),
        multiplicity=len(decomposition.clusters[k]), geometric_multiplicity=decomposition.geometric[k],
        shape_source=source,
    )


def _verdict(rows: Sequence[Mode], tol: float) -> tuple[str, str]:
    """(stability, explanation) by the rule in :func:`modes`; ``rows`` sorted by real part, largest first."""
    lead = rows[0]
    text = f"eigenvalue {_complex_text(lead.eigenvalue)}"
    if lead.eigenvalue.real > tol:
        return "unstable", (f"{text} has real part {lead.eigenvalue.real:.6g} > {tol:.3g}: the mode grows by a "
                            f"factor e every {1.0 / lead.eigenvalue.real:.6g} s")
    if lead.eigenvalue.real < -tol:
        return "asymptotically stable", (f"every eigenvalue has real part < -{tol:.3g}; the slowest, {text}, "
                                         f"decays with time constant {-1.0 / lead.eigenvalue.real:.6g} s")
    axis = [row for row in rows if abs(row.eigenvalue.real) <= tol]
    for row in axis:
        if row.defective:
            return "unstable", (
                f"eigenvalue {_complex_text(row.eigenvalue)} on the imaginary axis has multiplicity "
                f"{row.multiplicity} but only {row.geometric_multiplicity} independent eigenvector(s) "
                "(a Jordan block): the response grows like a power of t"
            )
    names = ", ".join(_complex_text(row.eigenvalue) for row in axis)
    return "marginally stable", (f"no eigenvalue has real part > {tol:.3g}; those on the imaginary axis ({names}) "
                                 "are semisimple, so the response stays bounded but does not decay")


def modes(system: Any, *, tolerance: float = 1e-9) -> Modes:
    """The modes and the stability of a linear system x' = A x + B u.

    Parameters
    ----------
    system
        A :class:`~robodyn.LinearSystem` (or any object with ``A`` (n, n) and, optionally, ``states``).
    tolerance
        Relative tolerance of "on the imaginary axis": |Re λ| <= tol with tol = tolerance * max(1, ||A||_2).

    Returns
    -------
    Modes
        One row per numerically distinct real eigenvalue or complex pair (multiplicity in the row), largest
        real part first. Every Re λ < -tol: asymptotically stable; some Re λ > tol: unstable; otherwise the
        eigenvalues on the axis must be semisimple (geometric = algebraic multiplicity, by the rank of
        A - λI) for "marginally stable", else "unstable" (a double integrator). Rows on the axis get zeta = 0
        and no time constant; λ = 0 (|λ| <= tol) gets omega_n = 0, zeta None. Unlike python-control's
        ``damp`` (damping 1 for an unstable real pole), zeta is -1 for a real positive eigenvalue.
    """
    relative = finite_number(tolerance, "tolerance")
    if relative <= 0.0:
        raise InputError(f"tolerance must be > 0, got {relative}: e.g. 1e-9")
    A, states = _system_matrix(system)
    decomposition = modal_decomposition(A)
    tol = relative * max(1.0, decomposition.norm)
    keep = [k for k in range(len(decomposition.clusters)) if decomposition.center(k).imag >= 0.0]
    rows = [_mode(decomposition, A, k, states, tol) for k in keep]
    rows.sort(key=lambda row: (-row.eigenvalue.real, abs(row.eigenvalue.imag)))
    stability, explanation = _verdict(rows, tol)
    return Modes(tuple(rows), stability, explanation, tol, states)
