"""Every name an export emits compiles, whatever the model calls it (robodyn.export.c_names, docs/export.md "Names in
C"): parameters, frames and a model named by C's and C++'s keywords, the standard headers' macros (``NAN``, ``EOF``,
``errno``, ``I``, ``linux``), <math.h>'s functions, reserved identifiers, robodyn's own locals and the names the
export derives from its prefix. One chain model carries them all; it is compiled once by each of ``gcc -std=c99
-pedantic``, gcc in its default GNU mode and ``g++ -std=c++17`` after every standard header, each program setting
every field by its reported name and printing P_f and every P_fk_<frame>, which must be robodyn's numbers."""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

import robodyn
from robodyn.base.errors import InputError
from robodyn.export.c import export_c
from robodyn.export.c_names import default_prefix, field_names, frame_functions, prefix_problem
from robodyn.export.c_reserved import C_KEYWORDS, CPP_KEYWORDS, MACROS

MACRO_NAMES = ["NAN", "INFINITY", "HUGE_VAL", "HUGE_VALF", "NULL", "EOF", "linux", "unix", "errno", "I", "M_PI",
               "M_E", "FP_NAN", "FP_INFINITE", "MATH_ERRNO", "math_errhandling", "stdin", "stderr", "EDOM", "ERANGE",
               "EXIT_SUCCESS", "RAND_MAX", "CHAR_BIT", "INT_MAX", "DBL_EPSILON", "SIGINT", "complex", "imaginary",
               "noreturn", "BUFSIZ", "LC_ALL", "CLOCKS_PER_SEC", "WEOF", "INT8_MAX", "PRId64"]
FUNCTION_NAMES = ["y0", "y1", "j0", "j1", "jn", "yn", "gamma", "lgamma", "tgamma", "signbit", "isnan", "isinf",
                  "isfinite", "fpclassify", "offsetof", "va_arg", "setjmp", "fabs", "cbrt", "hypot", "erf", "printf",
                  "malloc", "main", "std", "size_t", "FILE", "int8_t"]
C_WORDS = ["auto", "register", "restrict", "inline", "int", "double", "char", "void", "struct", "typedef", "sizeof",
           "static", "extern", "const", "volatile", "goto", "switch", "case", "default", "do", "signed", "unsigned",
           "long", "short", "float", "enum", "union", "_Alignas", "_Atomic", "_Bool", "_Complex", "_Generic",
           "_Noreturn", "_Static_assert", "_Thread_local", "alignas", "alignof", "bool", "true", "false", "nullptr",
           "static_assert", "thread_local", "typeof", "typeof_unqual", "constexpr", "_BitInt", "asm"]
CPP_WORDS = ["new", "this", "template", "delete", "operator", "namespace", "private", "public", "protected", "virtual",
             "typename", "mutable", "explicit", "friend", "throw", "catch", "using", "decltype", "noexcept", "xor",
             "bitand", "bitor", "compl", "and_eq", "or_eq", "xor_eq", "not_eq", "concept", "requires", "co_await",
             "co_yield", "co_return", "char8_t", "char16_t", "char32_t", "wchar_t", "consteval", "constinit",
             "dynamic_cast", "static_cast", "const_cast", "reinterpret_cast", "typeid", "export"]
RESERVED = ["_X", "__x", "x__y", "_lower", "a_", "Z__"]
LOCALS = ["p", "pv", "xv", "v0", "v1", "i", "work", "values", "q", "k", "h", "uz", "xs", "xnext", "err", "out", "a",
          "tau", "M", "J", "A", "B", "C", "D", "pos", "rot", "com", "qd", "qdd", "xdot", "y", "x", "u", "unused_"]
MODEL_NAME = "operator"  # a C++ keyword: the default prefix is operator_model
PREFIX = default_prefix(MODEL_NAME)
DERIVED = [f"{PREFIX}_{s}" for s in ("NX", "NU", "NY", "NQ", "NP", "params", "params_default", "f", "tape0", "fk_base")]
PARAMETERS = [*MACRO_NAMES, *FUNCTION_NAMES, *C_WORDS, *CPP_WORDS, *RESERVED, *LOCALS, *DERIVED,
              f"{PREFIX.upper()}_H"]
#: Link names (each a moving body) and extra frames: P_fk_<frame> of each.
LINKS = ["class", "NAN", "__x", "a/b", "1abc"]
FRAMES = ["new", "_X", "sin", "and", "x__y", "operator_model_NX", "l-arm", "camera/depth", "while", "a_b_c_"]
C_HEADERS = ["assert", "complex", "ctype", "errno", "fenv", "float", "inttypes", "iso646", "limits", "locale", "math",
             "setjmp", "signal", "stdarg", "stdbool", "stddef", "stdint", "stdio", "stdlib", "string", "tgmath",
             "time", "wchar", "wctype"]
C11_HEADERS = ["stdalign", "stdatomic", "stdnoreturn", "threads", "uchar"]
CPP_HEADERS = ["cassert", "ccomplex", "cctype", "cerrno", "cfenv", "cfloat", "cinttypes", "climits", "clocale",
               "cmath", "csetjmp", "csignal", "cstdarg", "cstddef", "cstdint", "cstdio", "cstdlib", "cstring",
               "ctime", "cwchar", "cwctype", "complex", "atomic", "cstdbool"]


def _safe(name: str) -> bool:
    """The rule, written out independently of the module: an ASCII identifier with a letter first, no ``__``, neither
    a keyword of C or C++ nor an object-like macro of the standard headers."""
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name)) and "__" not in name and name not in (
        C_KEYWORDS | CPP_KEYWORDS | MACROS)


# --- the rule ---------------------------------------------------------------------------------------------------
@given(st.lists(st.text(max_size=12), max_size=6, unique=True), st.text(max_size=60))
def test_every_name_becomes_a_safe_c_name_or_is_refused(names: list[str], model_name: str) -> None:
    """Any model name gives a safe prefix; any parameters and frames give safe, distinct C names, or an InputError
    that names the two that meet."""
    prefix = default_prefix(model_name)
    assert prefix_problem(prefix) is None and _safe(prefix) and not prefix.endswith("_")
    try:
        fields = field_names(names, prefix)
    except InputError as error:
        assert "both become the P_params field" in str(error)
    else:
        assert list(fields) == names and len(set(fields.values())) == len(names)
        assert all(_safe(f) and f not in (f"{prefix}_NX", f"{prefix.upper()}_H") for f in fields.values())
    try:
        functions = frame_functions(names, prefix)
    except InputError as error:
        assert "both become the C function" in str(error)
    else:
        assert all(_safe(f) and f.startswith(f"{prefix}_fk_") for f in functions.values())


def test_safe_names_are_kept_and_the_others_mangled_as_documented() -> None:
    """Plain names (every existing export's) are unchanged; the documented examples of docs/export.md hold."""
    assert field_names(["m1", "l_1", "Kp", "gamma", "y0", "EI", "M", "p"], "arm") == {
        n: n for n in ["m1", "l_1", "Kp", "gamma", "y0", "EI", "M", "p"]}
    assert field_names(["NAN", "new", "I", "__x", "_X", "x__y", "arm_NX", "ARM_H", "plant.k"], "arm") == {
        "NAN": "NAN_", "new": "new_", "I": "I_", "__x": "x_", "_X": "X_", "x__y": "x_y_", "arm_NX": "arm_NX_",
        "ARM_H": "ARM_H_", "plant.k": "plant_k"}
    assert frame_functions(["camera/depth", "l-arm", "_tool", "1abc", "a//b"], "arm") == {
        "camera/depth": "arm_fk_camera_depth", "l-arm": "arm_fk_l_arm", "_tool": "arm_fk_tool_", "1abc": "arm_fk_1abc",
        "a//b": "arm_fk_a_b_"}
    assert [default_prefix(n) for n in ("puma560", "two-link arm", "new", "NAN", "2link", "__init__", "test", "",
                                        "x" * 80, "my  robot")] == [
        "puma560", "two_link_arm", "new_model", "NAN_model", "model_2link", "init", "test_model", "model", "x" * 48,
        "my_robot"]


def test_names_that_meet_are_refused_naming_both(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"the parameters 'NAN' and 'NAN_' both become the P_params field NAN_"):
        field_names(["NAN", "NAN_"], "m")
    with pytest.raises(InputError, match=r"the frames 'a/b' and 'a_b' both become the C function m_fk_a_b"):
        frame_functions(["a/b", "a_b"], "m")
    one = robodyn.SymbolicSystem(["x"], [], {"x": "-b_c*x"}, parameters={"b_c": 1.0})
    other = robodyn.SymbolicSystem(["x"], [], {"x": "-c*x"}, parameters={"c": 2.0})
    with pytest.raises(InputError, match=r"'a\.b_c' and 'a_b\.c' both become the P_params field a_b_c"):
        export_c(robodyn.Diagram({"a": one, "a_b": other}), tmp_path / "c")
    assert not (tmp_path / "c").exists()


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None, reason="no gcc or g++")
def test_the_reserved_macros_hold_every_macro_of_the_compiler(tmp_path: Path) -> None:
    """What the compiler itself defines (an independent reference for c_reserved.MACROS): every object-like macro
    without a leading _ of the C standard headers in ISO C99 and of the compilers' predefined set is a name the rule
    refuses to keep."""
    (tmp_path / "all.c").write_text("".join(f"#include <{h}.h>\n" for h in C_HEADERS))
    found = set()
    for command in (["gcc", "-std=c99", "-dM", "-E", str(tmp_path / "all.c")], ["gcc", "-dM", "-E", "-x", "c",
                                                                               "/dev/null"],
                    ["g++", "-std=c++17", "-dM", "-E", "-x", "c++", "/dev/null"]):
        defined = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        found |= set(re.findall(r"^#define ([A-Za-z][A-Za-z0-9_]*)(?=[ \n])", defined, flags=re.M))
    assert found > {"NAN", "EOF", "linux"}
    assert sorted(found - MACROS - C_KEYWORDS - CPP_KEYWORDS) == []


# --- the compilers' verdict -------------------------------------------------------------------------------------
def _chain(folder: Path) -> Path:
    """A chain named ``operator`` whose links and frames are hostile names and whose masses weigh every hostile
    parameter differently (so that a field set by the wrong name changes f)."""
    weights = " + ".join(f"{k + 1}*{name}" for k, name in enumerate(PARAMETERS))
    links = ["base", *LINKS]
    document = {
        "name": MODEL_NAME, "kind": "chain", "parameters": {name: 1.0 + 0.001 * k for k, name in enumerate(PARAMETERS)},
        "joints": [{"name": f"q{i}", "type": "revolute", "parent": links[i], "child": links[i + 1],
                    "axis": [0, 1, 0] if i % 2 else [0, 0, 1], "xyz": [0.2, 0.05 * i, 0.1]} for i in range(len(LINKS))],
        "links": [{"name": "base"}, *({"name": n, "mass": f"1 + 1e-5*({weights})" if k == 0 else 1.0 + 0.1 * k,
                                       "com": [0.1, 0, 0], "inertia": {"ixx": 0.01, "iyy": 0.02, "izz": 0.02}}
                                      for k, n in enumerate(LINKS))],
        "frames": {name: {"parent": links[1 + k % len(LINKS)], "xyz": [0.1 * k, 0.2, 0]} for k, name in
                   enumerate(FRAMES)},
    }
    path = folder / "operator.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def _program(export: Any, model: Any, values: np.ndarray, x: np.ndarray, u: np.ndarray, headers: list[str],
             cpp: bool) -> str:
    """A program that includes ``headers`` then the export's header, sets every field by its reported name, calls
    P_f at the defaults and at ``values`` and every P_fk_<frame>, and prints the numbers (%.17g)."""
    p, n = export.prefix, model.n_coordinates

    def array(name: str, numbers: np.ndarray) -> str:
        return f"static const double {name}[] = {{{', '.join(repr(float(v)) for v in numbers)}}};"

    setting = [f"    p.{export.parameter_fields[name]} = {float(v)!r};" for name, v in zip(model.parameters, values)]
    calls = [f"    {function}(x, &p, pos, rot, J); show(pos, 3);" for function in export.frame_functions.values()]
    return "\n".join([
        *(f"#include <{h}>" if cpp else f"#include <{h}.h>" for h in headers), f'#include "{p}.h"', array("x", x),
        array("u", u), "static void show(const double *v, int k) { int i; for (i = 0; i < k; ++i) "
        'printf("%.17g\\n", v[i]); }', "int main(void)", "{", f"    {p}_params p = {p}_params_default();",
        f"    double xdot[{model.n_states}], pos[3], rot[9], J[{6 * n}];",
        f"    {p}_f(0.3, x, u, &p, xdot); show(xdot, {model.n_states});", *setting,
        f"    {p}_f(0.3, x, u, &p, xdot); show(xdot, {model.n_states});", *calls, "    return 0;", "}", ""])


def _close(mine: np.ndarray, theirs: np.ndarray) -> None:
    """The same operations in C: equal to 1e-13 of the largest entry (the math library may round apart)."""
    assert np.abs(mine - theirs).max() <= 1e-13 * max(1.0, np.abs(theirs).max())


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The chain of :func:`_chain`, loaded once."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return robodyn.load(str(_chain(tmp_path_factory.mktemp("chain"))))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
@pytest.mark.parametrize("compiler", ["gcc -std=c99 -pedantic", "gcc (GNU C)", "g++ -std=c++17"])
def test_hostile_names_compile_and_give_the_models_numbers(compiler: str, hostile: Any, tmp_path: Path) -> None:
    if compiler.startswith("g++") and shutil.which("g++") is None:
        pytest.skip("no g++")
    model = hostile
    export = export_c(model, tmp_path / "c", functions=["f", "h", "step_rk4", "step_dopri5", "com", "fk"],
                      build=compiler.startswith("gcc -std"))  # the names of every function; the small ones
    assert export.prefix == PREFIX == "operator_model" and export.fields == tuple(export.parameter_fields.values())
    assert export.frames == (*("base", *LINKS), *FRAMES)
    rng = np.random.default_rng(8)
    values = model.parameter_vector(None) * rng.uniform(0.5, 1.5, len(PARAMETERS))
    x, u = rng.uniform(-1, 1, model.n_states), rng.uniform(-1, 1, model.n_inputs)
    overrides = dict(zip(model.parameters, values))
    expected = [model.f(0.3, x, u), model.f(0.3, x, u, overrides)]
    kinematics = robodyn.Kinematics(model)
    expected += [kinematics.pose(x[:model.n_coordinates], frame, params=overrides).position for frame in export.frames]
    strict = ["-Wall", "-Wextra", "-Werror", "-O1"]
    source = export.directory / f"{export.prefix}.c"
    if compiler.startswith("g++"):
        (tmp_path / "main.cpp").write_text(_program(export, model, values, x, u, CPP_HEADERS, cpp=True))
        subprocess.run(["gcc", "-std=c99", "-pedantic", *strict, "-c", str(source), "-o", str(tmp_path / "P.o")],
                       check=True)
        command = ["g++", "-std=c++17", "-pedantic", *strict, str(tmp_path / "main.cpp"), str(tmp_path / "P.o")]
    else:
        iso = compiler.startswith("gcc -std")
        headers = C_HEADERS if iso else [*C_HEADERS, *C11_HEADERS]
        (tmp_path / "main.c").write_text(_program(export, model, values, x, u, headers, cpp=False))
        command = ["gcc", *(["-std=c99", "-pedantic"] if iso else []), *strict, str(tmp_path / "main.c"), str(source)]
    done = subprocess.run([*command, f"-I{export.directory}", "-lm", "-o", str(tmp_path / "main")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = np.array(subprocess.run([str(tmp_path / "main")], capture_output=True, text=True,
                                      check=True).stdout.split(), dtype=float)
    assert printed.size == sum(e.size for e in expected)
    start = 0
    for block in expected:
        _close(printed[start:start + block.size], block)
        start += block.size
    assert np.abs(expected[1] - expected[0]).max() > 1e-6  # the parameters set by name move f
    if export.library is not None:  # the library through ctypes: the same numbers
        _close(export.library.f(0.3, x, u, values), expected[1])
        for frame, position in zip(export.frames, expected[2:]):
            _close(export.library.fk(frame, x[:model.n_coordinates], values)[0], position)
