"""The exact derivative of a linear MPC's first input with respect to the measured state, at a solved plan.

At a solution of min 1/2 z' P z + q' z subject to E z = b, lo <= G z <= hi whose active inequalities A are strictly
complementary, the solution is locally affine in the data, and so in the measured state x_0, on which q, b, lo and hi
depend affinely (:mod:`~robodyn.control.mpc.formulation`). Differentiating the KKT conditions with A fixed (Fiacco,
*Introduction to Sensitivity and Stability Analysis in Nonlinear Programming*, 1983, thm. 3.2.2; for MPC: Bemporad,
Morari, Dua & Pistikopoulos, "The explicit linear quadratic regulator for constrained systems", Automatica 38(1),
2002, where u_0(x) is the affine law of the region x lies in):

    [ P   E'  G_A' ] [ dz ]   [ -dq  ]
    [ E   0   0    ] [ dy ] = [  db  ]      (one column per component of x_0)
    [ G_A 0   0    ] [ dw ]   [ db_A ]

and du_0/dx_0 is read from dz through the form's plan. The columns dq, db, db_A are the affine maps' own matrices,
read by evaluating them at the unit vectors (exact: the maps are affine). Without inequalities (or none active) this
is the unconstrained MPC's gain, the LQR's when Qf is the Riccati solution.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from robodyn.control.mpc.formulation import Formulation
from robodyn.control.mpc.solvers import Answer

__all__ = ["ACTIVE_RTOL", "first_input_gain"]

Array = NDArray[np.float64]

#: An inequality is active when its multiplier exceeds this fraction of the largest (1, |multipliers|).
ACTIVE_RTOL: Final = 1e-9


def first_input_gain(form: Formulation, answer: Answer, r: Array, v: Array, n: int, references: bool = False
                     ) -> Array:
    """du_0/dx_0 (m, n) at ``answer`` (the plan of the deviations' references ``r`` (N + 1, n), ``v`` (N, m)), its
    active set fixed; with ``references``, du_0/d(x_0, x_ref) (m, 2 n) for a state reference x_ref held over the
    horizon."""
    zero = np.zeros(n)
    base = form.vectors(zero, r, v)
    units = [form.vectors(column, r, v) for column in np.eye(n)]
    plans = list(np.eye(n))
    if references:
        units += [form.vectors(zero, r + column, v) for column in np.eye(n)]
        plans += [zero] * n
    columns = len(units)
    dq, db, dlo, dhi = (np.column_stack([unit[k] - base[k] for unit in units]) if base[k].size
                        else np.zeros((0, columns)) for k in range(4))
    qp = form.qp
    P, E, G = (sp.csc_matrix(a).toarray() for a in (qp.P, qp.E, qp.G))
    y = np.asarray(answer.y_in, dtype=float)
    active = np.abs(y) > ACTIVE_RTOL * max(1.0, float(np.max(np.abs(y), initial=0.0)))
    upper = y > 0.0  # the solvers' sign convention (OSQP's): y > 0 at an upper limit, y < 0 at a lower one
    rows = np.flatnonzero(active)
    GA = G[rows]
    dbA = np.where(upper[rows, None], dhi[rows], dlo[rows])
    nz, ne, na = P.shape[0], E.shape[0], rows.size
    K = np.zeros((nz + ne + na, nz + ne + na))
    K[:nz, :nz] = P
    K[:nz, nz:nz + ne], K[nz:nz + ne, :nz] = E.T, E
    K[:nz, nz + ne:], K[nz + ne:, :nz] = GA.T, GA
    rhs = np.vstack([-dq, db, dbA])
    solution = np.linalg.lstsq(K, rhs, rcond=None)[0]  # a degenerate active set (dependent rows) is consistent
    dz = solution[:nz]
    _, u_base = form.plan(zero, np.zeros(nz))
    return np.column_stack([form.plan(x0, dz[:, i])[1][0] - u_base[0] for i, x0 in enumerate(plans)])
