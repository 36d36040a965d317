"""The exact path's plain-float steps (robodyn.linear.exact_steps) and a linear model's run image
(robodyn.integrate.paths.exact_image): the image repeats the full path's run to the bit, and a damaged, edited or
incomplete image never runs.

Tolerances. The plain steps and numpy's do the same arithmetic in another order (numpy's BLAS may fuse and reorder
the sums of a product), so on the joint's O(1) responses over 1,000 steps they agree to rounding accumulated over the
steps: 1e-13 (the closed forms themselves are checked to 1e-12 in test_exact.py). Between the image and the full
path there is no tolerance: the same functions run on the same numbers.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn.linear.exact as exact
from robodyn.cli import main
from robodyn.files.cached import load_cached
from robodyn.integrate.kernels import run_image
from robodyn.integrate.paths import exact_image
from robodyn.linear.exact import exact_response, exact_transitions, with_constant
from robodyn.linear.exact_steps import SharedExponentials, plain_sized, plain_steps
from robodyn.signals import Constant

A_JOINT = np.array([[0.0, 1.0], [-100.0, -10.0]])
B_JOINT = np.array([[0.0], [100.0]])


def _image(A, B, c, t_eval, t0, inputs=("u",)):
    """An exact image of x' = A x + B u + c over ``t_eval`` (the fields remember_exact writes)."""
    B_all, _ = with_constant(np.asarray(B, dtype=float), np.asarray(c, dtype=float), [None] * len(inputs))
    fields = exact_transitions(A, B_all, t_eval, t0)
    assert fields is not None
    n = np.asarray(A).shape[0]
    image = {"kind": "exact", "name": "probe", "states": [f"x{i}" for i in range(n)], "inputs": list(inputs),
             "constant": B_all.shape[1] > len(inputs), "columns": B_all.shape[1], "row_bytes": 8 * (2 * n + 1),
             **fields}
    assert exact_image.check(image) is None
    return image, B_all


def _full(A, B_all, x0, inputs, t_eval, t0, constant):
    channels = [Constant(v) for v in inputs] + ([Constant(1.0)] if constant else [])
    return exact_response(A, B_all, x0, t_eval, channels, t0=t0)


@settings(max_examples=40)
@given(n=st.integers(1, 4), m=st.integers(0, 2), seed=st.integers(0, 2**32 - 1), count=st.integers(2, 400),
       constant=st.booleans())
def test_an_image_repeats_the_full_paths_states_to_the_bit(n, m, seed, count, constant):
    rng = np.random.default_rng(seed)
    A = (rng.normal(size=(n, n)) - 3.0 * np.eye(n)) * 10.0 ** rng.uniform(-1, 2)  # decaying: no overflow
    B = rng.normal(size=(n, m))
    c = rng.normal(size=n) if constant else np.zeros(n)
    t0 = float(rng.uniform(-5, 5))
    t_eval = np.linspace(t0, t0 + float(rng.uniform(1e-3, 10)), count)
    image, B_all = _image(A, B, c, t_eval, t0, [f"u{j}" for j in range(m)])
    x0, inputs = rng.normal(size=n).tolist(), rng.normal(size=m).tolist()
    with np.errstate(all="ignore"):
        expected = _full(A, B_all, x0, inputs, t_eval, t0, image["constant"])
    states = exact_image.execute(image, x0, inputs, t0, t_eval.tolist())
    assert states is not None
    assert np.array_equal(np.array(states), expected, equal_nan=True)


def test_a_grid_that_needs_an_exponential_not_kept_is_left_to_the_full_path():
    t_eval = np.linspace(0.0, 3.0, 301)
    image, _ = _image(A_JOINT, B_JOINT, [0.0, 0.0], t_eval, 0.0)
    assert exact_image.execute(image, [1.0, 0.0], [0.0], 0.0, np.linspace(0.0, 3.0, 301).tolist()) is not None
    assert exact_image.execute(image, [1.0, 0.0], [0.0], 0.0, np.linspace(0.0, 3.0, 401).tolist()) is None
    # the same spacing from another start: its first step differs in the last bits, and the full path computes
    # the exponential of that very length
    assert exact_image.execute(image, [1.0, 0.0], [0.0], 0.5, np.linspace(0.5, 3.5, 301).tolist()) is None


def test_the_plain_steps_agree_with_numpys_to_rounding(monkeypatch):
    t = np.linspace(0.0, 5.0, 1001)
    channels = [Constant(1.0)]
    plain = exact_response(A_JOINT, B_JOINT, [1.0, -3.0], t, channels)
    monkeypatch.setattr(exact, "plain_sized", lambda n, size: False)  # numpy's products, as for large systems
    through_numpy = exact_response(A_JOINT, B_JOINT, [1.0, -3.0], t, channels)
    np.testing.assert_allclose(plain, through_numpy, rtol=0, atol=1e-13)


def test_a_shared_exponential_is_found_for_nearby_steps_and_computed_once():
    computed = []

    def compute(h):
        computed.append(h)
        return [[h]]

    shared = SharedExponentials(1e-3, compute)
    assert shared.lookup(0.1)[0] == 0.1
    assert shared.lookup(0.1 + 4e-4)[0] == 0.1 and shared.lookup(0.1 - 9e-4)[0] == 0.1
    assert shared.lookup(0.1 + 2e-3)[0] == pytest.approx(0.102)
    assert computed == [0.1, 0.1 + 2e-3]
    assert SharedExponentials(1e-3, lambda h: None).lookup(0.1) is None
    assert plain_steps([0.0, 0.1], [1.0], [[]], [[0.0]], SharedExponentials(1e-3, lambda h: None)) is None


@pytest.mark.parametrize("edit", ["entry shape", "non-finite", "generator size", "too large", "columns", "names",
                                  "quantum", "too many"])
def test_an_image_with_bad_fields_is_refused(edit):
    image, _ = _image(A_JOINT, B_JOINT, [0.0, 0.0], np.linspace(0.0, 1.0, 11), 0.0)
    if edit == "entry shape":
        image["entries"][0][1] = image["entries"][0][1][:-1]
    elif edit == "non-finite":
        image["entries"][0][1][0][0] = float("nan")
    elif edit == "generator size":
        image["generator"] = [row[:-1] for row in image["generator"]]
    elif edit == "too large":  # more states than the plain steps take: never the full path's own steps
        image["states"] = [f"x{i}" for i in range(40)]
    elif edit == "columns":
        image["columns"] = 2
    elif edit == "names":
        image["inputs"] = ["u;import os"]
    elif edit == "quantum":
        image["quantum"] = -1.0
    else:
        image["entries"] = image["entries"] * (exact_image.MAX_ENTRIES + 1)
    assert exact_image.check(image) is not None


def test_an_image_keeps_the_exponentials_of_several_grids_up_to_its_limit():
    first, _ = _image(A_JOINT, B_JOINT, [0.0, 0.0], np.linspace(0.0, 1.0, 11), 0.0)
    second, _ = _image(A_JOINT, B_JOINT, [0.0, 0.0], np.linspace(0.0, 2.0, 11), 0.0)
    both = exact_image.merged(second, first)
    assert [h for h, _ in both["entries"]] == [h for h, _ in first["entries"] + second["entries"]]
    other, _ = _image(2 * A_JOINT, B_JOINT, [0.0, 0.0], np.linspace(0.0, 1.0, 11), 0.0)
    assert exact_image.merged(other, first)["entries"] == other["entries"]  # another generator: its own only
    many = {**second, "entries": [[float(k), second["entries"][0][1]] for k in range(40)]}
    assert len(exact_image.merged(many, first)["entries"]) == exact_image.MAX_ENTRIES


def test_only_small_systems_step_in_plain_floats():
    assert plain_sized(2, 4) and not plain_sized(40, 40)
    big = np.diag(-np.arange(1.0, 41.0))
    assert exact_transitions(big, np.ones((40, 1)), np.linspace(0, 1, 11), 0.0) is None


# --- the image on disk -----------------------------------------------------------------------------------
@pytest.fixture()
def joint_image(monkeypatch, tmp_path, capsys):
    """The joint's exact image, made by a run of the full path."""
    monkeypatch.setenv("ROBODYN_QUICK", "0")
    assert main(["simulate", "joint", "--t-final", "1", "--out", str(tmp_path / "a.csv")]) == 0
    capsys.readouterr()
    key = load_cached("joint").record_key
    found = run_image.read_image(key, "")
    assert found is not None and found["kind"] == "exact"
    return key, found


def test_a_damaged_exact_image_is_moved_aside_and_made_again(joint_image, tmp_path, capsys):
    key, image = joint_image
    path = run_image._path(run_image.image_key(key, ""))
    wrapper = json.loads(path.read_text(encoding="utf-8"))
    wrapper["image"]["entries"][0][1][0][0] += 1e-3  # an edited exponential: the digest no longer matches
    path.write_text(json.dumps(wrapper), encoding="utf-8")
    assert run_image.read_image(key, "") is None
    assert not path.exists()  # moved aside
    assert main(["simulate", "joint", "--t-final", "1", "--out", str(tmp_path / "b.csv")]) == 0  # full: made again
    remade = run_image.read_image(key, "")
    assert remade is not None and remade["generator"] == image["generator"]
    assert remade["entries"] == [entry for entry in image["entries"] if entry[0] == 0.001]  # this grid's step


def test_an_exact_image_with_a_valid_digest_and_bad_fields_never_runs(joint_image):
    key, image = joint_image
    path = run_image._path(run_image.image_key(key, ""))
    edited = {**image, "generator": image["generator"][:-1]}  # rewritten whole, digest and all
    path.write_text(json.dumps({"sha256": run_image._digest(edited), "image": edited}), encoding="utf-8")
    assert run_image.read_image(key, "") is None
    assert not path.exists()
