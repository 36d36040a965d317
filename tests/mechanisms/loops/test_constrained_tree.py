"""A linkage answers its tree's rigid-body members (robodyn.mechanisms.loops.tree): every coordinate, unconstrained.

References: the same chain file loaded without its loops (the unconstrained tree, built apart); Pinocchio's crba,
rnea, computeGeneralizedGravity, computeCoriolisMatrix, centre-of-mass and energy functions on the tree rebuilt as a
pinocchio.Model (tests/pinocchio_reference.chain_to_pinocchio) or read from the URDF; the energy of a simulated
four-bar, and the constraint forces it reports, along its motion.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sympy import sin as sympy_sin
from tests.pinocchio_reference import chain_to_pinocchio

import robodyn
import robodyn.model.expr
from robodyn.mechanisms.chain.system import ChainSystem
from robodyn.mechanisms.loops.tree import TREE_MEMBERS

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
LINKAGES = ["four_bar.yaml", "five_bar.yaml", "slider_crank.yaml"]
CLOSING_KEYS = ("loops", "constraints", "independent", "baumgarte")


def _open(name: str, tmp_path: Path) -> object:
    """The file's tree alone: its text without the keys that close it (top-level keys and their indented lines)."""
    kept, skipping = [], False
    for line in (EXAMPLES / name).read_text(encoding="utf-8").splitlines():
        if line and not line[0].isspace():
            skipping = line.split(":")[0] in CLOSING_KEYS
        if not skipping:
            kept.append(line)
    path = tmp_path / name
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return robodyn.load(str(path))


def _arguments(name: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Random arguments for a member (q, then q' and q'' where it takes them): any point, on the loops or not."""
    count = {"inverse_dynamics": 3, "bias": 2, "coriolis_matrix": 2, "kinetic_energy": 2}.get(name, 1)
    return tuple(rng.uniform(-2, 2, n) for _ in range(count))


@pytest.mark.parametrize("name", LINKAGES)
def test_every_tree_member_is_the_unconstrained_chains(name: str, tmp_path: Path) -> None:
    """Each member of TREE_MEMBERS equals the open tree's, at the defaults, at overridden parameters and on a copy
    made by with_parameters (whose own parameters it uses), to round-off (1e-13 of the largest entry: the same
    compiled arithmetic, two tapes)."""
    linkage, tree = robodyn.load(str(EXAMPLES / name)), _open(name, tmp_path)
    assert type(tree) is ChainSystem and tree.coordinates == linkage.coordinates
    heavier = {key: 2.5 * value for key, value in linkage.parameters.items() if key.startswith("m")}
    copy = linkage.with_parameters(heavier)
    rng = np.random.default_rng(len(name))
    for member in TREE_MEMBERS:
        arguments = _arguments(member, len(linkage.coordinates), rng)
        for ours, expected in [(getattr(linkage, member)(*arguments), getattr(tree, member)(*arguments)),
                               (getattr(linkage, member)(*arguments, heavier),
                                getattr(tree, member)(*arguments, params=heavier)),
                               (getattr(copy, member)(*arguments), getattr(tree, member)(*arguments, heavier))]:
            expected = np.asarray(expected)
            assert np.shape(ours) == expected.shape
            assert np.abs(ours - expected).max() <= 1e-13 * max(1.0, np.abs(expected).max()), member
    assert "every coordinate, without the constraints" in linkage.mass_matrix.__doc__


def test_the_four_bars_tree_equals_pinocchio() -> None:
    """The tree as a pinocchio.Model: M (crba), inverse dynamics (rnea), gravity, bias, C (computeCoriolisMatrix),
    dM/dq (central differences of crba), the links' centres of mass and the energies; the crank's spring
    k (q - rest) added by hand (Pinocchio has no joint springs). 1e-10 of the largest entry: the same products
    in another order; dM/dq 1e-7 (differences at h = 1e-5: truncation h^2 ~ 1e-10, round-off 1e-16 / h)."""
    pin = pytest.importorskip("pinocchio")
    linkage = robodyn.load(str(EXAMPLES / "four_bar.yaml"))
    reference, damping, order = chain_to_pinocchio(linkage.chain)
    data = reference.createData()
    assert not damping.any()
    k, rest = linkage.parameters["k_s"], linkage.parameters["crank_rest"]
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v, a = (rng.uniform(-2, 2, 3) for _ in range(3))
        qp, vp, ap = q[order], v[order], a[order]
        spring = np.zeros(3)
        spring[linkage.coordinates.index("crank")] = k * (q[0] - rest)

        def close(ours: np.ndarray, theirs: np.ndarray, tolerance: float = 1e-10) -> None:
            assert np.abs(ours - theirs).max() <= tolerance * max(1.0, np.abs(theirs).max())

        mass = pin.crba(reference, data, qp)
        mass = np.triu(mass) + np.triu(mass, 1).T
        close(linkage.mass_matrix(q)[np.ix_(order, order)], mass)
        close(linkage.inverse_dynamics(q, v, a)[order], pin.rnea(reference, data, qp, vp, ap) + spring[order])
        close(linkage.gravity(q)[order], pin.computeGeneralizedGravity(reference, data, qp) + spring[order])
        close(linkage.bias(q, v)[order], pin.rnea(reference, data, qp, vp, 0 * vp) + spring[order])
        close(linkage.coriolis_matrix(q, v)[np.ix_(order, order)], pin.computeCoriolisMatrix(reference, data, qp, vp))

        def crba(angles: np.ndarray) -> np.ndarray:
            matrix = pin.crba(reference, data, angles)
            return np.triu(matrix) + np.triu(matrix, 1).T

        h = 1e-5
        derivative = np.stack([(crba(qp + h * e) - crba(qp - h * e)) / (2 * h) for e in np.eye(3)], axis=-1)
        close(linkage.mass_derivative(q)[np.ix_(order, order, order)], derivative, 1e-7)
        pin.forwardKinematics(reference, data, qp)
        centres = np.array([data.oMi[i + 1].act(reference.inertias[i + 1].lever) for i in range(3)])
        close(linkage.com_positions(q)[order], centres)
        close(np.array(linkage.kinetic_energy(q, v)), np.array(pin.computeKineticEnergy(reference, data, qp, vp)))
        potential = pin.computePotentialEnergy(reference, data, qp) + 0.5 * k * (q[0] - rest) ** 2
        close(np.array(linkage.potential_energy(q)), np.array(potential))


def test_a_urdf_trees_members_equal_pinocchios_on_its_file() -> None:
    """The two-link arm with its tool held on a path (constraints from Python): its tree's members equal Pinocchio's
    model of the URDF itself (the joints in the same order, no springs)."""
    pin = pytest.importorskip("pinocchio")
    path = EXAMPLES / "two_link_arm.urdf"
    arm = robodyn.load(str(path))
    path_z = 0.3 + 0.1 * sympy_sin(robodyn.model.expr.TIME)
    held = robodyn.ConstrainedChain(arm, constraints=[{"frame": "tool", "axes": ("z",), "name": "hold",
                                                       "position": (0, 0, path_z)}])
    reference = pin.buildModelFromUrdf(str(path))
    data = reference.createData()
    q, v, a = (np.random.default_rng(s).uniform(-2, 2, 2) for s in range(3))
    mass = pin.crba(reference, data, q)
    np.testing.assert_allclose(held.mass_matrix(q), np.triu(mass) + np.triu(mass, 1).T, rtol=0, atol=1e-12)
    np.testing.assert_allclose(held.inverse_dynamics(q, v, a), pin.rnea(reference, data, q, v, a), rtol=0, atol=1e-11)
    np.testing.assert_allclose(held.gravity(q), pin.computeGeneralizedGravity(reference, data, q), rtol=0, atol=1e-11)
    assert held.kinetic_energy(q, v) == pytest.approx(pin.computeKineticEnergy(reference, data, q, v), rel=1e-12)


def test_the_energy_of_a_simulated_four_bar_from_the_tree_members_is_constant() -> None:
    """Unforced, from an assembled state: kinetic_energy + potential_energy (the crank's spring and gravity) stay
    constant to the integrator's tolerance (rtol 1e-10: measured 6e-11 of the energy over 5 s, checked at 1e-9), and
    the tree's inverse dynamics at the simulated accelerations is the loop's force, reported as outputs, through the
    frames' Jacobians: M q'' + bias = J_a^T f - J_b^T f with f the force on the loop's first frame."""
    linkage = robodyn.load(str(EXAMPLES / "four_bar.yaml"))
    x0 = robodyn.assemble(linkage, fix={"crank": 1.0, "crank_dot": 6.0})
    run = robodyn.simulate(linkage, 5.0, x0, rtol=1e-10, atol=1e-12, t_eval=np.linspace(0.0, 5.0, 251))
    n = len(linkage.coordinates)
    energy = np.array([linkage.kinetic_energy(x[:n], x[n:]) + linkage.potential_energy(x[:n]) for x in run.x])
    assert np.ptp(run.x[:, 0]) > 1.0  # the crank swings over a radian against its spring and gravity
    assert np.abs(energy - energy[0]).max() <= 1e-9 * np.abs(energy).max()
    frames = robodyn.Kinematics(linkage)
    force = run.y[:, [linkage.outputs.index("close_force_x"), linkage.outputs.index("close_force_y")]]
    for x, f in zip(run.x[::25], force[::25]):
        q, qd = x[:n], x[n:]
        qdd = linkage.f(0.0, x)[n:]
        loop = (frames.jacobian(q, "coupler_tip")[:2] - frames.jacobian(q, "rocker_tip")[:2]).T @ f
        torques = linkage.inverse_dynamics(q, qd, qdd)  # no input: the loop's force is all the joints feel
        # the same equations solved two ways (the loop's solve for q'' and lambda; RNEA here): round-off, 3e-15 seen
        assert np.abs(torques - loop).max() <= 1e-12 * max(1.0, np.abs(torques).max())
