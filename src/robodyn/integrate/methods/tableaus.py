"""Explicit Runge–Kutta methods as data: Butcher tableaus, embedded error weights, dense output.

A method is a :class:`ButcherTableau`; the kernels in ``kernel_template.py`` read only its arrays.
The names ``simulate(method=...)`` and the CLI take are the registry
:data:`robodyn.integrate.methods.registry.REGISTRY`,
which holds these tableaus. ``METHODS`` (name -> tableau), ``FIXED_STEP`` and ``ADAPTIVE`` (names) are kept
for compatibility as views of it. Every module-level name here (``DOPRI5``, ...) is made on first use and kept:
making a tableau checks its coefficients (exact rationals where the method has them), and a run needs one.

References
----------
.. [HNW] E. Hairer, S. P. Nørsett, G. Wanner, "Solving Ordinary Differential Equations I: Nonstiff
   Problems", 2nd ed., Springer 1993, Sec. II.1 (order conditions), II.4 (step control), II.5 (DOPRI5,
   DOP853), II.6 (dense output).
.. [DP] J. R. Dormand, P. J. Prince, "A family of embedded Runge-Kutta formulae", J. Comput. Appl. Math.
   6 (1980) 19-26.
.. [Sh] L. F. Shampine, "Some practical Runge-Kutta formulas", Math. Comp. 46 (1986) 135-150.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robodyn.base.errors import InputError
from robodyn.base.numbers import float_array
from robodyn.integrate.methods.families import ENTRIES, Family, names

__all__ = ["ADAPTIVE", "DOP853", "DOPRI5", "EULER", "FIXED_STEP", "HEUN", "METHODS", "RK4", "ButcherTableau"]

_TOL = 1e-14  # Consistency tolerance: coefficients are exact fractions or 30-digit decimals rounded once.
_DENSE_KINDS = ("polynomial", "dop853")

Array = NDArray[np.float64]
_lock = threading.Lock()


def _frozen(value: ArrayLike | None, ndim: int, label: str, name: str) -> Array | None:
    """A tableau's coefficients: a read-only float64 copy with ``ndim`` dimensions and finite entries."""
    if value is None:
        return None
    return float_array(value, f"tableau {name!r}: {label}", ndim=ndim, shape_error=InputError,
                       not_array="{what} must be an array of numbers",
                       wrong_shape="{what} must have {ndim} dimension(s), got shape {shape}",
                       not_finite="{what} contains non-finite coefficients")


@dataclass(frozen=True, slots=True, eq=False)
class ButcherTableau:
    """An explicit Runge–Kutta method: ``k_j = f(t + c_j h, x + h sum_{l<j} A[j, l] k_l)``,
    ``x_new = x + h sum_j b_j k_j``. Frozen; arrays are read-only float64.

    Parameters
    ----------
    name : str
    order : int
        Order of ``x_new``.
    A : (s, s)
        Strictly lower triangular; row sums equal ``c``.
    b : (s,)
        Weights, summing to one.
    c : (s,)
        Nodes.
    e : (s,), optional
        Error weights ``b - b_hat`` of the embedded method; the local error estimate is ``h sum_j e_j k_j``.
        For DOP853 this is the 5th-order estimator ``E5``.
    error_order : int, optional
        Order of the embedded method (the error estimate is ``O(h^(error_order + 1))``); required with ``e``.
    e3 : (s,), optional
        DOP853 only: weights ``b - b_hat3`` of its 3rd-order estimator, combined with ``e`` as in [HNW] II.10.
    fsal : bool
        First same as last: the last stage is ``f(t + h, x_new)`` (``A[-1] == b``, ``c[-1] == 1``) and is
        reused as the first stage of the next step.
    a_extra : (q, s + q), optional
        Rows of extra stages used only by dense output (DOP853: 3 stages).
    c_extra : (q,), optional
        Nodes of the extra stages.
    dense : (k, s + q), optional
        Dense-output matrix, rows are polynomial coefficients as combinations of the stages.
    dense_kind : {"polynomial", "dop853"}, optional
        ``"polynomial"``: ``x(t + theta h) = x + h sum_r theta^(r+1) sum_j dense[r, j] k_j`` (DOPRI5, [Sh]).
        ``"dop853"``: Hairer's 7th-order form built from ``dense`` and the extra stages ([HNW] II.6).
    """

    name: str
    order: int
    A: Array
    b: Array
    c: Array
    e: Array | None = None
    error_order: int | None = None
    e3: Array | None = None
    fsal: bool = False
    a_extra: Array | None = None
    c_extra: Array | None = None
    dense: Array | None = None
    dense_kind: str | None = None

    def __post_init__(self) -> None:
        name = self.name
        for label, ndim in (("A", 2), ("b", 1), ("c", 1), ("e", 1), ("e3", 1), ("a_extra", 2), ("c_extra", 1),
                            ("dense", 2)):
            object.__setattr__(self, label, _frozen(getattr(self, label), ndim, label, name))
        s = self.b.size
        if self.A.shape != (s, s) or self.c.shape != (s,):
            raise InputError(f"tableau {name!r}: A {self.A.shape}, b {self.b.shape}, c {self.c.shape} do not match "
                             f"a method with {s} stages: A must be (s, s), b and c (s,)")
        if np.any(np.triu(self.A) != 0.0):
            raise InputError(f"tableau {name!r}: A must be strictly lower triangular (explicit method)")
        _check_rows(self.A, self.c, "A", name)
        if abs(self.b.sum() - 1.0) > _TOL:
            raise InputError(f"tableau {name!r}: the weights b sum to {self.b.sum()!r}, not 1")
        self._check_error_weights()
        if self.fsal and not (np.array_equal(self.A[-1], self.b) and self.c[-1] == 1.0 and self.b[-1] == 0.0):
            raise InputError(f"tableau {name!r}: fsal needs A[-1] == b, b[-1] == 0 and c[-1] == 1")
        self._check_dense()

    def _check_error_weights(self) -> None:
        s, name = self.b.size, self.name
        for label in ("e", "e3"):
            weights = getattr(self, label)
            if weights is not None and weights.shape != (s,):
                raise InputError(f"tableau {name!r}: {label} has shape {weights.shape}, expected ({s},)")
            if weights is not None and abs(weights.sum()) > _TOL:
                raise InputError(f"tableau {name!r}: {label} must sum to 0 (b and b_hat both sum to 1)")
        if (self.e is None) != (self.error_order is None):
            raise InputError(f"tableau {name!r}: give the error weights e and error_order together")
        if self.e3 is not None and self.e is None:
            raise InputError(f"tableau {name!r}: e3 is a secondary estimator and needs e")

    def _check_dense(self) -> None:
        s, name = self.b.size, self.name
        if (self.a_extra is None) != (self.c_extra is None):
            raise InputError(f"tableau {name!r}: give a_extra and c_extra together")
        q = 0 if self.c_extra is None else self.c_extra.size
        if self.a_extra is not None and self.c_extra is not None:
            if self.a_extra.shape != (q, s + q):
                raise InputError(f"tableau {name!r}: a_extra has shape {self.a_extra.shape}, expected ({q}, {s + q})")
            if any(np.any(self.a_extra[r, s + r:] != 0.0) for r in range(q)):
                raise InputError(f"tableau {name!r}: an extra stage may only use the stages before it")
            _check_rows(self.a_extra, self.c_extra, "a_extra", name)
        if (self.dense is None) != (self.dense_kind is None):
            raise InputError(f"tableau {name!r}: give dense and dense_kind together")
        if self.dense is not None:
            if self.dense_kind not in _DENSE_KINDS:
                raise InputError(f"tableau {name!r}: dense_kind {self.dense_kind!r} is not one of {_DENSE_KINDS}")
            if self.dense.shape[1] != s + q:
                raise InputError(f"tableau {name!r}: dense has {self.dense.shape[1]} columns, expected {s + q}")
        if (self.dense_kind == "dop853") != (self.e3 is not None):
            raise InputError(f"tableau {name!r}: the kernel ties the DOP853 dense output to the DOP853 error "
                             "estimate: give e3 exactly when dense_kind is 'dop853'")

    @property
    def stages(self) -> int:
        """Number of stages ``s`` of a step (without dense-output extra stages)."""
        return int(self.b.size)

    @property
    def adaptive(self) -> bool:
        """Whether the adaptive kernel can run this method (FSAL, error weights and dense output)."""
        return self.fsal and self.e is not None and self.dense is not None

    def kernel_method(self) -> tuple[tuple[Array, Array, Array, Array, Array, int], Array | None]:
        """The ``method`` and ``dop853`` arguments of the adaptive kernels.

        Returns
        -------
        (A_full, b, c_full, e, dense, error_order), e3
            ``A_full (s + q, s + q)`` and ``c_full (s + q,)`` hold the extra dense stages below the step's
            stages. ``e3`` is DOP853's third-order error weights (its combined error estimate and Hairer's dense
            output go with it), or None: the kernels prune DOP853's code for a None (a compile-time constant).
        """
        if not self.adaptive or self.e is None or self.dense is None or self.error_order is None:
            raise InputError(f"method {self.name!r} has no error estimate or dense output: use it with a fixed "
                             f"step, or choose one of {names('adaptive')}")
        s = self.stages
        q = 0 if self.c_extra is None else self.c_extra.size
        a_full = np.zeros((s + q, s + q))
        a_full[:s, :s] = self.A
        c_full = np.zeros(s + q)
        c_full[:s] = self.c
        if self.a_extra is not None and self.c_extra is not None:
            a_full[s:] = self.a_extra
            c_full[s:] = self.c_extra
        e3 = None if self.dense_kind != "dop853" or self.e3 is None else np.array(self.e3)
        return (a_full, np.array(self.b), c_full, np.array(self.e), np.array(self.dense), int(self.error_order)), e3


def _check_rows(a: Array, c: Array, label: str, name: str) -> None:
    gap = np.abs(a.sum(axis=1) - c)
    if np.any(gap > _TOL):
        row = int(np.argmax(gap))
        raise InputError(f"tableau {name!r}: row {row} of {label} sums to {a[row].sum()!r}, but its node c is "
                         f"{c[row]!r}: each row of {label} must sum to its node")


class _Q(NamedTuple):
    """An exact rational ``n / d`` of the coefficient tables. Its float is ``n / d``, which Python rounds correctly
    (the same operation as ``float(fractions.Fraction(n, d))``); :mod:`fractions` itself would cost a new process
    ~3 ms to import before its first run."""

    n: int
    d: int = 1

    def __sub__(self, other: object) -> _Q:
        o = other if isinstance(other, _Q) else _Q(int(other))  # type: ignore[call-overload]
        return _Q(self.n * o.d - o.n * self.d, self.d * o.d)

    def __rsub__(self, other: object) -> _Q:
        return _Q(int(other)) - self  # type: ignore[call-overload]

    def __float__(self) -> float:
        return self.n / self.d


Row = list[_Q | int]


def _exact(rows: list[Row]) -> Array:
    return np.array([[float(v) for v in row] for row in rows])


def _euler() -> ButcherTableau:
    return ButcherTableau("euler", 1, A=np.zeros((1, 1)), b=np.ones(1), c=np.zeros(1))


def _heun() -> ButcherTableau:  # explicit trapezoid
    return ButcherTableau("heun", 2, A=np.array([[0.0, 0.0], [1.0, 0.0]]), b=np.array([0.5, 0.5]),
                          c=np.array([0.0, 1.0]))


def _rk4() -> ButcherTableau:
    F = _Q
    return ButcherTableau(
        "rk4", 4,
        A=_exact([[0, 0, 0, 0], [F(1, 2), 0, 0, 0], [0, F(1, 2), 0, 0], [0, 0, 1, 0]]),
        b=_exact([[F(1, 6), F(1, 3), F(1, 3), F(1, 6)]])[0],
        c=_exact([[0, F(1, 2), F(1, 2), 1]])[0],
    )


def _dopri5() -> ButcherTableau:
    """Dormand–Prince 5(4) [DP], [HNW] Table II.5.2, with Shampine's dense output [Sh] as in scipy's RK45."""
    F = _Q
    a: list[Row] = [
        [0, 0, 0, 0, 0, 0, 0],
        [F(1, 5), 0, 0, 0, 0, 0, 0],
        [F(3, 40), F(9, 40), 0, 0, 0, 0, 0],
        [F(44, 45), F(-56, 15), F(32, 9), 0, 0, 0, 0],
        [F(19372, 6561), F(-25360, 2187), F(64448, 6561), F(-212, 729), 0, 0, 0],
        [F(9017, 3168), F(-355, 33), F(46732, 5247), F(49, 176), F(-5103, 18656), 0, 0],
        [F(35, 384), 0, F(500, 1113), F(125, 192), F(-2187, 6784), F(11, 84), 0],
    ]
    b = a[-1]
    b_hat: Row = [F(5179, 57600), 0, F(7571, 16695), F(393, 640), F(-92097, 339200), F(187, 2100), F(1, 40)]
    c: Row = [0, F(1, 5), F(3, 10), F(4, 5), F(8, 9), 1, 1]
    p: list[Row] = [  # x(t + theta h) = x + h sum_r theta^(r+1) sum_j P[j, r] k_j; scipy's RK45.P
        [1, F(-8048581381, 2820520608), F(8663915743, 2820520608), F(-12715105075, 11282082432)],
        [0, 0, 0, 0],
        [0, F(131558114200, 32700410799), F(-68118460800, 10900136933), F(87487479700, 32700410799)],
        [0, F(-1754552775, 470086768), F(14199869525, 1410260304), F(-10690763975, 1880347072)],
        [0, F(127303824393, 49829197408), F(-318862633887, 49829197408), F(701980252875, 199316789632)],
        [0, F(-282668133, 205662961), F(2019193451, 616988883), F(-1453857185, 822651844)],
        [0, F(40617522, 29380423), F(-110615467, 29380423), F(69997945, 29380423)],
    ]
    e: Row = [_Q(bj) - bh if isinstance(bj, int) else bj - bh for bj, bh in zip(b, b_hat, strict=True)]
    return ButcherTableau("dopri5", 5, A=_exact(a), b=_exact([b])[0], c=_exact([c])[0], e=_exact([e])[0],
                          error_order=4, fsal=True, dense=_exact(p).T, dense_kind="polynomial")


def _dop853_coefficients() -> ModuleType:
    """scipy's ``integrate/_ivp/dop853_coefficients.py`` (numpy constants only), loaded from its file.

    ``import scipy.integrate._ivp.dop853_coefficients`` would first import all of ``scipy.integrate``
    (~0.1 s, most of it for solvers robodyn does not use at start-up).
    """
    spec = importlib.util.find_spec("scipy")
    assert spec is not None and spec.origin is not None
    path = Path(spec.origin).parent / "integrate" / "_ivp" / "dop853_coefficients.py"
    file_spec = importlib.util.spec_from_file_location("robodyn._dop853_coefficients", path)
    assert file_spec is not None and file_spec.loader is not None
    module = importlib.util.module_from_spec(file_spec)
    file_spec.loader.exec_module(module)
    return module


def _dop853() -> ButcherTableau:
    """DOP853 [HNW] II.5/II.10, coefficients from scipy's ``dop853_coefficients`` (Hairer's Fortran values).

    The 12 stages plus the FSAL stage ``f(t + h, x_new)`` form the 13-stage tableau (scipy's ``B`` is row 12
    of its ``A``); stages 13-15 are the extra stages of the 7th-order dense output.
    """
    _d853 = _dop853_coefficients()
    s, s_ext = _d853.N_STAGES + 1, _d853.N_STAGES_EXTENDED
    b = np.zeros(s)
    b[:-1] = _d853.B
    return ButcherTableau(
        "dop853", 8, A=_d853.A[:s, :s], b=b, c=_d853.C[:s], e=_d853.E5, error_order=7, e3=_d853.E3, fsal=True,
        a_extra=_d853.A[s:s_ext, :s_ext], c_extra=_d853.C[s:s_ext], dense=_d853.D, dense_kind="dop853",
    )


#: The module's tableaus by name, each made by :func:`__getattr__` on first use.
_MADE_BY: Final[Mapping[str, Callable[[], ButcherTableau]]] = {
    "EULER": _euler, "HEUN": _heun, "RK4": _rk4, "DOPRI5": _dopri5, "DOP853": _dop853}

if TYPE_CHECKING:  # Made by __getattr__ on first use (the views from the registry's table).
    EULER: ButcherTableau
    HEUN: ButcherTableau
    RK4: ButcherTableau
    DOPRI5: ButcherTableau
    DOP853: ButcherTableau
    METHODS: Mapping[str, ButcherTableau]
    FIXED_STEP: tuple[str, ...]
    ADAPTIVE: tuple[str, ...]

class _Tableaus(Mapping[str, ButcherTableau]):
    """The Runge–Kutta tableaus of the fixed and adaptive methods by name, in the registry's order, each made on first
    use (``METHODS`` here, ``TABLEAUS`` of robodyn.integrate.methods.registry)."""

    def __getitem__(self, name: str) -> ButcherTableau:
        made_by = ENTRIES[name][2] if name in ENTRIES else None
        if made_by is None:
            raise KeyError(name)
        tableau: ButcherTableau = __getattr__(made_by)
        return tableau

    def __iter__(self) -> Iterator[str]:
        return (name for name, entry in ENTRIES.items() if entry[2] is not None)

    def __len__(self) -> int:
        return sum(entry[2] is not None for entry in ENTRIES.values())


_METHODS: Final = _Tableaus()
_FAMILY_VIEWS: Final[Mapping[str, Family]] = {"FIXED_STEP": "fixed", "ADAPTIVE": "adaptive"}


def __getattr__(name: str) -> Any:
    """The tableaus, and ``METHODS``, ``FIXED_STEP`` and ``ADAPTIVE`` from :mod:`robodyn.integrate.methods.registry`,
    made
    on first use and kept."""
    if name in _MADE_BY:
        with _lock:  # two threads asking at once get one tableau
            value: Any = globals().get(name) or _MADE_BY[name]()
    elif name == "METHODS":
        value = _METHODS
    elif name in _FAMILY_VIEWS:
        value = names(_FAMILY_VIEWS[name])
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
