"""Contact forces on the tape (robodyn.rigid.contact) against the law written in numpy from the frames' poses and
Jacobians (robodyn.kinematics): the generalized force M (f - f_free) equals sum Jv^T (f_n n + F_t), and the
outputs are the law's forces (1e-9 relative: the same arithmetic in another order)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import robodyn

BOX = Path(__file__).resolve().parents[2] / "examples" / "box_on_incline.yaml"


def test_the_generalized_contact_force_is_the_laws() -> None:
    model = robodyn.load(str(BOX))
    chain, par = model.chain, model.parameters
    frames = robodyn.Kinematics(chain)
    p = model.parameter_vector()
    theta = par["theta"]
    normal = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(20):
        x = np.concatenate([[0.02, 0.03, -theta], [0, 0, 0]]) + np.concatenate([rng.normal(scale=0.02, size=3),
                                                                                   rng.normal(size=3)])
        q = dict(zip(chain.coordinates, x[:3]))
        total = np.zeros(3)
        outputs = dict(zip(model.outputs, model.h_raw(0.0, x, np.zeros(0), p)))
        for corner in ("back", "front"):
            position = frames.pose(q, corner).position
            jv = frames.jacobian(q, corner)[:3]
            velocity = jv @ x[3:]
            depth = max(-(position @ normal), 0.0)
            force = max(0.0, depth**1.5 * (par["k"] + par["d"] * -(velocity @ normal)))
            tangential = velocity - (velocity @ normal) * normal
            friction = -par["mu"] * force * tangential / math.sqrt(tangential @ tangential + 1e-6)
            total += jv.T @ (force * normal + friction)
            assert abs(outputs[f"{corner}_normal_force"] - force) <= 1e-9 * max(1.0, force)
            np.testing.assert_allclose([outputs[f"{corner}_friction_{a}"] for a in "xyz"], friction,
                                       atol=1e-9 * max(1.0, force))
            checked += depth > 0
        mass = chain.mass_raw(0.0, x, np.zeros(0), p)
        free = chain.f_raw(0.0, x, np.zeros(0), p)
        generalized = mass @ (model.f_raw(0.0, x, np.zeros(0), p) - free)[3:]
        np.testing.assert_allclose(generalized, total, rtol=1e-9, atol=1e-9 * max(1.0, float(np.max(np.abs(total)))))
    assert checked >= 10  # the states press the corners in as well as lift them
