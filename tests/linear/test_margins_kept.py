"""A loop's crossings kept in the private cache (robodyn.linear.margins on robodyn.codegen.kept): the second margins
of the same loop read them back bit for bit without computing, a changed loop computes again, a damaged entry is
moved aside and computed again, and ``ROBODYN_KEPT=0`` computes every time."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from robodyn import LinearSystem
from robodyn.codegen.cache import cache_dir
from robodyn.linear import margins as margins_module


def loop(k: float) -> LinearSystem:
    """L(s) = k / (s (s + 1) (s + 2)) with a random gain: a loop no other test has, so it is computed first here."""
    return LinearSystem([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, -2.0, -3.0]], [[0.0], [0.0], [1.0]], [[k, 0.0, 0.0]],
                        name="kept_loop")


@pytest.fixture()
def counted(monkeypatch):
    """How many times the crossings were computed."""
    calls = []
    original = margins_module._loop_crossings

    def counting(*args):
        calls.append(args)
        return original(*args)

    monkeypatch.setattr(margins_module, "_loop_crossings", counting)
    monkeypatch.delenv("ROBODYN_KEPT", raising=False)
    return calls


def _same(a, b) -> None:
    assert a.to_dict() == b.to_dict() and a.notes == b.notes
    for key in a.crossings:
        np.testing.assert_array_equal(a.crossings[key], b.crossings[key])
        assert a.crossings[key].tobytes() == b.crossings[key].tobytes()


def test_the_second_margins_of_a_loop_are_read_back_bit_for_bit(counted):
    k = float(np.random.default_rng().uniform(1.0, 2.0))
    first = loop(k).margins()
    second = loop(k).margins()
    assert len(counted) == 1  # the second read back
    _same(first, second)
    assert first.gain_margin == pytest.approx(6.0 / k, rel=1e-12)  # the closed form: |L(j sqrt 2)| = k / 6
    assert not second.crossings["gain_crossovers"].flags.writeable
    loop(k * (1.0 + 2.0**-40)).margins()  # one bit of C differs: another loop
    assert len(counted) == 2


def test_infinite_and_undefined_values_come_back_as_they_were(counted):
    k = float(np.random.default_rng().uniform(1.0, 2.0))
    joint = LinearSystem([[0.0, 1.0], [-100.0 * k, -10.0]], [[0.0], [1.0]], [[100.0 * k, 0.0]], name="kept_joint")
    first, second = joint.margins(), joint.margins()
    assert len(counted) == 1
    assert first.gain_margin == math.inf and math.isnan(second.phase_crossover)
    _same(first, second)


def test_a_damaged_entry_is_computed_again(counted):
    k = float(np.random.default_rng().uniform(1.0, 2.0))
    first = loop(k).margins()
    entries = sorted((cache_dir(numba_code=False) / "results").glob("*.json"), key=lambda p: p.stat().st_mtime)
    newest = entries[-1]
    data = json.loads(newest.read_text())
    data["value"]["gain_margins"] = [1e300]  # its SHA-256 no longer matches
    newest.write_text(json.dumps(data))
    second = loop(k).margins()
    assert len(counted) == 2
    _same(first, second)


def test_nothing_is_kept_with_robodyn_kept_0(counted, monkeypatch):
    monkeypatch.setenv("ROBODYN_KEPT", "0")
    k = float(np.random.default_rng().uniform(1.0, 2.0))
    _same(loop(k).margins(), loop(k).margins())
    assert len(counted) == 2
