"""Kept margins (robodyn.analysis.kept on robodyn.codegen.kept): a loop's margins read back equal python-control's to
the bit without importing it, follow the loop, and a damaged or edited entry is refused and computed again."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import control
import numpy as np
import pytest

from robodyn import LinearSystem
from robodyn.analysis import kept, lti
from robodyn.analysis.lti import margins
from robodyn.codegen.cache import cache_dir

LOOP = LinearSystem([[0.0, 1.0], [-2.0, -0.3]], [[0.0], [1.0]], [[3.0, 0.5]], name="probe_loop")


@pytest.fixture()
def counted(monkeypatch):
    """How many times python-control computed margins."""
    calls = []
    original = lti._loop_margins

    def counting(linear, i, j):
        calls.append((linear.name, i, j))
        return original(linear, i, j)

    monkeypatch.setattr(lti, "_loop_margins", counting)
    return calls


def _shifted(shift: float) -> LinearSystem:
    """LOOP with A shifted by a random amount: a loop no test computed before (a fresh entry)."""
    return LinearSystem(np.asarray(LOOP.A) - shift * np.eye(2), LOOP.B, LOOP.C, name="probe_loop")


def test_kept_margins_are_python_controls_to_the_bit_without_it(counted, monkeypatch):
    loop = _shifted(float(np.random.default_rng().uniform(0.1, 0.2)))
    first = margins(loop)
    assert len(counted) == 1
    monkeypatch.setattr(lti, "control_module", lambda: pytest.fail("python-control asked for a kept loop"))
    second = margins(loop)
    assert len(counted) == 1
    assert json.dumps(second.to_dict()) == json.dumps(first.to_dict())
    for key, values in first.crossings.items():
        assert np.array_equal(second.crossings[key], values, equal_nan=True)
    reference = control.stability_margins(control.ss(loop.A, loop.B, loop.C, loop.D))
    np.testing.assert_allclose(second.as_control(), reference, rtol=1e-12)  # python-control's own numbers (nan: none)


def test_infinite_and_undefined_values_come_back_as_they_were(counted):
    integrator = LinearSystem([[0.0]], [[1.0]], [[float(np.random.default_rng().uniform(1.0, 2.0))]])
    first = margins(integrator)  # phase never at -180 deg: an infinite gain margin, no phase crossover
    assert math.isinf(first.gain_margin) and math.isnan(first.phase_crossover)
    second = margins(integrator)
    assert len(counted) == 1 and json.dumps(second.to_dict()) == json.dumps(first.to_dict())
    assert kept._float(kept._plain(-math.inf)) == -math.inf and math.isnan(kept._float(kept._plain(math.nan)))


def test_the_key_follows_the_loop_its_names_and_pythons_control(counted, monkeypatch):
    loop = _shifted(float(np.random.default_rng().uniform(0.2, 0.3)))
    margins(loop)
    margins(LinearSystem(loop.A, loop.B, loop.C, states=["a", "b"], name="probe_loop"))  # other names
    margins(LinearSystem(loop.A, loop.B, np.asarray(loop.C) * (1 + 1e-15), name="probe_loop"))  # another C
    assert len(counted) == 3
    monkeypatch.setattr(kept, "_control_stamp", lambda: "another python-control")
    margins(loop)
    assert len(counted) == 4
    monkeypatch.setattr(kept, "_control_stamp", lambda: None)  # python-control not installed: nothing is read
    margins(loop)
    margins(loop)
    assert len(counted) == 6


def test_robodyn_kept_0_computes_the_margins_every_time(counted, monkeypatch):
    loop = _shifted(float(np.random.default_rng().uniform(0.4, 0.5)))
    margins(loop)
    monkeypatch.setenv("ROBODYN_KEPT", "0")
    margins(loop)
    margins(loop)
    assert len(counted) == 3


@pytest.mark.parametrize("edit", ["digest", "field"])
def test_a_damaged_or_edited_entry_is_moved_aside_and_computed_again(counted, edit):
    loop = _shifted(float(np.random.default_rng().uniform(0.3, 0.4)))
    before = set((cache_dir(numba_code=False) / "results").glob("*.json"))
    first = margins(loop)
    (path,) = set((cache_dir(numba_code=False) / "results").glob("*.json")) - before
    wrapper = json.loads(path.read_text(encoding="utf-8"))
    if edit == "digest":
        wrapper["value"]["found"][1][0] = 1.0  # an edited phase margin: the digest no longer matches
    else:  # rewritten with a valid digest: a field of the wrong type
        wrapper["value"]["notes"] = [1.0]
        wrapper["sha256"] = kept_digest(wrapper["value"])
    path.write_text(json.dumps(wrapper), encoding="utf-8")
    again = margins(loop)
    assert len(counted) == 2 and json.dumps(again.to_dict()) == json.dumps(first.to_dict())
    assert list(path.parent.glob(f"{path.name}.broken-*"))


def kept_digest(value):
    from robodyn.codegen.kept import _text
    from robodyn.digest import sha256

    return sha256(_text(value)).hexdigest()


def test_the_checks_refuse_what_is_not_kept_margins():
    good = {"found": [[1.0, "inf"], [], [], ["nan"], [], []], "notes": ["a note"]}
    assert kept._checked(good)
    for bad in ({**good, "found": good["found"][:5]}, {**good, "notes": "a note"}, {**good, "extra": 1},
                {**good, "found": [["1.0"], [], [], [], [], []]}, {**good, "found": [[True], [], [], [], [], []]}):
        assert not kept._checked(bad)


def test_importing_the_linear_systems_view_imports_no_scipy():
    code = "import sys, robodyn.analysis.lti, robodyn.analysis.modes; print('scipy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "ROBODYN_QUIET": "1"})
    assert done.stdout.strip() == "False"
