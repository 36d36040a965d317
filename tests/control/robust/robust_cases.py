"""The plants robust synthesis is checked on: Skogestad & Postlethwaite's SISO mixed-sensitivity example (2.11) and
their 2 x 2 plant with a right half-plane zero (example 3.8, python-control's robust_mimo.py), a generalized plant
of the two-link arm (torque disturbances, position sensors with noise), and random plants with every D block."""

from __future__ import annotations

import numpy as np
from tests.linear.linear_cases import arm

from robodyn import LinearSystem

M, WB, A_LOW = 1.5, 10.0, 1e-4  # Skogestad & Postlethwaite's performance weight: peak of S, bandwidth, low gain


def as_linear(sys: object, name: str = "G") -> LinearSystem:
    """A python-control system (any LTI) as a LinearSystem."""
    import control

    ss = control.ss(sys)
    return LinearSystem(ss.A, ss.B, ss.C, ss.D, name=name)


def weight(wb: float, m: float = M, a: float = A_LOW) -> object:
    """(s / m + wb) / (s + wb a) as a python-control transfer function."""
    import control

    s = control.tf("s")
    return (s / m + wb) / (s + wb * a)


def siso_plant() -> object:
    """200 / ((10 s + 1)(0.05 s + 1)^2) (Skogestad & Postlethwaite, example 2.11)."""
    import control

    s = control.tf("s")
    return 200 / ((10 * s + 1) * (0.05 * s + 1) ** 2)


def mimo_plant() -> object:
    """[[1, 1], [2 s + 1, 2]] / (0.2 s^2 + 1.2 s + 1): a zero at s = 0.5 (Skogestad & Postlethwaite, example 3.8)."""
    import control

    den = [0.2, 1.2, 1]
    return control.tf([[[1], [1]], [[2, 1], [2]]], [[den, den], [den, den]])


def arm_plant(rho: float = 0.1, sigma: float = 0.01) -> LinearSystem:
    """The arm hanging at rest (undamped) as a generalized plant: w = [torque disturbances d, sensor noise n],
    u = the torques, z = [x, rho u], y = the two angles + sigma n."""
    linear = arm()
    A, B = linear.A, linear.B
    C1 = np.vstack([np.eye(4), np.zeros((2, 4))])
    D12 = np.vstack([np.zeros((4, 2)), rho * np.eye(2)])
    D21 = np.hstack([np.zeros((2, 2)), sigma * np.eye(2)])
    return LinearSystem(A, np.hstack([B, np.zeros((4, 2)), B]), np.vstack([C1, np.eye(4)[:2]]),
                        np.block([[np.zeros((6, 4)), D12], [D21, np.zeros((2, 2))]]),
                        inputs=["d1", "d2", "n1", "n2", "tau1", "tau2"],
                        outputs=["z1", "z2", "z3", "z4", "z5", "z6", "m1", "m2"], name="arm_plant")


def random_plant(seed: int, *, d11: bool, d22: bool, sizes: tuple[int, ...] = (4, 3, 2, 3, 2)) -> LinearSystem:
    """A random generalized plant: n states, m1 disturbances, m2 controls, p1 performance outputs, p2 measurements;
    A shifted stable (so any controller starts from a stabilizable, detectable plant)."""
    n, m1, m2, p1, p2 = sizes
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    A -= (max(np.linalg.eigvals(A).real) + 0.5) * np.eye(n)
    B = rng.normal(size=(n, m1 + m2))
    C = rng.normal(size=(p1 + p2, n))
    D = rng.normal(size=(p1 + p2, m1 + m2))
    if not d11:
        D[:p1, :m1] = 0.0
    if not d22:
        D[p1:, m1:] = 0.0
    return LinearSystem(A, B, C, D, name="random_plant")


def frequency_response(sys: LinearSystem, w: np.ndarray) -> np.ndarray:
    """G(j w), (len(w), p, m)."""
    n = sys.A.shape[0]
    return np.array([sys.C @ np.linalg.solve(1j * x * np.eye(n) - sys.A, sys.B) + sys.D for x in w])
