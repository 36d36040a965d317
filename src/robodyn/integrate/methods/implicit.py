"""The numbers of the compiled implicit methods: Radau IIA (order 5) and RODAS4, as the kernels read them.

:func:`tables` gives the ``implicit`` argument of the adaptive kernel (``integrate/kernels/implicit_template.py``).
The Radau IIA constants are derived here from the method's definition rather than typed in: the nodes
c = ((4 - sqrt 6)/10, (4 + sqrt 6)/10, 1), the collocation matrix A, the eigen-decomposition of A^-1
(one real eigenvalue gamma, one complex pair alpha ± i beta, and the real basis T of its eigenvectors), the
embedded order-3 error weights and the dense-output map. ``tests/integrate/methods/test_implicit.py`` checks them
against the values Hairer and Wanner publish (gamma = 3.6378..., E = (-13 - 7 sqrt 6, -13 + 7 sqrt 6, -1)/3).

RODAS4's coefficients are those of Hairer's RODAS ([HW] IV.7, Table 7.2 form with U-stages: ``(1/(gamma
h) - J) U_i = f(t + alpha_i h, x + sum a_ij U_j) + sum c_ij U_j / h + gamma_i h df/dt``; ``x_new = x + sum
m_i U_i``, error ``U_6``), checked in the tests by the order conditions of Rosenbrock methods up to order 4.

Tolerances are used as given, as scipy's Radau does, not transformed as RADAU5 does (0.1 rtol^(2/3)): the
transformation makes the values at the steps' ends about as accurate as asked while the steps grow, but the
dense output between them (the collocation polynomial, of order 3) then misses the tolerance by orders of
magnitude (measured: 1.4e-7 at rtol 1e-10 on a stiff decay); output at t_eval must be as good as asked.

[HW] E. Hairer, G. Wanner, "Solving Ordinary Differential Equations II", 2nd ed., Springer 1996, IV.7-IV.8.
"""

from __future__ import annotations

import functools
from typing import Final

import numpy as np

__all__ = ["IMPLICIT_METHOD", "RADAU_NODES", "radau_constants", "rodas4", "tables"]

RADAU_NODES: Final = np.array([(4.0 - np.sqrt(6.0)) / 10.0, (4.0 + np.sqrt(6.0)) / 10.0, 1.0])
NEWTON_ITERATIONS: Final = 7  # RADAU5's NIT
FIXED_NEWTON_ITERATIONS: Final = 40  # fixed steps (verify): Newton iterated to convergence
SAFETY: Final = 0.9
THET: Final = 0.001  # keep the Jacobian while Newton's contraction stays below this
QUOT1, QUOT2 = 1.0, 1.2  # keep the factorizations when h_new / h is within these

# RODAS4 ([HW] IV.7; Hairer's rodas.f, METH = 1): a_ij, c_ij (strictly lower), alpha_i, gamma_i, m_i, e_i.
_RODAS_A: Final = {(1, 0): 1.544, (2, 0): 0.9466785280815826, (2, 1): 0.2557011698983284,
                   (3, 0): 3.314825187068521, (3, 1): 2.896124015972201, (3, 2): 0.9986419139977817,
                   (4, 0): 1.221224509226641, (4, 1): 6.019134481288629, (4, 2): 12.53708332932087,
                   (4, 3): -0.6878860361058950}
_RODAS_C: Final = {(1, 0): -5.6688, (2, 0): -2.430093356833875, (2, 1): -0.2063599157091915,
                   (3, 0): -0.1073529058151375, (3, 1): -9.594562251023355, (3, 2): -20.47028614809616,
                   (4, 0): 7.496443313967647, (4, 1): -10.24680431464352, (4, 2): -33.99990352819905,
                   (4, 3): 11.70890893206160, (5, 0): 8.083246795921522, (5, 1): -7.981132988064893,
                   (5, 2): -31.52159432874371, (5, 3): 16.31930543123136, (5, 4): -6.058818238834054}
_RODAS_ALPHA: Final = (0.0, 0.386, 0.21, 0.63, 1.0, 1.0)
_RODAS_GAMMA_I: Final = (0.25, -0.1043, 0.1035, -0.0362, 0.0, 0.0)
RODAS_GAMMA: Final = 0.25


@functools.cache
def radau_constants() -> dict[str, np.ndarray | float]:
    """A, T, TI, gamma, alpha, beta, E (error weights of Z/h) and the dense map of the 3-stage Radau IIA."""
    c = RADAU_NODES
    powers = np.arange(3)
    A = (c[:, None] ** (powers + 1) / (powers + 1)) @ np.linalg.inv(c[:, None] ** powers)  # collocation
    inverse = np.linalg.inv(A)
    values, vectors = np.linalg.eig(inverse)
    real = int(np.argmin(np.abs(values.imag)))
    pair = int(np.argmin(values.imag))  # the eigenvalue with negative imaginary part: beta = -Im > 0
    T = np.column_stack([vectors[:, real].real, vectors[:, pair].real, vectors[:, pair].imag])
    gamma, alpha, beta = float(values[real].real), float(values[pair].real), float(-values[pair].imag)
    # embedded order-3 formula with weight 1/gamma at the step's start: b_hat from its order conditions
    b_hat = np.linalg.solve(c[None, :] ** powers[:, None], np.array([1.0 - 1.0 / gamma, 0.5, 1.0 / 3.0]))
    E = gamma * (b_hat - A[2]) @ inverse
    dense = np.linalg.inv(c[:, None] ** (powers + 1))  # coefficients of theta, theta^2, theta^3 from Z
    return {"A": A, "T": T, "TI": np.linalg.inv(T), "gamma": gamma, "alpha": alpha, "beta": beta, "E": E,
            "dense": dense}


@functools.cache
def rodas4() -> dict[str, np.ndarray]:
    """RODAS4's coefficient arrays: a (6, 6), c (6, 6), alpha, gamma_i, m, e (6,)."""
    a, cc = np.zeros((6, 6)), np.zeros((6, 6))
    for (i, j), value in _RODAS_A.items():
        a[i, j] = value
    for (i, j), value in _RODAS_C.items():
        cc[i, j] = value
    a[5, :5] = [*a[4, :4], 1.0]  # stiffly accurate: stage 6 starts from x_new - U_6 ...
    m = np.array([*a[4, :4], 1.0, 1.0])  # ... and x_new = x + sum a_5j U_j + U_5 + U_6
    e = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    return {"a": a, "c": cc, "alpha": np.array(_RODAS_ALPHA), "gamma_i": np.array(_RODAS_GAMMA_I), "m": m, "e": e}


@functools.cache
def _tables(method: str, fixed_h: float) -> tuple[np.ndarray, ...]:
    cfg = np.zeros(16)
    cfg[1], cfg[8] = fixed_h, SAFETY
    cfg[11], cfg[12], cfg[13] = THET, QUOT1, QUOT2
    empty = np.zeros((1, 1))
    if method == "radau":
        k = radau_constants()
        cfg[0] = 0.0
        cfg[2], cfg[3], cfg[4] = k["gamma"], k["alpha"], k["beta"]
        cfg[5], cfg[6] = RADAU_NODES[0], RADAU_NODES[1]
        cfg[7] = FIXED_NEWTON_ITERATIONS if fixed_h > 0 else NEWTON_ITERATIONS
        cfg[9], cfg[10] = 1.0 / 8.0, 5.0  # h_new / h within [1/5, 8] (RADAU5's FACL, FACR)
        arrays = (cfg, k["T"], k["TI"], k["dense"], np.asarray(k["E"]), empty, empty, np.zeros((4, 1)))
    elif method == "rosenbrock":
        r = rodas4()
        cfg[0], cfg[2] = 1.0, RODAS_GAMMA
        cfg[9], cfg[10] = 1.0 / 6.0, 5.0  # h_new / h within [1/5, 6] (RODAS's FAC1, FAC2)
        rv = np.vstack([r["m"], r["e"], r["alpha"], r["gamma_i"]])
        arrays = (cfg, np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3)), np.zeros(3), r["a"], r["c"], rv)
    else:
        raise KeyError(method)
    frozen = tuple(np.ascontiguousarray(a, dtype=float) for a in arrays)
    for array in frozen:
        array.setflags(write=False)
    return frozen


def tables(method: str, fixed_h: float = 0.0) -> tuple[np.ndarray, ...]:
    """The kernels' ``implicit`` tuple for ``"radau"`` or ``"rosenbrock"``; ``fixed_h > 0``: fixed steps."""
    return _tables(method, float(fixed_h))


def _placeholder_method() -> tuple[np.ndarray | int, ...]:
    """The adaptive kernel's ``method`` argument for the implicit methods: two rows of K (f at the step's ends),
    three dense-output rows (filled by the implicit step), error order 3 for Hairer's initial step."""
    arrays = (np.zeros((2, 2)), np.zeros(2), np.zeros(2), np.zeros(2), np.zeros((3, 2)))
    for array in arrays:
        array.setflags(write=False)
    return (*arrays, 3)


#: The adaptive kernel's ``method`` for Radau IIA and RODAS4 (their steps do not use a Butcher tableau).
IMPLICIT_METHOD: Final = _placeholder_method()
