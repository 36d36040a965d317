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
    assert not {"robodyn.model.files.loading", "robodyn.model.mechanical", "yaml"} & modules


def test_the_command_line_imports_the_analyses_on_demand():
    modules = _imported_by("import robodyn.cli")
    heavy = {*SCIPY_ANALYSIS, *PLOTTING, "robodyn.analysis.equilibrium", "robodyn.analysis.modes"} & modules
    assert not heavy, f"import robodyn.cli imported {sorted(heavy)}"


@pytest.mark.parametrize("code", ["import robodyn", "import robodyn.cli", "import robodyn.model.files.loading",
                                  "import robodyn.model.files.cached", "import robodyn.model.files.catalog"])
def test_the_package_the_command_line_and_model_loading_import_no_sympy(code):
    modules = _imported_by(code)
    heavy = {"sympy", "numba", "yaml", "scipy", "rich", *PLOTTING, "robodyn.model.files.reader"} & modules
    assert not heavy, f"{code} imported {sorted(heavy)}"


def test_plain_numbers_are_read_without_the_expression_parser():
    modules = _imported_by("from robodyn.model.names import parse_number\nparse_number('-1e-6')\nparse_number('10')")
    assert "sympy" not in modules and "robodyn.model.expr" not in modules
