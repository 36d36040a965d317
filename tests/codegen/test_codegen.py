"""The code generator: generated ``rhs`` against the models' own numeric ``f``, name safety, the private cache.

Only ``rhs`` (and once ``fixed_run``) is called on the generated modules, so numba compiles little here:
a kernel is compiled lazily on its first call.
"""

from __future__ import annotations

import ast
import os
import stat

import numpy as np
import pytest

import robodyn
import robodyn.codegen.loader as codegen_loader
from robodyn import InputError
from robodyn.codegen.cache import cache_dir, content_hash
from robodyn.codegen.source import UNROLL_LIMIT
from robodyn.model.compiled import compiled_module, module_text

Point = tuple[float, np.ndarray, np.ndarray, np.ndarray]


def _random_points(model: robodyn.Model, count: int, seed: int) -> list[Point]:
    """(t, x, u, p) with states and inputs ~ N(0, 2^2) and parameters scaled by factors in [0.5, 2]."""
    rng = np.random.default_rng(seed)
    defaults = model.parameter_vector()
    n, m = model.n_states, model.n_inputs
    return [(float(rng.uniform(0.0, 10.0)), 2.0 * rng.normal(size=n), 2.0 * rng.normal(size=m),
             defaults * rng.uniform(0.5, 2.0, defaults.size)) for _ in range(count)]


def _generated_rhs(model: robodyn.Model, t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> np.ndarray:
    out = np.full(model.n_states, np.nan)
    compiled_module(model).rhs(t, x, u, p, out)
    return out


@pytest.mark.parametrize(("name", "options", "looped"), [("double_pendulum", {}, False), ("mbk", {"n": 8}, True)])
def test_generated_rhs_equals_model_f(name: str, options: dict, looped: bool) -> None:
    model = robodyn.load(name, **options)
    n = model.n_states // 2
    assert (n > UNROLL_LIMIT) == looped
    assert ("cholesky_solve_lower(" in model.kernel_rhs_source()) == looped  # unrolled scalars up to UNROLL_LIMIT
    for t, x, u, p in _random_points(model, 40, seed=n):
        expected = model.f_raw(t, x, u, p)  # scipy's Cholesky on the lambdified M(q) and Q - c
        # two Cholesky solves of a well-conditioned M: rounding only (measured <= 7e-15)
        np.testing.assert_allclose(_generated_rhs(model, t, x, u, p), expected, rtol=1e-12, atol=1e-12)


def test_non_positive_definite_mass_gives_nan() -> None:
    # M = [[cos q]] is not positive definite for |q| > pi/2: the generated solve returns NaN (the kernels
    # report it as a non-finite derivative) instead of a wrong number.
    model = robodyn.LagrangianSystem(["q"], [], kinetic="cos(q)*q_dot**2/2", potential="0", name="bad_mass")
    assert np.all(np.isnan(_generated_rhs(model, 0.0, np.array([2.0, 0.1]), np.zeros(0), np.zeros(0))[1:]))
    assert np.all(np.isfinite(_generated_rhs(model, 0.0, np.array([0.5, 0.1]), np.zeros(0), np.zeros(0))))


CLASHING = ["x", "u", "p", "out", "t_", "math", "np", "numpy", "numba", "jit", "prange", "rhs", "_x0", "_c0"]


def _clashing_model() -> robodyn.SymbolicSystem:
    """Every state, input and parameter named like something in the generated module."""
    s = CLASHING[:7]  # states x, u, p, out, t_, math, np
    return robodyn.SymbolicSystem(
        s, ["numpy"],
        {s[0]: "-jit*x + u", s[1]: "-x*p + numpy", s[2]: "sin(out) - prange*p", s[3]: "rhs*(u - out)",
         s[4]: "t + _x0*t_", s[5]: "-_c0*math + cos(np)", s[6]: "numba - np**2 + exp(-t)"},
        parameters={"numba": 0.3, "jit": 1.5, "prange": 0.25, "rhs": 2.0, "_x0": -0.5, "_c0": 0.75},
        name="clashing",
    )


def _clashing_f(t: float, x: np.ndarray, u: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The same dynamics written by hand (parameters numba, jit, prange, rhs, _x0, _c0)."""
    numba, jit, prange, rhs, x0, c0 = p
    return np.array([-jit * x[0] + x[1], -x[0] * x[2] + u[0], np.sin(x[3]) - prange * x[2], rhs * (x[1] - x[3]),
                     t + x0 * x[4], -c0 * x[5] + np.cos(x[6]), numba - x[6] ** 2 + np.exp(-t)])


def test_user_names_never_reach_the_generated_source() -> None:
    model = _clashing_model()
    tree = ast.parse(module_text(model))
    rhs = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "rhs")
    names = {node.id for statement in rhs.body for node in ast.walk(statement) if isinstance(node, ast.Name)}
    # only the arguments, the index-named locals and the math module
    assert all(n in {"t", "x", "u", "p", "out", "math"} or n[:2] in {"_x", "_u", "_p", "_c"} for n in names)
    for t, x, u, p in _random_points(model, 10, seed=1):
        np.testing.assert_allclose(_generated_rhs(model, t, x, u, p), _clashing_f(t, x, u, p), rtol=1e-14,
                                   atol=1e-14)


def test_model_with_clashing_names_simulates_compiled() -> None:
    model = _clashing_model()
    tr = robodyn.simulate(model, 0.5, np.full(7, 0.1), 0.2, method="rk4", dt=1e-3)
    assert tr.stats.path == "compiled" and np.all(np.isfinite(tr.x))
    reference = robodyn.simulate(robodyn.System(_clashing_f, model.states, model.inputs,
                                                parameters=dict(model.parameters)), 0.5, np.full(7, 0.1), 0.2,
                                 method="rk4", dt=1e-3)
    np.testing.assert_allclose(tr.x, reference.x, rtol=1e-12, atol=1e-12)  # rounding order only


def test_model_f_with_a_symbol_named_numpy() -> None:
    model = _clashing_model()
    t, x, u, p = _random_points(model, 1, seed=2)[0]
    np.testing.assert_allclose(model.f(t, x, u, p), _clashing_f(t, x, u, p), rtol=1e-14)


def test_model_name_cannot_inject_code(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(tmp_path / "cache"))
    marker = tmp_path / "injected"
    name = f'a"""; __import__("pathlib").Path({str(marker)!r}).write_text("x"); """'
    model = robodyn.SymbolicSystem(["x"], [], {"x": "-x"}, name=name)
    text = module_text(model)
    assert ast.get_docstring(ast.parse(text)).startswith("Generated by robodyn for the model 'a___")
    compiled_module(model)  # executes the module's top level
    assert not marker.exists()


# --- the private cache ------------------------------------------------------------------------------
def _private_mode(path: os.PathLike[str]) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_cache_folder_is_private_and_files_are_reused(tmp_path, monkeypatch) -> None:
    base = tmp_path / "robodyn-cache"
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(base))
    monkeypatch.setattr(codegen_loader, "_loaded", {})  # forget modules loaded by earlier tests

    def model() -> robodyn.SymbolicSystem:  # a fresh object each time: models memoize their module
        return robodyn.SymbolicSystem(["z"], ["w"], {"z": "-a*z + w"}, parameters={"a": 2.0}, name="cache_probe")

    first = compiled_module(model())
    folder = cache_dir()
    assert folder.parent == base
    assert _private_mode(base) == 0o700 and _private_mode(folder) == 0o700
    text = module_text(model())
    path = folder / f"robodyn_gen_{content_hash(text)[:24]}.py"
    assert first.__name__ == path.stem and path.read_text(encoding="utf-8") == text
    out = np.empty(1)
    first.rhs(0.0, np.array([1.0]), np.array([0.5]), np.array([2.0]), out)
    assert out[0] == -1.5
    assert list((folder / "__pycache__").glob(f"{path.stem}.rhs-*.nbi"))  # numba's machine code, on disk
    before = path.stat()

    monkeypatch.setattr(codegen_loader, "_loaded", {})  # as in a new process
    second = compiled_module(model())
    assert second is not first
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not rewritten
    second.rhs(0.0, np.array([1.0]), np.array([0.5]), np.array([2.0]), out)
    assert out[0] == -1.5
    assert sum(second.rhs.stats.cache_hits.values()) == 1  # loaded from the cache, not compiled again


def test_tampered_cache_file_is_rewritten(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(codegen_loader, "_loaded", {})
    model = robodyn.SymbolicSystem(["z"], [], {"z": "-3*z"}, name="tamper_probe")
    text = module_text(model)
    path = cache_dir() / f"robodyn_gen_{content_hash(text)[:24]}.py"
    path.write_text("raise SystemExit('tampered')\n", encoding="utf-8")
    compiled_module(model)
    assert path.read_text(encoding="utf-8") == text


def test_own_subfolder_is_tightened_but_the_named_folder_is_left_alone(tmp_path, monkeypatch) -> None:
    """ROBODYN_CACHE_DIR may name a folder such as $HOME: robodyn must not change its permissions, only
    those of the versioned subfolder it owns (which holds the generated code)."""
    base = tmp_path / "shared"
    base.mkdir(mode=0o755)
    base.chmod(0o755)
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(base))
    folder = cache_dir()
    folder.chmod(0o755)
    assert cache_dir() == folder
    assert _private_mode(base) == 0o755
    assert _private_mode(folder) == 0o700


def test_cache_folder_of_another_user_is_refused(tmp_path, monkeypatch) -> None:
    if not hasattr(os, "getuid"):
        pytest.skip("no user ids on this platform")
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(tmp_path / "theirs"))
    real_uid = os.getuid()
    monkeypatch.setattr("robodyn.codegen.cache.os.getuid", lambda: real_uid + 1)
    with pytest.raises(InputError, match="belongs to another user"):
        cache_dir()


def test_the_numpy_functions_and_the_numba_sources_compute_in_one_order():
    """sympy orders the factors of a product by the names of their symbols: a model's numpy functions name them as
    its numba sources do (_x0, _p0, ...), with the same cse, so -k*x*10 is (-10*k)*x in both and overflows in both
    at k = 1e308 (model.f gave -1e307 at x = 0.01, the record's code -inf). Only arithmetic here: bit for bit."""
    from robodyn.model.compiled import python_function

    model = robodyn.SymbolicSystem(["x", "y"], ["u"], {"x": "-k*x*10 + a*y*u/b", "y": "(a*x - y*k + u*b)*x*y/3"},
                                   parameters={"k": 1e308, "a": 1e-300, "b": 3.0})
    rhs = python_function(model, "rhs")
    assert rhs is not None
    p = model.parameter_vector()
    rng = np.random.default_rng(3)
    for _ in range(20):
        x, u = rng.uniform(-2, 2, 2) * 10.0 ** rng.integers(-3, 3), rng.uniform(-2, 2, 1)
        out = np.empty(2)
        rhs(0.0, x, u, p, out)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(model.f_raw(0.0, x, u, p), out)


def test_lambdify_entries_prints_only_the_nonzero_entries():
    import sympy

    from robodyn.codegen.printer import lambdify_entries

    x, y = sympy.symbols("x y")
    entries = [0, x * y, 0, sympy.sin(x), sympy.Integer(0), 2.5]
    evaluate = lambdify_entries((x, y), entries)
    assert evaluate(0.5, 3.0).tolist() == [0.0, 1.5, 0.0, float(np.sin(0.5)), 0.0, 2.5]
    assert lambdify_entries((x,), [0, 0])(1.0).tolist() == [0.0, 0.0]
    assert lambdify_entries((x,), [x, x + 1])(1.0).tolist() == [1.0, 2.0]
    many = lambdify_entries((x,), [0] * 200_000 + [x])  # dM/dq of a long linear chain: all but one 0
    assert many(4.0)[-1] == 4.0 and not many(4.0)[:-1].any()
