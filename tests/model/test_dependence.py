"""Dependence decided numerically (robodyn.model.kinds.symbolic_form.depends_on): an expression written with
sin(q)^2 + cos(q)^2 does not depend on q, and the verdicts of robodyn.classify say so.

The reference is the numbers themselves: M(q) of the three-dof arm evaluated (model.mass_matrix, compiled from the
robot's tape, not from these expressions) at several base yaws is the same matrix to rounding.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import sympy

import robodyn
from robodyn.model.kinds.symbolic_form import depends_on

EXAMPLES = Path(__file__).parents[2] / "examples"
q, x, y = sympy.symbols("q x y")


def test_an_identity_is_not_a_dependence() -> None:
    assert depends_on(sympy.sin(q) ** 2 + sympy.cos(q) ** 2, {q}) == set()
    assert depends_on(x * (sympy.sin(q) ** 2 + sympy.cos(q) ** 2), {q, x}) == {x}
    assert depends_on(sympy.Float(3.5), {q}) == set()


def test_a_small_true_dependence_is_found() -> None:
    # 1e10 (sin^2 + cos^2) - 1e10 cancels; 1e-8 q does not: the 40-digit evaluation sees it
    expr = sympy.Float(1e10) * (sympy.sin(q) ** 2 + sympy.cos(q) ** 2) - sympy.Float(1e10) + sympy.Float(1e-8) * q
    assert depends_on(expr, {q}) == {q}


def test_a_system_written_with_an_identity_is_linear() -> None:
    model = robodyn.SymbolicSystem(["x", "y"], None, ["-x*(sin(y)**2 + cos(y)**2)", "-y"], name="identity")
    verdict = robodyn.classify(model)
    assert verdict.linear and verdict.method == "symbolic"
    np.testing.assert_allclose(robodyn.linearize(model, [0.7, -1.3]).A, [[-1.0, 0.0], [0.0, -1.0]], atol=1e-15)


def test_the_arms_mass_matrix_does_not_depend_on_its_base_yaw() -> None:
    arm = robodyn.load(EXAMPLES / "three_dof_arm.urdf")
    reason = robodyn.classify(arm).reasons["linear"]
    assert "depends on elbow_pitch, shoulder_pitch" in reason and "base_yaw" not in reason.split("depends on")[1]
    posture = [0.4, -0.7]
    matrices = [arm.mass_matrix([yaw, *posture]) for yaw in (-2.0, 0.0, 0.3, 2.9)]
    for M in matrices[1:]:
        np.testing.assert_allclose(M, matrices[0], rtol=0.0, atol=1e-14 * np.abs(matrices[0]).max())
    assert len(reason) < 200  # the entry is described by its size, not printed in full
