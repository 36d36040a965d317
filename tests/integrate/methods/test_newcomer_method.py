"""A newcomer adds an explicit method by docs/dev/architecture.md's recipe, literally, and it works.

The recipe ("How to add ... An explicit method") names three files: the tableau in ``integrate/methods/tableaus.py``,
its entry in ``integrate/methods/families.py`` and the ``--method`` row of ``docs/cli.md``. This test follows it in a
copy of ``src/robodyn`` (and of ``docs/cli.md``) for Ralston's second-order method, checks that exactly those files
changed, then runs the copy in a subprocess: ``simulate(method="ralston")`` on x' = -x^2 (a Python ``System``, the
interpreted path: no compile) converges to 1 / (1 + t) with observed order 2 (and is not Heun's method, the other
two-stage method of order 2: they differ on a nonlinear model only), and ``robodyn simulate --method
ralston`` runs the compiled kernel. If this test fails, the recipe or the code it describes has drifted.

Reference: A. Ralston, "Runge-Kutta methods with minimum error bounds", Math. Comp. 16 (1962) 431-437
(c = (0, 2/3), a21 = 2/3, b = (1/4, 3/4)).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RECIPE_FILES = {"src/robodyn/integrate/methods/tableaus.py", "src/robodyn/integrate/methods/families.py",
                "docs/cli.md"}

_TABLEAU = '''

def _ralston() -> ButcherTableau:
    """Ralston's second-order method (minimum error bound among two-stage methods of order 2)."""
    F = _Q
    return ButcherTableau("ralston", 2, A=_exact([[0, 0], [F(2, 3), 0]]), b=_exact([[F(1, 4), F(3, 4)]])[0],
                          c=_exact([[0, F(2, 3)]])[0])
'''

_RUN = r'''
import json, math, sys
import numpy as np
import robodyn
from robodyn.cli import main

decay = robodyn.System(lambda t, x, u, p: -x * x, states=["x"], name="decay")
errors, heun = [], []
for dt in (0.1, 0.05, 0.025):
    run = robodyn.simulate(decay, 1.0, [1.0], method="ralston", dt=dt)
    errors.append(abs(float(run.x[-1, 0]) - 0.5))
    heun.append(float(robodyn.simulate(decay, 1.0, [1.0], method="heun", dt=dt).x[-1, 0]))
    last = float(run.x[-1, 0])
print(json.dumps({"errors": errors, "method": run.stats.method, "last": last, "heun": heun[-1]}))
sys.stdout.flush()
sys.exit(main(["simulate", sys.argv[1], "--t-final", "1", "--x0", "x=1", "--method", "ralston", "--dt", "0.01"]))
'''


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def _edit(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in ``path`` (the recipe's anchor must be there, once)."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def follow_the_recipe(copy: Path) -> None:
    """docs/dev/architecture.md, "An explicit method", for Ralston's method (a fixed-step one)."""
    methods = copy / "src" / "robodyn" / "integrate" / "methods"
    tableaus = methods / "tableaus.py"
    # 1. the tableau: a function returning it, named in _MADE_BY, the TYPE_CHECKING block and __all__
    _edit(tableaus, "\n\ndef _dopri5()", _TABLEAU + "\n\ndef _dopri5()")
    _edit(tableaus, '"RK4": _rk4,', '"RK4": _rk4, "RALSTON": _ralston,')
    _edit(tableaus, "    RK4: ButcherTableau\n", "    RK4: ButcherTableau\n    RALSTON: ButcherTableau\n")
    _edit(tableaus, '"METHODS", "RK4",', '"METHODS", "RALSTON", "RK4",')
    # 2. the registry entry: family fixed, a line for people, the tableau's module-level name
    _edit(methods / "families.py", '    "dopri5": ("adaptive",',
          '    "ralston": ("fixed", "Ralston\'s second-order method", "RALSTON", None),\n    "dopri5": ("adaptive",')
    # 3. docs/cli.md: the --method row and, for a fixed method, the --dt row
    cli_md = copy / "docs" / "cli.md"
    _edit(cli_md, "`rk4`, `dopri5` (default otherwise)", "`rk4`, `ralston`, `dopri5` (default otherwise)")
    _edit(cli_md, "| step of `euler`, `heun`, `rk4`", "| step of `euler`, `heun`, `rk4`, `ralston`")


def test_the_explicit_method_recipe_touches_only_its_files_and_works(tmp_path: Path) -> None:
    recipe = (ROOT / "docs" / "dev" / "architecture.md").read_text(encoding="utf-8")
    paragraph = recipe.split("**An explicit method.**")[1].split("\n\n**")[0]
    for named in ("integrate/methods/tableaus.py", "integrate/methods/families.py", "docs/cli.md", "_MADE_BY",
                  "ENTRIES", "__all__", "TYPE_CHECKING", "--method", "--dt", "test_newcomer_method.py"):
        assert named in paragraph, f"the recipe no longer says {named!r}: update it and this test together"

    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "src" / "robodyn", copy / "src" / "robodyn",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "cli.md", copy / "docs" / "cli.md")
    before = _files(copy)
    follow_the_recipe(copy)
    after = _files(copy)
    assert set(after) == set(before), "the recipe adds no file"
    assert {name for name in after if after[name] != before[name]} == RECIPE_FILES

    model = tmp_path / "decay.yaml"
    model.write_text("name: decay\nkind: first_order\nstates: [x]\ndynamics: {x: -x**2}\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(copy / "src"), "ROBODYN_CACHE_DIR": str(tmp_path / "cache"),
           "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", _RUN, str(model)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    first, *printed = done.stdout.splitlines()
    found = json.loads(first)
    errors = found["errors"]
    assert found["method"] == "ralston"
    orders = [math.log2(a / b) for a, b in itertools.pairwise(errors)]
    assert all(1.9 < order < 2.1 for order in orders), (errors, orders)
    assert errors[-1] < 1e-4
    assert found["last"] != pytest.approx(found["heun"], rel=1e-12, abs=0), "ran Heun's tableau, not Ralston's"
    # the command line: the registry gave --method its choice, and the compiled fixed-step kernel ran the tableau
    assert printed[0].startswith("decay: ralston (compiled)"), printed
    final = re.fullmatch(r"final state: x = (\S+)", printed[1])
    assert final is not None, printed
    assert float(final.group(1)) == pytest.approx(0.5, abs=1e-5)
