"""Deriving and linearizing an n-link planar chain: straight-line Newton–Euler vs sympy.physics.mechanics.

The chain: n revolute joints about z, unit lengths, unit point masses at the link tips, gravity along -y.
Timed: building the model plus the first evaluation of the state matrix A at a general point (so the
derivation, code generation and compilation are all included; importing the libraries is not).
sympy.physics.mechanics (LagrangesMethod + Linearizer with the point substituted before the solve) runs for
n = 5 only; it takes seconds (expanded closed forms swell with the number of links).

Run: .venv/bin/python benchmarks/bench_derive.py
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg  # noqa: F401 - imported before timing, like sympy (robodyn imports it on first use)

from robodyn.mechanisms.chain.system import ChainSystem, Joint, Link

GOALS = {5: 0.35, 10: 10.0}  # seconds, build + first A


def robodyn_chain(n: int) -> ChainSystem:
    joints = [Joint(f"q{i}", "base" if i == 0 else f"link{i - 1}", f"link{i}", xyz=(0 if i == 0 else 1, 0, 0))
              for i in range(n)]
    links = [Link("base")] + [Link(f"link{i}", 1.0, (1.0, 0.0, 0.0)) for i in range(n)]
    return ChainSystem(joints, links, gravity=(0.0, -9.81, 0.0), name=f"chain{n}")


def point(n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    return rng.uniform(-1.0, 1.0, 2 * n)


def time_robodyn(n: int) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    model = robodyn_chain(n)
    A = model.jacobians(0.0, point(n))[0]
    return time.perf_counter() - start, A


def time_mechanics(n: int) -> tuple[float, np.ndarray]:
    import sympy
    from sympy.physics import mechanics as me

    start = time.perf_counter()
    q = me.dynamicsymbols(f"q0:{n}")
    qd = me.dynamicsymbols(f"q0:{n}", 1)
    frame = me.ReferenceFrame("N")
    origin = me.Point("O")
    origin.set_vel(frame, 0)
    particles, loads = [], []
    previous, angle = origin, sympy.Integer(0)
    for i in range(n):
        angle = angle + q[i]
        tip = previous.locatenew(f"P{i}", sympy.cos(angle) * frame.x + sympy.sin(angle) * frame.y)
        tip.set_vel(frame, tip.pos_from(origin).dt(frame))
        particles.append(me.Particle(f"m{i}", tip, 1))
        loads.append((tip, -9.81 * frame.y))
        previous = tip
    lagrangian = me.Lagrangian(frame, *particles)
    method = me.LagrangesMethod(lagrangian, q, forcelist=loads, frame=frame)
    method.form_lagranges_equations()
    x = point(n)
    op = {**dict(zip(q, x[:n])), **dict(zip(qd, x[n:]))}
    # the Linearizer needs q'' at the point too: the forward dynamics, solved numerically
    mass = np.array(me.msubs(method.mass_matrix, op).evalf(), dtype=float)
    forcing = np.array(me.msubs(method.forcing, op).evalf(), dtype=float).reshape(-1)
    op.update(zip((v.diff(me.dynamicsymbols._t) for v in qd), np.linalg.solve(mass, forcing)))
    A = method.linearize(q_ind=q, qd_ind=qd, op_point=op, A_and_B=True)[0]
    A = np.array(A.evalf(), dtype=float)
    return time.perf_counter() - start, A


def main() -> None:
    print(f"{'n':>3} {'robodyn [s]':>12} {'goal [s]':>9} {'mechanics [s]':>14} {'ratio':>7} {'max |dA|':>10}")
    for n in (5, 10):
        t_rd, A_rd = time_robodyn(n)
        if n == 5:
            t_me, A_me = time_mechanics(n)
            order = np.r_[np.arange(n), n + np.arange(n)]
            diff = float(np.max(np.abs(A_rd - A_me[np.ix_(order, order)])))
            print(f"{n:>3} {t_rd:>12.3f} {GOALS[n]:>9.2f} {t_me:>14.3f} {t_me / t_rd:>7.1f} {diff:>10.1e}")
        else:
            print(f"{n:>3} {t_rd:>12.3f} {GOALS[n]:>9.2f} {'-':>14} {'-':>7} {'-':>10}")


if __name__ == "__main__":
    main()
