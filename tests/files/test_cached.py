"""The parsed-model cache (robodyn.files.cached): a warm load gives the same numbers without sympy."""

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn
from robodyn.files import cached
from robodyn.files.cached import DELEGATED, CachedModel, cached_model, load_cached, record_path
from robodyn.files.catalog import catalog_text
from robodyn.files.loading import model_text, read_model_text
from robodyn.files.records import model_record_key
from robodyn.model.system import Model

DATA = Path(__file__).resolve().parents[1] / "data"
CATALOG_FILES = ["joint", "joint_direct_drive", "pendulum", "double_pendulum", "cart_pole", "two_link_arm", "acrobot"]
MODELS = [*CATALOG_FILES, str(DATA / "puma560.yaml")]


@pytest.fixture(autouse=True)
def _fresh_process_table():
    """Each test starts like a new process: no models kept in memory (the records on disk stay)."""
    cached._models.clear()
    yield
    cached._models.clear()


def _warm(name: str) -> tuple[CachedModel, Model]:
    """A model built from its record (written first if missing) and the full model of the same text."""
    found = model_text(name)
    assert found is not None
    text, source = found
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cached_model(text, source)  # makes sure the record exists
        cached._models.clear()
        model = cached_model(text, source)
        full = read_model_text(text, source)
    assert isinstance(model, CachedModel) and model._source._full is None  # from the record, not parsed
    return model, full


def _point(model: Model, seed: int = 0) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = model.parameter_vector() * (1 + 0.1 * rng.random(len(model.parameters)))
    return 0.3, rng.normal(size=model.n_states) * 0.5, rng.normal(size=model.n_inputs), p


@pytest.mark.parametrize("name", MODELS)
def test_the_record_holds_the_full_models_numeric_facts(name):
    model, full = _warm(name)
    assert (model.name, model.kind, model.order) == (full.name, full.kind, full.order)
    assert (model.states, model.inputs, model.outputs) == (full.states, full.inputs, full.outputs)
    assert dict(model.parameters) == dict(full.parameters) and list(model.parameters) == list(full.parameters)
    assert dict(model.derived_parameters) == dict(full.derived_parameters)
    assert model.units() == full.units() and model.position_limits() == full.position_limits()
    assert model.jacobian_method == full.jacobian_method and model.outputs_are_states == full.outputs_are_states
    assert model.linear_by_construction() == full.linear_by_construction()
    assert model.kernel_rhs_source() == full.kernel_rhs_source()  # the same generated code
    assert model.kernel_jacobian_source() == full.kernel_jacobian_source()
    assert model.kernel_output_source() == full.kernel_output_source()
    table, own = model.symbol_table(), full.symbol_table()
    assert (table.x_symbols, table.u_symbols, table.p_symbols) == (own.x_symbols, own.u_symbols, own.p_symbols)
    assert table.t_symbol == own.t_symbol
    assert model._source._full is None  # all of it without parsing the file


@pytest.mark.parametrize("name", MODELS)
def test_f_h_and_the_jacobians_equal_the_full_models(name):
    model, full = _warm(name)
    for seed in range(3):
        point = _point(full, seed)
        np.testing.assert_allclose(model.f_raw(*point), full.f_raw(*point), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(model.h_raw(*point), full.h_raw(*point), rtol=1e-12, atol=1e-12)
        for mine, theirs in zip(model.jacobians_raw(*point), full.jacobians_raw(*point)):
            np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-10)
    assert model._source._full is None


@pytest.mark.parametrize("name", MODELS)
def test_simulation_results_are_bit_for_bit_the_full_models(name):
    model, full = _warm(name)
    x0 = np.full(model.n_states, 0.1)
    u = dict.fromkeys(model.inputs, 0.2)
    ours = robodyn.simulate(model, 0.5, x0, u, method="dopri5")
    theirs = robodyn.simulate(full, 0.5, x0, u, method="dopri5")
    assert np.array_equal(ours.t, theirs.t) and np.array_equal(ours.x, theirs.x)
    assert np.array_equal(ours.y, theirs.y) and np.array_equal(ours.u, theirs.u)
    default_ours = robodyn.simulate(model, 0.5, x0)  # the default method: exact for linear models
    default_theirs = robodyn.simulate(full, 0.5, x0)
    assert default_ours.stats.method == default_theirs.stats.method
    assert np.array_equal(default_ours.x, default_theirs.x)


def test_parameter_overrides_reach_the_generated_code_and_the_full_model():
    model, full = _warm("pendulum")
    heavy, heavy_full = model.with_parameters(m=2.0, l=0.5), full.with_parameters(m=2.0, l=0.5)
    assert dict(heavy.parameters) == dict(heavy_full.parameters)
    x = np.array([0.4, 0.0])
    ours = robodyn.simulate(heavy, 1.0, x, method="dopri5")
    theirs = robodyn.simulate(heavy_full, 1.0, x, method="dopri5")
    assert np.array_equal(ours.x, theirs.x)
    assert not np.array_equal(ours.x, robodyn.simulate(model, 1.0, x, method="dopri5").x)
    with pytest.raises(robodyn.InputError, match="derived"):  # I = m*l**2 follows m and l
        model.with_parameters(I=3.0)
    with pytest.raises(robodyn.InputError, match="positive definite"):  # the kind's own check of overrides
        model.with_parameters(m=-1.0)
    # what the record does not hold comes from the full model, with the overridden values
    assert heavy.energy(x) == heavy_full.energy(x)
    assert heavy.full_model().parameters == heavy.parameters


def test_what_the_record_does_not_hold_is_the_full_models():
    model, full = _warm("pendulum")
    assert model.show_text() == full.show_text()
    assert model.coordinates == full.coordinates  # a kind's own attribute
    trajectory = robodyn.simulate(model, 2.0, {"theta": 1.0}, events=["theta"], method="dopri5")
    expected = robodyn.simulate(full, 2.0, {"theta": 1.0}, events=["theta"], method="dopri5")
    assert [e.t for e in trajectory.events] == [e.t for e in expected.events]
    assert robodyn.classify(model).to_dict() == robodyn.classify(full).to_dict()
    with pytest.raises(AttributeError):
        model._not_there  # noqa: B018 - private names are never delegated


def test_every_contract_method_is_answered_by_the_record_or_delegated():
    own = set(vars(CachedModel))
    members = {name: value for owner in reversed(Model.__mro__[:-1]) for name, value in vars(owner).items()}
    for name, value in members.items():
        if name.startswith("_") or (not callable(value) and not isinstance(value, property)):
            continue
        inherited_on_purpose = {"state_vector", "input_vector", "parameter_vector", "with_parameters", "f", "h",
                                "arguments", "f_raw", "f_many", "h_raw", "h_many", "h_batch", "memo",
                                "default_parameters", "n_states", "n_inputs", "n_outputs"}
        assert name in own or name in inherited_on_purpose, f"Model.{name}: answer it from the record or delegate it"
    assert set(DELEGATED) <= own


def _record_file(name: str) -> Path:
    text, source = model_text(name)
    return record_path(model_record_key(text, source))


def test_a_damaged_or_edited_record_is_moved_aside_and_rebuilt():
    model, _ = _warm("cart_pole")
    path = _record_file("cart_pole")
    assert path.is_file()
    good = path.read_bytes()
    data = json.loads(good)
    data["record"]["sources"]["rhs"] = data["record"]["sources"]["rhs"].replace("out[0]", "out[1]")  # edited
    for damaged in (good[: len(good) // 2], b"\x00garbage", json.dumps(data).encode()):
        path.write_bytes(damaged)
        os.chmod(path, 0o600)
        cached._models.clear()
        rebuilt = cached_model(*model_text("cart_pole"))
        assert rebuilt._source._full is not None  # parsed again, not trusted
        assert rebuilt.kernel_rhs_source() == model.kernel_rhs_source()
        assert json.loads(path.read_bytes()) == json.loads(good)  # and written anew
        assert list(path.parent.glob(f"{path.name}.broken-*"))
    # a record with a valid digest but another robodyn version is not used either
    data = json.loads(good)
    data["record"]["robodyn"] = "0.0.0"
    data["sha256"] = cached._digest(data["record"])
    path.write_text(json.dumps(data))
    cached._models.clear()
    assert cached_model(*model_text("cart_pole"))._source._full is not None


def test_a_group_writable_record_is_not_trusted():
    _warm("joint")
    path = _record_file("joint")
    os.chmod(path, 0o666)
    cached._models.clear()
    assert cached_model(*model_text("joint"))._source._full is not None
    assert os.stat(path).st_mode & 0o022 == 0


def test_a_changed_model_file_gets_a_new_record(tmp_path):
    file = tmp_path / "spring.yaml"
    unique = f"# {tmp_path}\n"  # a text no earlier run has recorded
    file.write_text(f"{unique}kind: first_order\nstates: [x]\nparameters: {{k: 2.0}}\ndynamics: {{x: -k*x}}\n")
    first = load_cached(str(file))
    assert isinstance(first, CachedModel) and first.f(0.0, [1.0])[0] == -2.0
    file.write_text(f"{unique}kind: first_order\nstates: [x]\nparameters: {{k: 3.0}}\ndynamics: {{x: -k*x}}\n")
    cached._models.clear()
    second = load_cached(str(file))
    assert second.record_key != first.record_key and second.f(0.0, [1.0])[0] == -3.0  # a record of its own
    assert record_path(second.record_key).exists()
    cached._models.clear()
    again = load_cached(str(file))
    assert again._source._full is None and again.f(0.0, [1.0])[0] == -3.0
    assert again.name == "spring"
    stiffer = again.with_parameters(k=5.0)  # a first-order model has no checks of its own: no parsing
    assert stiffer.f(0.0, [1.0])[0] == -5.0 and stiffer._source._full is None


def test_models_that_are_not_files_load_as_usual():
    assert not isinstance(load_cached("mbk:n=2"), CachedModel)
    assert isinstance(load_cached("joint"), CachedModel)


def test_warnings_of_the_file_are_given_again_on_a_warm_load():
    text, source = model_text(str(DATA / "puma560.yaml"))
    with pytest.warns(robodyn.RobodynWarning, match="triangle inequality"):
        cached_model(text, source)
    cached._models.clear()
    with pytest.warns(robodyn.RobodynWarning, match="triangle inequality"):
        assert cached_model(text, source)._source._full is None


# --- a warm process: no model parsing, no sympy ---------------------------------------------------------------
_SCRIPT = textwrap.dedent("""
    import json, os, sys, traceback

    class Watch:  # notes which robodyn module imported sympy first; imports nothing itself
        first = None
        def find_spec(self, name, path=None, target=None):
            if name == "sympy" and Watch.first is None:
                frames = [f.filename for f in traceback.extract_stack() if os.sep + "robodyn" + os.sep in f.filename]
                Watch.first = frames[-1].split(os.sep + "robodyn" + os.sep)[-1] if frames else "?"
            return None

    sys.meta_path.insert(0, Watch())
    import robodyn.cli
    code = robodyn.cli.main(sys.argv[1:])
    heavy = ("sympy", "matplotlib", "rich", "pandas", "robodyn.files.yamlio", "robodyn.files.reader",
             "numba", "scipy")
    print(json.dumps({"code": code, "sympy from": Watch.first,
                      "at exit": sorted(m for m in heavy if m in sys.modules)}))
""")

def _run(tmp_path: Path, *args: str, own_cache: bool = True) -> dict:
    """``robodyn *args`` in a new process with its own, empty cache folder, or (``own_cache=False``) the session's
    cache, whose shared kernels the suite compiled once (robodyn.prepare): for checks that need a kernel compiled
    but not the compile itself."""
    env = {**os.environ, "ROBODYN_CACHE_DIR": str(tmp_path / "cache")} if own_cache else dict(os.environ)
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", _SCRIPT, *args], capture_output=True, text=True,
                          timeout=600, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return {**json.loads(done.stdout.splitlines()[-1]), "stdout": done.stdout}


@pytest.fixture(scope="module")
def warm_runs(tmp_path_factory):
    """``robodyn simulate`` twice in new processes (cold, then warm), for a catalog model and a model file.

    (With ``--param`` a kind that checks overrides — a mass matrix must stay positive definite — parses the
    file to check them: test_parameter_overrides_reach_the_generated_code_and_the_full_model.)
    """
    tmp_path = tmp_path_factory.mktemp("warm")
    file = tmp_path / "arm.yaml"
    file.write_text(catalog_text("double_pendulum"))
    runs = {}
    for model in ("pendulum", str(file)):
        outputs = [tmp_path / f"{Path(model).stem}-{k}.csv" for k in ("cold", "warm")]
        runs[model] = tuple(_run(tmp_path, "simulate", model, "--t-final", "1", "--out", str(out)) for out in outputs)
        assert outputs[0].read_bytes() == outputs[1].read_bytes()  # the same trajectory, bit for bit
    return runs


def test_a_warm_simulate_command_parses_no_model_and_model_loading_imports_no_sympy(warm_runs):
    for model, (cold, warm) in warm_runs.items():
        assert cold["code"] == warm["code"] == 0
        assert "robodyn.files.reader" in cold["at exit"]  # the first process parsed the file
        loaded = set(warm["at exit"])
        light = {"matplotlib", "rich", "pandas", "robodyn.files.yamlio", "robodyn.files.reader"}
        assert not light & loaded, model


def test_a_warm_simulate_command_imports_no_sympy_at_all(warm_runs):
    for _model, (_cold, warm) in warm_runs.items():
        assert warm["sympy from"] is None and "sympy" not in warm["at exit"]


def test_a_warm_simulate_command_runs_machine_code_without_numba(warm_runs):
    """The kernel's and the model's exported objects run through llvmlite (robodyn.codegen.objects): numba, and
    the scipy it imports, stay out of the warm processes. The first process compiled the kernel with numba; the
    model file's first process (a new model on a machine with the kernel) needed no numba either: LLVM compiled
    its straight-line right-hand side (robodyn.codegen.llvm.pyir)."""
    (first, _), (new_model, _) = warm_runs.values()
    assert "numba" in first["at exit"]
    assert not {"numba", "scipy"} & set(new_model["at exit"])
    for model, (_cold, warm) in warm_runs.items():
        assert not {"numba", "scipy"} & set(warm["at exit"]), model


def test_the_stiffness_hint_of_a_new_model_needs_no_numba(tmp_path):
    """The hint evaluates the Jacobian: for a symbolic model, the straight-line code LLVM compiled (robodyn.codegen
    .pyir) rather than numba's. The first process compiles the kernel; the second runs a stiff model never seen."""
    first = tmp_path / "first.yaml"
    first.write_text(catalog_text("pendulum"))
    stiff = tmp_path / "stiff.yaml"
    stiff.write_text("name: stiff_probe\nkind: first_order\nstates: [a, b]\nparameters: {c: 500.0}\n"
                     "dynamics:\n  a: b\n  b: -a - c*b\n")
    _run(tmp_path, "simulate", str(first), "--t-final", "1", "--out", str(tmp_path / "first.csv"), own_cache=False)
    run = _run(tmp_path, "simulate", str(stiff), "--t-final", "10", "--x0", "a=1", "--out", str(tmp_path / "s.csv"),
               own_cache=False)
    assert run["code"] == 0 and "hint: dopri5's step was limited by stability" in run["stdout"]
    assert "numba" not in run["at exit"]


def test_an_implicit_run_of_a_second_order_model_needs_no_numba_when_warm(tmp_path):
    """radau's exact Jacobian of a model of at most UNROLL_LIMIT coordinates is straight-line code on M's unrolled
    factor (robodyn.codegen.source): machine code from the cache, where the work-array solve was numba's in every
    process (it allocates)."""
    args = ("simulate", "double_pendulum", "--t-final", "2", "--x0", "theta1=1", "--method", "radau", "--out")
    runs = [_run(tmp_path, *args, str(tmp_path / f"{k}.csv"), own_cache=False) for k in range(2)]
    assert (tmp_path / "0.csv").read_bytes() == (tmp_path / "1.csv").read_bytes()
    assert "numba" not in runs[1]["at exit"]
