"""Modal analysis of x' = A x + B u: eigen-decomposition, modes with damping, stability.

:func:`modal_decomposition` (A = V Λ V^-1 and the Schur form A = Z T Z^H) and :func:`modes` (one row per real
eigenvalue or complex pair, and a verdict). The forced response by the convolution integral is in
:mod:`robodyn.linear.response`.

Discrete time (x[k+1] = A x[k] + B u[k], sample period dt): the eigenvalues are the poles z; a mode is the
sampled continuous one s = ln(z) / dt (principal logarithm), so omega_n = |ln z| / dt, zeta = -cos(arg ln z)
and the time constant dt / |ln |z|| (Franklin, Powell & Workman, *Digital Control of Dynamic Systems*, 3rd ed.,
1998, sec. 4.3). Stable iff every |z| < 1; |z| = 1 (within the tolerance) is the unit circle, the discrete
counterpart of the imaginary axis.

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

import cmath
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn import display
from robodyn.base.errors import InputError, ShapeError
from robodyn.base.numbers import finite_number

__all__ = ["STABILITY", "ModalDecomposition", "Mode", "Modes", "modal_decomposition", "modes", "system_matrix"]

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


def system_matrix(system: Any) -> tuple[Array, tuple[str, ...]]:
    """A linear system's square matrix A ``(n, n)`` and its ``n`` state names (``x1`` ... when it names none), or
    InputError / ShapeError saying what to give."""
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

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        return result_html(self, "Modal decomposition of A")

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
    from scipy.sparse.csgraph import connected_components  # here: importing this module needs no scipy

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
    import scipy.linalg  # here: importing this module (and robodyn.linear.lti) needs no scipy

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

    For a discrete-time system ``eigenvalue`` is the pole z and omega_n, zeta, time_constant and period are those
    of s = ln(z) / dt (module docstring): z = 0 (a deadbeat mode, gone after one step per multiplicity) has
    omega_n = inf (null in JSON), zeta = 1 and time constant 0; z = 1 has omega_n = 0 and zeta None; a negative
    real z oscillates with period 2 dt.

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
            "omega_n": float(self.omega_n) if math.isfinite(self.omega_n) else None,  # inf: a deadbeat pole z = 0
            **{key: None if value is None else float(value) for key, value in
               (("zeta", self.zeta), ("time_constant", self.time_constant), ("period", self.period))},
            "shape": {name: [float(c.real), float(c.imag)] for name, c in self.shape.items()},
            "multiplicity": self.multiplicity,  # an extension of the JSON contract (added keys only)
        }

    def _repr_html_(self) -> str:
        from robodyn.display import result_html

        return result_html(self, f"Mode {_complex_text(self.eigenvalue)}",
                           units={"omega_n": "rad/s", "time_constant": "s", "period": "s"})

@dataclass(frozen=True, slots=True)
class Modes:
    """The modes, largest real part first; ``stability`` (one of :data:`STABILITY`), an ``explanation`` naming
    the deciding eigenvalue, and the absolute real-part ``tolerance`` used (tolerance * max(1, ||A||_2)).

    For a discrete-time system (``dt`` set) the rows are its poles z, largest |z| first, and ``tolerance`` is
    that of | |z| - 1 |.
    """

    rows: tuple[Mode, ...]
    stability: str
    explanation: str
    tolerance: float
    states: tuple[str, ...] = ()
    dt: float | None = None

    def __post_init__(self) -> None:
        if self.stability not in STABILITY:
            raise InputError(f"stability must be one of {', '.join(STABILITY)}, got {self.stability!r}")
        object.__setattr__(self, "rows", tuple(self.rows))

    def to_dict(self) -> dict[str, Any]:
        """``{"modes": [row, ...], "stability": verdict, "explanation": sentence}``, JSON-ready.

        The keys of the CLI contract plus ``multiplicity`` per row and ``explanation`` (added keys only); a
        discrete-time system adds ``dt`` and, for a deadbeat pole z = 0, ``notes`` saying why omega_n is null.
        """
        data: dict[str, Any] = {"modes": [row.to_dict() for row in self.rows], "stability": self.stability,
                                "explanation": self.explanation}
        if self.dt is not None:
            data["dt"] = self.dt
            if any(not math.isfinite(row.omega_n) for row in self.rows):
                data["notes"] = ["omega_n is null for the pole z = 0: a deadbeat mode, gone after one step per "
                                 "multiplicity (ln z = -inf, an infinite natural frequency)"]
        return data

    @property
    def _scale(self) -> float:
        """The size eigenvalues are round-off against: the largest |λ| (at least 1; discrete time: 1)."""
        return max([1.0, *(abs(r.eigenvalue) for r in self.rows)]) if self.dt is None else 1.0

    def _header(self) -> tuple[str, ...]:
        first = "eigenvalue" if self.dt is None else "pole z"
        return (first, "omega_n [rad/s]", "zeta", "time const [s]", "period [s]")

    def _title(self) -> str:
        return "modes" if self.dt is None else f"modes (discrete-time, dt = {self.dt:g} s)"

    def table(self) -> str:
        """A plain-text table of the modes followed by the verdict and its explanation."""
        header = (*self._header(), "mult")
        lines = [[_complex_text(r.eigenvalue, self._scale), _number(r.omega_n), _number(r.zeta),
                  _number(r.time_constant),
                  _number(r.period), f"{r.multiplicity}{' (defective)' if r.defective else ''}"] for r in self.rows]
        widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
        render = ["  ".join(text.rjust(w) for text, w in zip(row, widths)) for row in [list(header), *lines]]
        render.insert(1, "  ".join("-" * w for w in widths))
        title = [] if self.dt is None else [self._title(), ""]
        return "\n".join([*title, *render, "", f"{self.stability}: {self.explanation}"])

    def _repr_html_(self) -> str:
        """The table of :meth:`table` in HTML, then the verdict and its explanation (for Jupyter)."""
        header = (*self._header(), "multiplicity")
        rows = [(_complex_text(r.eigenvalue, self._scale), _number(r.omega_n), _number(r.zeta),
                 _number(r.time_constant),
                 _number(r.period), f"{r.multiplicity}{' (defective)' if r.defective else ''}") for r in self.rows]
        return display.block([display.heading(f"{self._title()}: {self.stability}"),
                              display.html_table(rows, header=header),
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
            symbol = "\\lambda" if self.dt is None else "z"
            lines.append(f"{symbol}_{{{k}}} &= {value}, & \\omega_n &= {display.latex_number(row.omega_n)}, "
                         f"& \\zeta &= {zeta}")
        verdict = f"\\text{{{self.stability}}}"
        return "$$\\begin{aligned} " + " \\\\ ".join([*lines, verdict]) + " \\end{aligned}$$"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def _complex_text(value: complex, scale: float | None = None) -> str:
    from robodyn.display import cleaned

    # a real part of 1e-17 beside 3.13j, or a double eigenvalue of -7e-18 beside 9.6, is round-off: shown as 0
    value = complex(cleaned([value], scale=scale)[0])
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

    import scipy.linalg

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


def _mode(decomposition: ModalDecomposition, A: Array, k: int, states: tuple[str, ...], tol: float,
          dt: float | None = None) -> Mode:
    value = decomposition.center(k)
    real = value.imag == 0.0
    vector, source = _shape(decomposition, A, k)
    if dt is None:
        magnitude = abs(value)
        on_axis, zero = abs(value.real) <= tol, magnitude <= tol
        omega_n = 0.0 if zero else magnitude
        zeta = None if zero else 0.0 if on_axis else -value.real / magnitude
        time_constant = None if on_axis else 1.0 / abs(value.real)
        period = None if real or zero else 2.0 * math.pi / abs(value.imag)
    else:
        omega_n, zeta, time_constant, period = _sampled(value, tol, dt)
    return Mode(
        eigenvalue=value, omega_n=omega_n, zeta=zeta, time_constant=time_constant, period=period,
        shape=dict(zip(states, (complex(c) for c in _normalized(vector, real)))),
        multiplicity=len(decomposition.clusters[k]), geometric_multiplicity=decomposition.geometric[k],
        shape_source=source,
    )


def _sampled(z: complex, tol: float, dt: float) -> tuple[float, float | None, float | None, float | None]:
    """(omega_n, zeta, time constant, period) of the pole z of a system sampled every dt: those of s = ln(z) / dt."""
    radius = abs(z)
    if radius <= tol:  # z = 0: a deadbeat mode
        return math.inf, 1.0, 0.0, None
    s = cmath.log(z) / dt  # principal branch: |Im s| <= pi / dt
    on_circle = abs(radius - 1.0) <= tol
    if abs(z - 1.0) <= tol:  # z = 1: the sampled s = 0
        return 0.0, None, None, None
    zeta = 0.0 if on_circle else -s.real / abs(s)
    time_constant = None if on_circle else dt / abs(math.log(radius))
    period = None if z.imag == 0.0 and z.real > 0.0 else 2.0 * math.pi / abs(s.imag)
    return abs(s), zeta, time_constant, period


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


def _discrete_verdict(rows: Sequence[Mode], tol: float, dt: float) -> tuple[str, str]:
    """(stability, explanation) of a discrete-time system by |z| (see :func:`modes`); ``rows`` largest |z| first."""
    lead = rows[0]
    radius, text = abs(lead.eigenvalue), f"discrete-time (dt = {dt:g} s): pole z = {_complex_text(lead.eigenvalue)}"
    if radius > 1.0 + tol:
        return "unstable", (f"{text} has |z| = {radius:.6g} > 1: the mode grows by a factor {radius:.6g} per step, "
                            f"e every {dt / math.log(radius):.6g} s")
    if radius < 1.0 - tol:
        slowest = "decays within one step" if radius <= tol else \
            f"decays with time constant {dt / -math.log(radius):.6g} s ({1.0 / -math.log(radius):.6g} steps)"
        return "asymptotically stable", f"discrete-time (dt = {dt:g} s): every pole has |z| < 1; the slowest, " \
                                        f"z = {_complex_text(lead.eigenvalue)}, {slowest}"
    circle = [row for row in rows if abs(abs(row.eigenvalue) - 1.0) <= tol]
    for row in circle:
        if row.defective:
            return "unstable", (f"{text} on the unit circle has multiplicity {row.multiplicity} but only "
                                f"{row.geometric_multiplicity} independent eigenvector(s) (a Jordan block): the "
                                "response grows like a power of k")
    names = ", ".join(_complex_text(row.eigenvalue) for row in circle)
    return "marginally stable", (f"discrete-time (dt = {dt:g} s): no pole has |z| > 1; those on the unit circle "
                                 f"({names}) are semisimple, so the response stays bounded but does not decay")


def _sample_period(system: Any) -> float | None:
    """The system's sample period (``sample_period``: None for continuous time), checked."""
    period = getattr(system, "sample_period", None)
    if period is None:
        return None
    value = finite_number(period, "sample period dt")
    if value <= 0.0:
        raise InputError(f"sample period dt = {value} must be > 0 (None for continuous time)")
    return value


def modes(system: Any, *, tolerance: float = 1e-9) -> Modes:
    """The modes and the stability of a linear system x' = A x + B u (or x[k+1] = A x[k] + B u[k]).

    Parameters
    ----------
    system
        A :class:`~robodyn.LinearSystem` (or any object with ``A`` (n, n) and, optionally, ``states`` and
        ``sample_period``).
    tolerance
        Relative tolerance of "on the imaginary axis": |Re λ| <= tol with tol = tolerance * max(1, ||A||_2)
        (discrete time: "on the unit circle", | |z| - 1 | <= tol).

    Returns
    -------
    Modes
        One row per numerically distinct real eigenvalue or complex pair (multiplicity in the row), largest
        real part first. Every Re λ < -tol: asymptotically stable; some Re λ > tol: unstable; otherwise the
        eigenvalues on the axis must be semisimple (geometric = algebraic multiplicity, by the rank of
        A - λI) for "marginally stable", else "unstable" (a double integrator). Rows on the axis get zeta = 0
        and no time constant; λ = 0 (|λ| <= tol) gets omega_n = 0, zeta None. Unlike python-control's
        ``damp`` (damping 1 for an unstable real pole), zeta is -1 for a real positive eigenvalue.
        Discrete time: the poles z, largest |z| first; every |z| < 1 - tol: asymptotically stable; some
        |z| > 1 + tol: unstable; poles on the unit circle must be semisimple for "marginally stable"; omega_n,
        zeta, time constant and period are those of s = ln(z) / dt (Franklin–Powell–Workman, module docstring).
    """
    relative = finite_number(tolerance, "tolerance")
    if relative <= 0.0:
        raise InputError(f"tolerance must be > 0, got {relative}: e.g. 1e-9")
    A, states = system_matrix(system)
    dt = _sample_period(system)
    decomposition = modal_decomposition(A)
    tol = relative * max(1.0, decomposition.norm)
    keep = [k for k in range(len(decomposition.clusters)) if decomposition.center(k).imag >= 0.0]
    rows = [_mode(decomposition, A, k, states, tol, dt) for k in keep]
    if dt is None:
        rows.sort(key=lambda row: (-row.eigenvalue.real, abs(row.eigenvalue.imag)))
        stability, explanation = _verdict(rows, tol)
    else:
        rows.sort(key=lambda row: (-abs(row.eigenvalue), abs(cmath.phase(row.eigenvalue))))
        stability, explanation = _discrete_verdict(rows, tol, dt)
    return Modes(tuple(rows), stability, explanation, tol, states, dt)
