"""Start-up cost: loading a model and starting the command line import no more than they need.

Each case runs in a fresh interpreter and checks which modules it imported (not how long it took).
"""

import json
import subprocess
import sys

import pytest

# Heavy modules and what pulls them in when imported at module level.
SCIPY_ANALYSIS = ("scipy.optimize", "scipy.integrate", "scipy.sparse", "scipy.interpolate", "scipy.signal")
PLOTTING = ("matplotlib", "pandas")


def _imported_by(code: str) -> set[str]:
    """The modules a fresh interpreter has imported after running ``code``."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize("name", ["double_pendulum", "joint"])
def test_loading_a_model_imports_neither_scipy_nor_numba(name):
    modules = _imported_by(f"import robodyn\nrobodyn.load({name!r})")
    heavy = {"scipy.linalg", "numba", *SCIPY_ANALYSIS, *PLOTTING} & modules
    assert not heavy, f"robodyn.load({name!r}) imported {sorted(heavy)}"


def test_the_expression_parser_does_not_import_the_model_classes():
    modules = _imported_by("import robodyn.model.expr")
    assert not {"robodyn.files.loading", "robodyn.model.kinds.mechanical", "yaml"} & modules


def test_the_command_line_imports_the_analyses_on_demand():
    modules = _imported_by("import robodyn.cli")
    heavy = {*SCIPY_ANALYSIS, *PLOTTING, "robodyn.linearization.equilibrium", "robodyn.linear.modes"} & modules
    assert not heavy, f"import robodyn.cli imported {sorted(heavy)}"


@pytest.mark.parametrize("code", ["import robodyn", "import robodyn.cli", "import robodyn.files.loading",
                                  "import robodyn.files.cached", "import robodyn.files.catalog"])
def test_the_package_the_command_line_and_model_loading_import_no_sympy(code):
    modules = _imported_by(code)
    heavy = {"sympy", "numba", "yaml", "scipy", "rich", *PLOTTING, "robodyn.files.reader"} & modules
    assert not heavy, f"{code} imported {sorted(heavy)}"


def test_plain_numbers_are_read_without_the_expression_parser():
    modules = _imported_by("from robodyn.model.quantities import parse_number\nparse_number('-1e-6')\n"
                           "parse_number('10')")
    assert "sympy" not in modules and "robodyn.model.expr" not in modules


def test_the_name_rules_import_neither_the_parser_nor_the_value_readers():
    """robodyn.base.names is below the parser (which imports it) and the readers of values (which import both)."""
    modules = _imported_by("import robodyn.base.names")
    assert not {"sympy", "robodyn.model.expr", "robodyn.model.quantities"} & modules


def test_a_warm_simulation_opens_shared_libraries_without_llvm_or_numba(tmp_path):
    """The kernels and the model's function, compiled once (and linked into libraries the next time), are opened
    by the dynamic linker: a warm process to its first simulated CSV imports neither llvmlite.binding nor numba."""
    from robodyn.codegen.libraries import c_compiler

    if c_compiler() is None:
        pytest.skip("no C compiler: the cached objects go through MCJIT")
    script = ("import sys, json\nfrom robodyn.cli import main\n"
              "code = main(['simulate', 'pendulum', '--t-final', '2', '--x0', 'theta=1', '--out', sys.argv[1]])\n"
              "assert code == 0\nprint(json.dumps(sorted(sys.modules)))")
    for _ in range(3):  # compiled (or found), linked, opened
        done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "x.csv")], capture_output=True, text=True,
                              timeout=600, check=True)
    modules = set(json.loads(done.stdout.splitlines()[-1]))
    assert not {"llvmlite.binding", "numba", "sympy", "scipy"} & modules


def test_a_warm_simulation_imports_only_what_its_run_needs(tmp_path):
    """A plain ``robodyn simulate`` (no --input, --output, --plot; an adaptive method) imports neither the other
    commands' parsers nor the machinery of other paths and options, nor OpenSSL's bindings."""
    script = ("import sys, json\nfrom robodyn.cli import main\n"
              "code = main(['simulate', 'pendulum', '--t-final', '2', '--x0', 'theta=1', '--out', sys.argv[1]])\n"
              "assert code == 0\nprint(json.dumps(sorted(sys.modules)))")
    for _ in range(2):  # the second process is warm
        done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "x.csv")], capture_output=True, text=True,
                              timeout=600, check=True)
    modules = set(json.loads(done.stdout.splitlines()[-1]))
    unneeded = {"robodyn.cli.models", "robodyn.cli.kinematics", "robodyn.files.signal_text",
                "robodyn.integrate.paths.stiff", "robodyn.linear.exact", "robodyn.integrate.kernels.fused",
                "robodyn.mechanisms.loops.constraints", "robodyn.display",
                "_hashlib", "shutil", "fractions", "difflib", "yaml"}
    assert not unneeded & modules, sorted(unneeded & modules)
