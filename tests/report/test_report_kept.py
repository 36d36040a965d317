"""A report's kept sections (robodyn.report.kept on robodyn.codegen.kept): the second report of the same file reads
its points' sections back — the same page sections and JSON — and a change of the model's parameters, robodyn's code,
a library or a damaged entry computes them again; ``robodyn demo`` repeats itself from them."""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest

import robodyn
from robodyn.cli import main
from robodyn.codegen import kept as kept_module
from robodyn.codegen.cache import cache_dir
from robodyn.display.page import strict_json
from robodyn.files.loading import model_text
from robodyn.files.records import model_record_key
from robodyn.report import kept
from robodyn.report.analyze import analyze

analyze_module = importlib.import_module("robodyn.report.analyze")  # robodyn.report.analyze is also the function

PROBE = """name: kept_probe
kind: first_order
states: [x, v]
parameters: {k: 2.0, c: 0.3, a: {a}}
dynamics:
  x: v
  v: -k*sin(x) - c*v + a
"""


@pytest.fixture()
def probe(tmp_path):
    """A first-order file no other test has (a random constant): its sections are computed first here."""
    path = tmp_path / "probe.yaml"
    path.write_text(PROBE.replace("{a}", repr(float(np.random.default_rng().uniform(0.01, 0.1)))), encoding="utf-8")
    return path


@pytest.fixture()
def counted(monkeypatch):
    """How many points' sections were computed."""
    calls = []
    original = analyze_module.point_section

    def counting(*args, **kwargs):
        calls.append(args[2])
        return original(*args, **kwargs)

    monkeypatch.setattr(analyze_module, "point_section", counting)
    return calls


def _key(path, model):
    return kept.model_key(model_record_key(*model_text(str(path))), model.parameters)


def _sections(report):
    """The report's page and JSON without the time it was made."""
    data = {k: v for k, v in report.data.items() if k != "generated"}
    return report.html, strict_json(data)


def test_a_second_report_of_the_same_file_reads_its_points_back(probe, counted):
    model = robodyn.load(str(probe))
    first = analyze(model, key=_key(probe, model))
    computed = len(counted)
    assert computed >= 1
    second = analyze(model, key=_key(probe, model))
    assert len(counted) == computed  # nothing computed again
    assert _sections(second) == _sections(first)
    fresh = analyze(model)  # no key: computed, the same numbers (the figures' SVG ids aside)
    assert json.loads(_sections(fresh)[1]) == json.loads(_sections(first)[1])
    assert len(counted) == 2 * computed


def test_other_parameters_code_or_libraries_compute_the_sections_again(probe, counted, monkeypatch):
    model = robodyn.load(str(probe))
    analyze(model, key=_key(probe, model))
    computed = len(counted)
    stiffer = model.with_parameters(k=3.0)
    analyze(stiffer, key=_key(probe, stiffer))
    assert len(counted) == 2 * computed
    monkeypatch.setattr(kept_module, "code_fingerprint", lambda: "another robodyn")
    analyze(model, key=_key(probe, model))
    assert len(counted) == 3 * computed
    monkeypatch.setattr(kept_module, "library_stamp", lambda *names: "another matplotlib")
    analyze(model, key=_key(probe, model))
    assert len(counted) == 4 * computed
    monkeypatch.setenv("ROBODYN_KEPT", "0")  # nothing read or kept
    analyze(model, key=_key(probe, model))
    assert len(counted) == 5 * computed


def test_an_edited_model_file_computes_the_sections_again(probe, counted):
    model = robodyn.load(str(probe))
    analyze(model, key=_key(probe, model))
    computed = len(counted)
    probe.write_text(probe.read_text(encoding="utf-8").replace("c: 0.3", "c: 0.4"), encoding="utf-8")
    edited = robodyn.load(str(probe))
    report = analyze(edited, key=_key(probe, edited))
    assert len(counted) == 2 * computed and report.data["parameters"]["c"] == 0.4


def test_a_damaged_or_edited_section_is_moved_aside_and_computed_again(probe, counted):
    model = robodyn.load(str(probe))
    folder = cache_dir(numba_code=False) / "report"
    before = set(folder.glob("*.json")) if folder.exists() else set()
    first = analyze(model, key=_key(probe, model))
    entries = sorted(set(folder.glob("*.json")) - before)
    assert entries
    for path in entries:
        wrapper = json.loads(path.read_text(encoding="utf-8"))
        wrapper["value"][0] += "<script>alert(1)</script>"
        path.write_text(json.dumps(wrapper), encoding="utf-8")  # the digest no longer matches
    computed = len(counted)
    again = analyze(model, key=_key(probe, model))
    assert len(counted) > computed and "<script>" not in again.html
    assert json.loads(_sections(again)[1]) == json.loads(_sections(first)[1])
    assert all(list(path.parent.glob(f"{path.name}.broken-*")) for path in entries)


def test_a_warm_demo_repeats_the_reports_and_the_verification_from_what_it_kept(capsys, tmp_path, monkeypatch):
    assert main(["demo", "--out", str(tmp_path / "a")]) == 0
    first = capsys.readouterr().out.replace(str(tmp_path / "a"), "OUT")
    monkeypatch.setattr(analyze_module, "point_section", lambda *a, **k: pytest.fail("a point computed again"))
    monkeypatch.setattr("robodyn.analysis.verify.verify", lambda *a, **k: pytest.fail("verified again"))
    assert main(["demo", "--out", str(tmp_path / "b")]) == 0
    second = capsys.readouterr().out.replace(str(tmp_path / "b"), "OUT")
    assert second == first
    for name in ("pendulum", "joint"):
        ours, theirs = (json.loads((tmp_path / side / name / "report.json").read_text()) for side in "ab")
        assert {k: v for k, v in ours.items() if k != "generated"} == {
            k: v for k, v in theirs.items() if k != "generated"}
    assert (tmp_path / "a" / "verify_joint.png").read_bytes() == (tmp_path / "b" / "verify_joint.png").read_bytes()
