"""Run images (robodyn.integrate.kernels.run_image): made after a plain run of a cached model, they repeat it to the
bit, and
a damaged, edited or out-of-bounds image never runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.files.cached import load_cached
from robodyn.integrate.kernels import run_image
from robodyn.integrate.kernels.entry_arguments import leaves


def _full_run(out: Path) -> None:
    """``robodyn simulate pendulum`` on the full path in a new process, twice if need be: a process that compiled the
    pendulum's functions itself (a new cache: MCJIT in this process) writes no image, the next one, which loads them
    from the cache, does (robodyn.integrate.kernels.run_image.remember). In this process the pendulum may have been
    compiled by an earlier test of the same worker, so the runs are never made here."""
    key = load_cached("pendulum").record_key
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", "import sys; from robodyn.cli.main import main; "
                               "sys.exit(main(sys.argv[1:]))", "simulate", "pendulum", "--t-final", "1", "--out",
                               str(out)], env={**os.environ, "ROBODYN_QUICK": "0"}, capture_output=True, text=True,
                              timeout=900, check=False)
        assert done.returncode == 0, done.stderr
        if run_image.read_image(key, "") is not None:
            return


@pytest.fixture()
def image(tmp_path):
    """The pendulum's image for the default method, made by a run of the full path."""
    _full_run(tmp_path / "a.csv")
    found = run_image.read_image(load_cached("pendulum").record_key, "")
    assert found is not None
    return found


def _descriptor(image, name):
    """Where the array argument ``name``'s four ints start in the image's int block."""
    k = 0
    for path, kind in leaves(image["variant"]):
        if path == name:
            return k
        k += 0 if kind == "f" else 1 if kind == "i" else 4
    raise KeyError(name)


def test_an_image_repeats_the_full_paths_run_to_the_bit(image):
    model = load_cached("pendulum")
    for span, x0, rtol, t_eval in (((0.0, 10.0), [1.0, 0.0], 1e-8, []), ((-1.0, 2.0), [0.3, -1.0], 1e-6, []),
                                   ((0.0, 3.0), [2.0, 0.5], 1e-10, np.linspace(0.0, 3.0, 31).tolist())):
        run = run_image.execute(image, x0, span, rtol, 1e-9, t_eval)
        expected = robodyn.simulate(model, span, x0, rtol=rtol, atol=1e-9, t_eval=t_eval or None)
        assert run is not None and run.status >= 0
        assert run.t == expected.t.tolist() and run.x == expected.x.tolist()
        assert (run.steps, run.rejected, run.nfev) == (expected.stats.steps, expected.stats.rejected,
                                                        expected.stats.nfev)


@pytest.mark.parametrize("edit", ["outside", "address", "dimension", "misaligned", "first"])
def test_an_int_block_with_a_place_outside_its_block_never_runs(image, edit):
    ints = [list(form) for form in image["ints"]]
    k = _descriptor(image, "x0s")
    if edit == "outside":  # x0 written past the end of the data block
        ints[k] = [-(8 * 10**6 + 1), 0, 0]
    elif edit == "address":  # an absolute address
        ints[k] = [4096, 0, 0]
    elif edit == "dimension":  # the output rows' array made larger than its place
        k = _descriptor(image, "out_xs")
        ints[k + 2] = [10**6, 0, 0]
    elif edit == "misaligned":
        ints[k][0] -= 4
    else:  # a run over trajectories that are not there
        ints[0] = [5, 0, 0]
    edited = {**image, "ints": ints}
    assert run_image.execute(edited, [1.0, 0.0], (0.0, 1.0), 1e-6, 1e-9, []) is None


def test_a_damaged_image_is_moved_aside_and_made_again(image, tmp_path, capsys, monkeypatch):
    key = load_cached("pendulum").record_key
    path = run_image._path(run_image.image_key(key, ""))
    wrapper = json.loads(path.read_text(encoding="utf-8"))
    wrapper["image"]["parameters"][0] *= 2  # an edited value: the digest no longer matches
    path.write_text(json.dumps(wrapper), encoding="utf-8")
    assert run_image.read_image(key, "") is None
    assert not path.exists()  # moved aside
    _full_run(tmp_path / "b.csv")  # the full path: made again
    again = run_image.read_image(key, "")
    assert again is not None and _without_addresses(again) == _without_addresses(image)


def _without_addresses(image):
    """The image without the table of function addresses (``fns``: where this process's loader put them; the
    image names their origins in ``functions``, which are compared)."""
    return {**image, "constants": [c for k, c in enumerate(image["constants"]) if k != image["fns"]]}


def test_an_image_of_another_method_or_model_is_not_found(image):
    key = load_cached("pendulum").record_key
    assert run_image.read_image(key, "dop853-never-run") is None
    assert run_image.read_image("0" * 64, "") is None


def test_layouts_that_are_not_linear_in_the_sizes_make_no_image():
    samples = [*run_image._SAMPLES, run_image._CHECK]
    linear = {(r, e): [3 + 2 * r + 5 * e, 7] for r, e in samples}
    assert run_image._linear_forms(linear) == [[3, 2, 5], [7, 0, 0]]
    quadratic = {(r, e): [r * r] for r, e in samples}
    assert run_image._linear_forms(quadratic) is None


def test_the_fingerprint_follows_every_source_it_names(tmp_path, monkeypatch):
    for name in run_image.FINGERPRINT_FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run_image._ROOT / name, tmp_path / name)
    monkeypatch.setattr(run_image, "_ROOT", tmp_path)
    before = run_image.fingerprint()
    for name in run_image.FINGERPRINT_FILES:
        original = (tmp_path / name).read_bytes()
        (tmp_path / name).write_bytes(original + b"\n")
        assert run_image.fingerprint() != before, name
        (tmp_path / name).write_bytes(original)
    assert run_image.fingerprint() == before
