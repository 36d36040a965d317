"""Stiff test problems (issue 16) and their reference solutions, shared by tests and benchmarks/bench_stiff.py.

Importable from the tests as ``import stiff_reference`` (tests/ is on sys.path) and from the benchmark,
which puts tests/ on its path. Each :class:`Problem` names its model file (tests/data/stiff/), span,
initial state, input, the benchmark's tolerances and the reference state at the final time:

- ``rober_1e5``: scipy Radau at rtol 3e-14 / atol 1e-24 (no published value found), ~1e-13 relative;
- ``rober_1e11``: published, IVP Test Set rober.f ``solut``, ~1e-14 relative;
- ``vdpol``: published, IVP Test Set vdpol.f ``solut``, ~1e-14 relative;
- ``stiff_joint``: robodyn's ``exact`` path (matrix exponentials), ~1e-12 relative to the closed form;
- ``pd_arm``: scipy Radau at rtol 1e-12 / atol 1e-14 with the exact Jacobian, ~1e-12 relative.

Compare a solver's final state with :func:`relative_error` (floored by the problem's ``floor``, the
benchmark's atol). tests/test_stiff_reference.py checks every reference independently.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parent / "data" / "stiff"

__all__ = ["DATA", "PD_ARM_REFERENCE", "PROBLEMS", "ROBER_1E5", "ROBER_1E11", "VDPOL_2", "Problem",
           "compute_pd_arm_reference", "joint_closed_form", "joint_input", "joint_reference", "load",
           "model_path", "problem", "relative_error"]


def relative_error(x: Any, x_ref: Any, atol_floor: Any) -> float:
    """max_i |x_i - x_ref_i| / (|x_ref_i| + floor_i): the worst component's error relative to the reference.

    ``atol_floor`` (a scalar or one value per component) keeps components that pass through or settle at
    zero (the joint's velocity, the arm's velocities) from dividing by ~0: there the error is measured
    against the floor instead, so use the absolute tolerance the solvers were given.
    """
    x = np.asarray(x, dtype=float)
    x_ref = np.asarray(x_ref, dtype=float)
    floor = np.broadcast_to(np.asarray(atol_floor, dtype=float), x_ref.shape)
    return float(np.max(np.abs(x - x_ref) / (np.abs(x_ref) + floor)))


# --- ROBER ------------------------------------------------------------------------------------------

# Published: Test Set for IVP Solvers (F. Mazzia, C. Magherini, Univ. of Bari; http://www.dm.uniba.it/~testset/),
# problem ROBER, src/problems/rober.f (revision 1.2, 2006/10/02), subroutine `solut`: the solution at
# t = 1e11, "computed using double precision RADAU on an Alphaserver DS20E ... uround = 1.01d-19,
# rtol = atol = h0 = 1.1d-18".
ROBER_1E11 = np.array([0.2083340149701255e-07, 0.8333360770334713e-13, 0.9999999791665050e+00])

# Not published (the test set gives t = 1e11 only; no published value at 1e5 was found). Computed here
# with scipy 1.x solve_ivp(method="Radau", rtol=3e-14, atol=1e-24, jac=exact): cross-checks, all from
# y0 = (1, 0, 0) with the exact Jacobian:
#   Radau rtol 1e-13 / atol 1e-22   agrees within 2e-14 relative in every component;
#   LSODA, BDF (scipy) and CVODES (CasADi 3.8) at rtol 1e-13 / atol 1e-22 agree within 1e-11 relative
#   (they are less accurate at the same rtol: the same runs to 1e11 miss the published ROBER_1E11 by
#   ~1e-11, while Radau at rtol 3e-14 reproduces it within 1e-13);
#   y1 + y2 + y3 = 1 - 7e-15.
ROBER_1E5 = np.array([0.01786592114209974, 7.274751468436488e-08, 0.9821340061103783])

# --- VDPOL ------------------------------------------------------------------------------------------

# Published: Test Set for IVP Solvers, problem VDPOL, src/problems/vdpol.f, subroutine `solut`: y at t = 2,
# "computed using double precision RADAU on an Alphaserver DS20E ... rtol = atol = h0 = 1.1d-18".
# (The same numbers are in Hairer's and in other solvers' test drivers: 0.1706167732170483e1,
# -0.8928097010247975e0.)
VDPOL_2 = np.array([0.1706167732170483e+01, -0.8928097010247975e+00])

# --- stiff joint ------------------------------------------------------------------------------------

JOINT = {"J": 0.01, "b": 10.0, "k": 1.0e6}
JOINT_TAU0, JOINT_TAU1, JOINT_HZ = 1.0e4, 5.0e3, 0.5  # tau(t) = TAU0 + TAU1 sin(2 pi HZ t), N m


def joint_input() -> Any:
    """The joint's torque: a constant 1e4 N m plus a slow 5e3 N m sine at 0.5 Hz (a robodyn Sine signal)."""
    from robodyn.signals import Sine

    return Sine(amplitude=JOINT_TAU1, frequency=JOINT_HZ, offset=JOINT_TAU0)


def joint_closed_form(t: Any) -> np.ndarray:
    """Closed-form solution of J q'' + b q' + k q = tau(t) from rest, ``(T, 2)`` (q, q'): the check of the
    exact path's reference (tests/test_stiff_reference.py)."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    J, b, k = JOINT["J"], JOINT["b"], JOINT["k"]
    w = 2 * math.pi * JOINT_HZ
    # particular solution q_p = TAU0/k + C sin(w t) + D cos(w t)
    C, D = np.linalg.solve([[k - J * w**2, -b * w], [b * w, k - J * w**2]], [JOINT_TAU1, 0.0])
    qp = JOINT_TAU0 / k + C * np.sin(w * t) + D * np.cos(w * t)
    qpd = C * w * np.cos(w * t) - D * w * np.sin(w * t)
    # homogeneous part e^{-s t} (a cos(wd t) + c sin(wd t)) making q(0) = q'(0) = 0
    wn = math.sqrt(k / J)
    zeta = b / (2 * math.sqrt(k * J))
    s, wd = zeta * wn, wn * math.sqrt(1 - zeta**2)
    a = -(JOINT_TAU0 / k + D)
    c = (-(C * w) + s * a) / wd
    decay = np.exp(-s * t)
    cos, sin = np.cos(wd * t), np.sin(wd * t)
    q = qp + decay * (a * cos + c * sin)
    qd = qpd + decay * (-s * (a * cos + c * sin) + wd * (-a * sin + c * cos))
    return np.stack([q, qd], axis=1)


@functools.cache
def joint_reference() -> np.ndarray:
    """The joint's state at t = 10 from robodyn's ``exact`` path (Van Loan matrix exponentials).

    Output every 0.01 s: the exponential of one 10 s step (|A h| ~ 1e5) is ~1e-13 less accurate in q' than
    1,000 short steps; with these it matches :func:`joint_closed_form` within ~1e-12 relative.
    """
    import robodyn

    result = robodyn.simulate(load("stiff_joint"), (0.0, 10.0), [0.0, 0.0], joint_input(), method="exact",
                              t_eval=np.linspace(0.0, 10.0, 1001))
    state = np.array(result.x[-1], dtype=float)
    state.flags.writeable = False
    return state


# --- PD arm -----------------------------------------------------------------------------------------

# scipy solve_ivp(method="Radau", rtol=1e-12, atol=1e-14, jac=model.jacobians_raw(...)[0]) on the model
# file's f_raw, t in [0, 3] from rest at (0, 0) (6,360 steps, ~3 s): see compute_pd_arm_reference().
# Cross-checks: Radau at rtol 1e-10 / atol 1e-12 agrees within 5e-13 relative (tests/test_stiff_reference.py
# repeats it); CVODES (CasADi, BDF) on the hand-written equations of benchmarks/bench_stiff.py: see there.
PD_ARM_REFERENCE = np.array([0.7160745446824062, -1.3118917886239025, 0.5761371614759013, 0.7680635902713426])


def compute_pd_arm_reference(rtol: float = 1e-12, atol: float = 1e-14) -> np.ndarray:
    """Recompute :data:`PD_ARM_REFERENCE` (scipy Radau with the model's exact Jacobian; ~3 s at rtol 1e-12)."""
    from scipy.integrate import solve_ivp

    spec = PROBLEMS["pd_arm"]
    model = load("pd_arm")
    _, p = model.default_parameters()
    u = np.zeros(0)
    run = solve_ivp(lambda t, x: model.f_raw(t, x, u, p), spec.t_span, spec.x0, method="Radau",
                    jac=lambda t, x: model.jacobians_raw(t, x, u, p)[0], rtol=rtol, atol=atol)
    if run.status != 0:
        raise RuntimeError(run.message)
    return np.asarray(run.y[:, -1])


# --- the table --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One stiff problem: model file, span, initial state, input and reference state at ``t_span[1]``.

    ``rtol`` and ``atol`` are the benchmark's tolerances (the same for every solver); ``floor`` is
    :func:`relative_error`'s floor (the atol). ``reference`` is a callable so that the joint's exact
    run happens only when asked for.
    """

    name: str
    model: str  # file stem in tests/data/stiff/
    t_span: tuple[float, float]
    x0: tuple[float, ...]
    reference_fn: Any = field(repr=False)
    rtol: float = 1e-8
    atol: float | tuple[float, ...] = 1e-10
    source: str = ""
    has_input: bool = False

    @property
    def path(self) -> Path:
        return model_path(self.model)

    @property
    def reference(self) -> np.ndarray:
        return np.asarray(self.reference_fn(), dtype=float)

    @property
    def floor(self) -> np.ndarray:
        return np.broadcast_to(np.asarray(self.atol, dtype=float), (len(self.x0),))

    def u(self) -> Any:
        """The input to pass to ``robodyn.simulate`` (None: the model has none)."""
        return joint_input() if self.has_input else None


# Tolerances (the benchmark's, one set per problem for every solver):
# - ROBER: rtol 1e-8 and a per-component atol with y2's 1e-6 times the others', the ratio of SUNDIALS'
#   cvRoberts_dns example (atol 1e-8, 1e-14, 1e-6 at rtol 1e-4), scaled down so that every component is
#   still controlled relatively at t = 1e11 (y1 ~ 2e-8, y2 ~ 8e-14 there): (1e-14, 1e-20, 1e-14).
# - VDPOL: rtol = atol = 1e-8, the IVP Test Set's convention (rtol = atol = h0 in its reports).
# - stiff joint and PD arm: rtol 1e-8, atol 1e-10 (benchmarks/bench_simulate.py's joint settings).
PROBLEMS: dict[str, Problem] = {
    "rober_1e5": Problem("ROBER to t = 1e5", "rober", (0.0, 1e5), (1.0, 0.0, 0.0), lambda: ROBER_1E5,
                         rtol=1e-8, atol=(1e-14, 1e-20, 1e-14),
                         source="scipy Radau rtol 3e-14 (cross-checked; no published value)"),
    "rober_1e11": Problem("ROBER to t = 1e11", "rober", (0.0, 1e11), (1.0, 0.0, 0.0), lambda: ROBER_1E11,
                          rtol=1e-8, atol=(1e-14, 1e-20, 1e-14), source="IVP Test Set rober.f solut"),
    "vdpol": Problem("VDPOL (eps = 1e-6) to t = 2", "vdpol", (0.0, 2.0), (2.0, 0.0), lambda: VDPOL_2,
                     rtol=1e-8, atol=1e-8, source="IVP Test Set vdpol.f solut"),
    "stiff_joint": Problem("stiff joint (k = 1e6) to t = 10", "stiff_joint", (0.0, 10.0), (0.0, 0.0),
                           joint_reference, rtol=1e-8, atol=1e-10, has_input=True,
                           source="robodyn exact path"),
    "pd_arm": Problem("PD arm (two links, stiff PD) to t = 3", "pd_arm", (0.0, 3.0), (0.0, 0.0, 0.0, 0.0),
                      lambda: PD_ARM_REFERENCE, rtol=1e-8, atol=1e-10,
                      source="scipy Radau rtol 1e-12 / atol 1e-14"),
}


def problem(key: str) -> Problem:
    """The problem called ``key`` (one of :data:`PROBLEMS`)."""
    return PROBLEMS[key]


def model_path(name: str) -> Path:
    """tests/data/stiff/<name>.yaml (``rober``, ``vdpol``, ``stiff_joint``, ``pd_arm``)."""
    return DATA / f"{name}.yaml"


def load(name: str) -> Any:
    """``robodyn.load`` of tests/data/stiff/<name>.yaml."""
    import robodyn

    return robodyn.load(str(model_path(name)))
