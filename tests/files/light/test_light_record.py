"""The record of a plain first-order file made without sympy (robodyn.files.light.record).

The reference is the sympy reader: every field of the light record equals the one :func:`cached._record` takes from
the full model, and the generated functions give the full model's f, h and exact Jacobians to rounding (the light
code evaluates the expressions as written, sympy's code its canonical form: a few roundings apart, hence a relative
tolerance of 1e-12 on values of order one at points away from kinks). Whatever the sympy reader refuses, the light
reader leaves to it (None), and a new plain file reaches its first run without importing sympy.
"""

import ast
import math
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.cli_run import one_line, run

import robodyn
from robodyn.base.errors import InputError, RobodynError
from robodyn.files import cached
from robodyn.files.cached import CachedModel, _Source
from robodyn.files.light.record import light_record
from robodyn.files.loading import read_model_text

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

EVERY_FUNCTION = """\
name: every_function
kind: first_order
description: one of each function, constant and operator of the grammar
states: [a, b, c]
inputs: [v, w]
parameters: {k: 2.5, m: 3, r: "0.75", z: 1e-3, q: -1.5}
units: {a: rad, v: " N m ", k: 1/s}
dynamics:
  a: sin(a)*cos(b) + tan(c/3) - asin(c/4) + acos(a/5) - atan(b) + atan2(a, b + 2)
  b: sinh(a/2) - cosh(b/3) + tanh(c) + exp(-a*a) + log(1 + b*b) + sqrt(2 + c) - abs(a - 1)*sign(b - 0.2)
  c: min(a, b, 2*pi) - max(c, e/3) + k*v**2 - m*w**-2 + r**0.5*t + (a + b)**3/(1 + c**2) - z*q - -k + +3
outputs:
  y1: a + v
  y2: k*b*w - c/m
"""

CASES = {
    "every function": EVERY_FUNCTION,
    "numbers as dynamics": "kind: first_order\nstates: [x, y]\ndynamics: {x: 0, y: 1.5}\n",
    "no parameters, a default name": "kind: first_order\nstates: [x]\ndynamics: {x: -2*x + t}\n",
    "empty outputs are the states": "kind: first_order\nstates: [x]\noutputs: {}\ndynamics: {x: -x}\n",
    "constants folded": "kind: first_order\nstates: [x]\ndynamics: {x: 2*pi*x/(3 + 4) - e**2*t + 10**-3}\n",
    **{path.stem: path.read_text(encoding="utf-8") for path in sorted(EXAMPLES.glob("*.yaml"))
       if "kind: first_order" in path.read_text(encoding="utf-8")},
}


def _full_record(text: str, source: str) -> dict:
    full, caught = cached._parse(text, source)
    record = cached._record(full, "key", caught)
    assert record is not None
    return record


def _light(text: str, source: str = "case.yaml") -> CachedModel | None:
    fields = light_record(text, source)
    if fields is None:
        return None
    return CachedModel({**cached._header("key"), **fields}, _Source(text, source, None))


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_field_is_the_sympy_readers_and_the_functions_agree(name):
    text = CASES[name]
    fields = light_record(text, f"{name.replace(' ', '_')}.yaml")
    assert fields is not None, "a plain first-order file is read without sympy"
    full = _full_record(text, f"{name.replace(' ', '_')}.yaml")
    assert {k: v for k, v in fields.items() if k != "sources"} == {
        k: v for k, v in full.items() if k not in ("sources", "format", "robodyn", "key")}
    assert set(fields) == set(full) - {"format", "robodyn", "key"}
    light = CachedModel({**cached._header("key"), **fields}, _Source(text, "case.yaml", None))
    reference = read_model_text(text, "case.yaml")
    rng = np.random.default_rng(7)
    p = light.parameter_vector()
    for _ in range(5):
        t = float(rng.uniform(0.1, 1.0))
        x = rng.uniform(0.1, 0.9, light.n_states)
        u = rng.uniform(0.1, 0.9, light.n_inputs)
        np.testing.assert_allclose(light.f_raw(t, x, u, p), reference.f_raw(t, x, u, p), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(light.h_raw(t, x, u, p), reference.h_raw(t, x, u, p), rtol=1e-12, atol=1e-13)
        for ours, theirs in zip(light.jacobians_raw(t, x, u, p), reference.jacobians_raw(t, x, u, p), strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=1e-11, atol=1e-12)


def test_the_sources_are_straight_line_code_in_the_written_order():
    fields = light_record("kind: first_order\nstates: [theta, omega]\nparameters: {g: 9.81, l: 1.0, c: 0.1}\n"
                          "dynamics: {theta: omega, omega: -g/l*sin(theta) - c*omega}\n", "probe.yaml")
    assert fields is not None
    rhs = fields["sources"]["rhs"]
    assert "out[1] = -_p0 / _p1 * math.sin(_x0) - _p2 * _x1" in rhs  # as written, not sympy's order
    for source in fields["sources"].values():
        tree = ast.parse(source)
        assert len(tree.body) == 1 and isinstance(tree.body[0], ast.FunctionDef)
        assert all(isinstance(s, ast.Assign | ast.Return) for s in tree.body[0].body)


def test_a_sign_at_zero_and_min_at_a_tie_as_the_sympy_code():
    text = "kind: first_order\nstates: [x, y]\ndynamics:\n  x: sign(x) + abs(y)\n  y: min(x, y, 1)\n"
    light, reference = _light(text), read_model_text(text, "case.yaml")
    assert light is not None
    for x in ([0.0, -2.0], [-0.0, 3.0], [2.0, 2.0], [5.0, 1.0]):
        point = (0.0, np.array(x), np.zeros(0), np.zeros(0))
        np.testing.assert_array_equal(light.f_raw(*point), reference.f_raw(*point))


# --- what is left to the sympy reader ------------------------------------------------------------------------
HEADER = "kind: first_order\nstates: [x, y]\ninputs: [u]\nparameters: {k: 2.0}\n"
LEFT = {
    "a derived parameter": "kind: first_order\nstates: [x]\nparameters: {k: 2.0, K: k**2}\ndynamics: {x: -K*x}\n",
    "a constant expression parameter": "kind: first_order\nstates: [x]\nparameters: {k: 2*pi}\ndynamics: {x: -k*x}\n",
    "another kind": "kind: discrete\nstates: [x]\nsample: 0.1\nupdate: {x: x/2}\n",
    "an unknown key": HEADER + "dynamics: {x: y, y: u}\nfoo: 1\n",
    "a missing state's dynamics": HEADER + "dynamics: {x: y}\n",
    "dynamics of a non-state": HEADER + "dynamics: {x: y, y: u, z: 1}\n",
    "a reserved name": "kind: first_order\nstates: [pi]\ndynamics: {pi: 1}\n",
    "a name used twice": "kind: first_order\nstates: [x]\ninputs: [x]\ndynamics: {x: 1}\n",
    "an empty name": HEADER.replace("kind", "name:\nkind") + "dynamics: {x: y, y: u}\n",
    "outputs as a list": HEADER + "outputs: []\ndynamics: {x: y, y: u}\n",
    "units of an unknown name": HEADER + "units: {z: m}\ndynamics: {x: y, y: u}\n",
    "a bool": HEADER + "dynamics: {x: true, y: u}\n",
    "a parameter that is not finite": "kind: first_order\nstates: [x]\nparameters: {k: .inf}\ndynamics: {x: k}\n",
    "invalid YAML": HEADER + "dynamics: {x: y, y: [u\n",
}
EXPRESSIONS = [
    "x/(x - x)", "1/0", "u/(k - 2)", "atan2(x - x, 0*y)", "acos(2)", "log(0)", "sqrt(-1)", "10**400", "10**-400",
    "x**20000", "(-8)**(1/3)", "exp(1000)", "1e308*10", "z + 1", "x.real", "x[0]", "x if y else u", "x < y",
    "sin(x, y)", "min(x)", "foo(x)", "sin", "x ^ 2", "x // 2", "x % 2", "'x'", "x +", "", "   ",
    "2x", "1if x", "lambda: 0", "(" * 250 + "x" + ")" * 250, "-" * 150 + "x", "+".join(["x"] * 200),
    "sin(x=1)", "9**9**9", "0**-1",
]


@pytest.mark.parametrize("name", sorted(LEFT))
def test_what_the_light_reader_does_not_know_goes_to_the_sympy_reader(name):
    assert light_record(LEFT[name], "case.yaml") is None


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_an_expression_the_sympy_reader_refuses_or_must_judge_is_left_to_it(expression):
    text = HEADER + f"dynamics: {{x: y, y: {expression!r}}}\n"
    assert light_record(text, "case.yaml") is None


@pytest.mark.parametrize("name, text", [*LEFT.items(), *(
    (e, HEADER + f"dynamics: {{x: y, y: {e!r}}}\n") for e in EXPRESSIONS)])
def test_a_file_the_sympy_reader_refuses_gets_its_error_through_the_cache(name, text, tmp_path):
    """The cache asks the light reader first: the error of a bad file is still the sympy reader's."""
    path = tmp_path / "case.yaml"
    path.write_text(f"# {tmp_path}\n{text}", encoding="utf-8")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = read_model_text(path.read_text(encoding="utf-8"), str(path))
    except InputError as exc:
        with pytest.raises(type(exc)) as raised:
            cached.load_cached(str(path))
        assert str(raised.value) == str(exc)
    else:
        assert cached.load_cached(str(path)).states == expected.states


# --- random expressions: the light reader accepts only what sympy accepts, and computes the same --------------
_LEAVES = st.sampled_from(["x", "y", "u", "k", "t", "pi", "e", "2", "0.5", "3", "1e-3", "0"])
_UNARY = ["sin", "cos", "tan", "atan", "sinh", "cosh", "tanh", "exp", "log", "sqrt", "abs", "sign", "asin", "acos"]


def _expressions() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**"]), inner).map(lambda a: "({} {} {})".format(*a)),
            st.tuples(st.sampled_from(_UNARY), inner).map(lambda a: f"{a[0]}({a[1]})"),
            st.tuples(st.sampled_from(["atan2", "min", "max"]), inner, inner).map(lambda a: "{}({}, {})".format(*a)),
            inner.map(lambda a: f"-{a}"),
        )

    return st.recursive(_LEAVES, extend, max_leaves=6)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(expression=_expressions())
def test_random_expressions_agree_with_the_sympy_reader(expression):
    text = HEADER + f"dynamics: {{x: y, y: {expression!r}}}\noutputs: {{w: {expression!r}}}\n"
    light = _light(text)
    if light is None:
        return  # the sympy reader reads it (or refuses it)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = read_model_text(text, "case.yaml")  # never raises: what the light reader takes, sympy takes
    _agree(light, reference, [(0.37, [0.41, 0.67], [0.53])])


# --- the cache: a new plain file runs without sympy ----------------------------------------------------------
def test_a_new_plain_file_is_simulated_without_importing_sympy(tmp_path):
    model = tmp_path / "fresh.yaml"
    model.write_text(f"# {tmp_path}\nname: fresh\nkind: first_order\nstates: [theta, omega]\n"
                     "parameters: {g: 9.81, l: 1.0}\ndynamics: {theta: omega, omega: -g/l*sin(theta)}\n")
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        from robodyn.integrate.simulate import simulate
        from robodyn.files.cached import load_cached
        model = load_cached({str(model)!r})
        run = simulate(model, (0.0, 2.0), {{"theta": 1.0}}, rtol=1e-10, atol=1e-12)
        print("sympy" in sys.modules, repr(float(run.final[0])), repr(float(run.final[1])))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    imported, theta, omega = done.stdout.split()
    assert imported == "False"
    import robodyn

    reference = robodyn.simulate(robodyn.load(str(model)), (0.0, 2.0), {"theta": 1.0}, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose([float(theta), float(omega)], reference.final, rtol=1e-8)  # two runs at rtol 1e-10


def test_a_damaged_light_record_is_made_again_from_the_file(tmp_path):
    path = tmp_path / "decay.yaml"
    path.write_text(f"# {tmp_path}\nkind: first_order\nstates: [x]\nparameters: {{k: 2.0}}\ndynamics: {{x: -k*x}}\n")
    cached._models.clear()
    first = cached.load_cached(str(path))
    assert isinstance(first, CachedModel)
    record = cached.record_path(first.record_key)
    edited = record.read_text().replace("-_p0 * _x0", "-_p0 * _x0 * 1000")
    assert "* 1000" in edited
    record.write_text(edited)  # its digest no longer matches
    cached._models.clear()
    again = cached.load_cached(str(path))
    assert again.f(0.0, [1.0])[0] == -2.0 and again._source._full is None  # made again, not trusted, no sympy
    assert cached._read(record, first.record_key) is not None  # and kept valid
    cached._models.clear()


# --- one file, one meaning: every path gives the sympy model's numbers ---------------------------------------
def _alike(ours: float, theirs: float) -> bool:
    """Equal to 1e-12 relative (what the readers promise), or both non-finite alike."""
    if not (math.isfinite(ours) and math.isfinite(theirs)):
        return ours == theirs or (math.isnan(ours) and math.isnan(theirs))
    return abs(ours - theirs) <= 1e-12 * max(abs(ours), abs(theirs))


def _agree(model, reference, points) -> None:
    """f, h and the Jacobians of ``model`` are the sympy model's at each ``(t, x, u)`` of ``points``."""
    p = reference.parameter_vector()
    for t, x, u in points:
        x, u = np.asarray(x, dtype=float), np.asarray(u, dtype=float)
        with np.errstate(all="ignore"):
            pairs = [(model.f_raw(t, x, u, p), reference.f_raw(t, x, u, p)),
                     (model.h_raw(t, x, u, p), reference.h_raw(t, x, u, p)),
                     *zip(model.jacobians_raw(t, x, u, p), reference.jacobians_raw(t, x, u, p), strict=True)]
        for ours, theirs in pairs:
            assert np.shape(ours) == np.shape(theirs)
            bad = [(a, b) for a, b in zip(np.ravel(ours), np.ravel(theirs), strict=True) if not _alike(a, b)]
            assert not bad, (t, x.tolist(), u.tolist(), bad)


#: The files of issue 45 (item 3) that two readers read two ways
ONE_FILE = {
    "numbers summed first": "dynamics: {x: 1e16 + x - 1e16}\n",  # x' = 0 from the light record, x' = x from sympy
    "a constant at a pole": "dynamics: {x: tan(pi/2)*x}\n",  # ran from the light record, refused by sympy
    "numbers of a sum combined": "dynamics: {x: 1/(x - 0.3 - 1e-13)}\n",  # 2.4e-4 apart at x = 0.3
    "an order that overflows": "parameters: {k: 1e308}\ndynamics: {x: -k*x*10}\n",  # -inf and -1e307 at x = 0.01
}
ONE_FILE_POINTS = [(0.0, [x], []) for x in (0.3, 0.30000000000000004, 0.01, 0.7, 1.9, -2.5)]


def _one_file(name: str, tmp_path: Path) -> Path:
    path = tmp_path / "one.yaml"
    path.write_text(f"# {tmp_path}\nname: one\nkind: first_order\nstates: [x]\n{ONE_FILE[name]}", encoding="utf-8")
    return path


@pytest.mark.parametrize("name", sorted(ONE_FILE))
def test_one_file_gives_the_same_numbers_through_every_path(name, tmp_path):
    """The light record (or its refusal), the record the sympy reader makes, the cache's model as the command line
    loads it (first load, then from its record) and ``robodyn.load``: the same f, h and Jacobians to 1e-12, at the
    singular-ish x = 0.3 too, or the same error."""
    path = _one_file(name, tmp_path)
    text = path.read_text(encoding="utf-8")
    cached._models.clear()
    try:
        reference = robodyn.load(str(path))
    except InputError as exc:
        assert light_record(text, str(path)) is None
        with pytest.raises(type(exc), match=re.escape(str(exc))):
            cached.load_cached(str(path))
        return
    record = cached._record(reference, "key", [])
    models = {"the sympy record": CachedModel(record, _Source(text, str(path), reference)),
              "the cache, first load": cached.load_cached(str(path))}
    fields = light_record(text, str(path))
    if fields is not None:
        models["the light record"] = CachedModel({**cached._header("key"), **fields}, _Source(text, str(path), None))
    cached._models.clear()
    models["the cache, from its record"] = cached.load_cached(str(path))
    cached._models.clear()
    for model in models.values():
        _agree(model, reference, ONE_FILE_POINTS)


@pytest.mark.parametrize("name", sorted(ONE_FILE))
def test_the_command_line_simulates_what_python_simulates(name, tmp_path, capsys):
    path = _one_file(name, tmp_path)
    out = tmp_path / "run.npz"
    cached._models.clear()
    code, _, err = run(capsys, "simulate", str(path), "--t-final", "0.25", "--x0", "x=0.7", "--method", "dopri5",
                       "--rtol", "1e-9", "--atol", "1e-12", "--out", str(out))
    cached._models.clear()
    try:
        expected = robodyn.simulate(robodyn.load(str(path)), (0.0, 0.25), {"x": 0.7}, method="dopri5", rtol=1e-9,
                                    atol=1e-12)
    except RobodynError as exc:  # refused (exit 2) or a derivative that is not finite (exit 1): the same words
        assert code == (2 if isinstance(exc, InputError) else 1)
        assert str(exc) in one_line(err)
        return
    assert code == 0, err
    data = np.load(out)
    np.testing.assert_allclose(data["t"], expected.t, rtol=1e-12, atol=0)
    np.testing.assert_allclose(data["x"], expected.x, rtol=1e-12, atol=0)


_MAGNITUDES = ["1e16", "1e-16", "1e300", "1e-300", "1e200", "1e8", "1e-8", "1e-13", "3", "0.3", "2", "0.5", "7"]
_CONSTANTS = st.one_of(st.sampled_from(_MAGNITUDES), st.sampled_from(_MAGNITUDES).map(lambda c: f"-{c}"),
                       st.sampled_from(["pi", "e", "pi/2", "sqrt(2)", "log(2)", "2*pi"]))
_FUNCTIONS = ["sin", "cos", "tan", "exp", "log", "sqrt", "atan", "tanh", "abs", "sign", "asin", "cosh"]


def _cancelling(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Sums whose terms carry extreme numbers, the first term coming back to cancel (like terms)."""
    term = st.tuples(st.sampled_from(["+", "-"]), _CONSTANTS, inner, st.booleans())
    return st.lists(term, min_size=1, max_size=4).map(
        lambda ts: "(" + " ".join(f"{s} {c}*{t}" if scaled else f"{s} {t}" for s, c, t, scaled in ts)
        + (f" - {ts[0][2]}" if len(ts) > 2 else "") + ")")


def _extreme(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        _cancelling(inner),
        st.tuples(inner, st.sampled_from(["*", "/"]), inner).map(lambda a: f"({a[0]} {a[1]} {a[2]})"),
        st.tuples(inner, st.sampled_from(["2", "3", "-1", "0.5"])).map(lambda a: f"({a[0]})**{a[1]}"),
        st.tuples(st.sampled_from(_FUNCTIONS), inner).map(lambda a: f"{a[0]}({a[1]})"),
        st.tuples(st.sampled_from(["min", "max", "atan2"]), inner, inner).map(lambda a: f"{a[0]}({a[1]}, {a[2]})"),
    )


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.recursive(st.one_of(st.sampled_from(["x", "y", "u", "k", "t"]), _CONSTANTS), _extreme, max_leaves=8),
       st.sampled_from(["2.0", "1e16", "1e-16", "1e300", "0.5"]),
       st.lists(st.lists(st.floats(0.2, 1.0), min_size=4, max_size=4), min_size=3, max_size=3))
def test_what_the_fast_reader_accepts_it_computes_as_the_sympy_model(expression, k, points):
    """Expressions with numbers of extreme and cancelling magnitudes: when the light reader accepts one, its f,
    h and Jacobians are the sympy model's to 1e-12 relative (or non-finite alike) at random points."""
    text = (f"kind: first_order\nstates: [x, y]\ninputs: [u]\nparameters: {{k: {k}}}\ndynamics:\n  x: y\n"
            f"  y: {expression}\noutputs:\n  w: {expression}\n")
    light = _light(text)
    if light is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = read_model_text(text, "case.yaml")
    _agree(light, reference, [(t, [x, y], [u]) for t, x, y, u in points])


def test_min_max_and_sign_give_nan_for_nan_and_the_mean_derivative_at_a_tie():
    """As the sympy model computes them: numpy's NaN for NaN (Python's ``min(1.0, nan)`` is 1.0), and at a tie the
    mean of the arguments' derivatives (sympy's Heaviside(0) is 1/2); its derivatives at NaN are not compared (the
    sympy model's choose a branch at random there)."""
    text = ("kind: first_order\nstates: [x, y]\ninputs: [u]\ndynamics:\n  x: min(x, y) + max(+max(y, u), 0.5, y)\n"
            "  y: sign(x - u) + sign(y**0.5)**2\n")  # max(+max(y, u), 0.5, y) is Max(0.5, u, y): a tie of 2
    light = _light(text)
    assert light is not None
    reference = read_model_text(text, "case.yaml")
    _agree(light, reference, [(0.0, [0.4, 0.4], [0.4]), (0.0, [0.4, 0.9], [0.9]), (0.0, [0.3, 0.2], [0.3]),
                              (0.0, [0.3, 0.0], [0.3])])  # sign's derivative at y = 0 is 0, not 0 * d sqrt(y) = NaN
    for x, u in (([math.nan, 0.2], [0.7]), ([0.3, math.nan], [0.5]), ([0.5, 0.2], [math.nan])):
        with np.errstate(all="ignore"):
            ours, theirs = light.f_raw(0.0, np.array(x), np.array(u), []), reference.f_raw(0.0, np.array(x),
                                                                                           np.array(u), [])
        assert all(map(_alike, ours, theirs)), (x, u, ours, theirs)


def test_e_to_a_power_is_the_exponential():
    fields = light_record("kind: first_order\nstates: [x]\ndynamics: {x: e**(-x) - e**2}\n", "case.yaml")
    assert fields is not None and "math.exp(-_x0)" in fields["sources"]["rhs"]


def test_the_start_up_benchmark_models_are_read_without_sympy():
    """benchmarks/bench_simulate.py's new model (and its new-equations variant): read by the light reader, so a new
    file's first run keeps its speed."""
    text = ("name: startup_probe_1\nkind: first_order\nstates: [theta, omega]\nparameters: {g: 9.81, l: 1.0, c: 0.1}\n"
            "dynamics:\n  theta: omega\n  omega: -g/l*sin(theta) - c*omega\n")
    assert light_record(text, "probe.yaml") is not None
    assert light_record(text.replace("- c*omega", "- c*omega - 123456e-12*omega**3"), "probe.yaml") is not None
