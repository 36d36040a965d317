"""The quick path of ``robodyn simulate`` (robodyn.cli.quick): a warm run repeated from its image in a process
without numpy writes exactly what the full path writes, and everything it does not take goes the full way.

Each case runs the command in new processes: the full path first (``ROBODYN_QUICK=0``; its run writes the image,
and a model compiled in that process gets its image from the second run), then the quick one, which must not
import numpy and must print and write the same bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robodyn.cli import quick
from robodyn.cli.parser import build_parser

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_SCRIPT = ("import sys, json\nfrom robodyn.cli import main\ncode = main(sys.argv[1:])\n"
           "print(json.dumps({'code': code, 'numpy': 'numpy' in sys.modules, 'scipy': 'scipy' in sys.modules, "
           "'sympy': 'sympy' in sys.modules}), file=sys.stderr)")


def _robodyn(argv: list[str], cwd: Path, quick_path: bool = True, cache: Path | None = None
             ) -> tuple[dict[str, object], str, str]:
    """``robodyn ARGV`` in a new process: ({code, numpy imported}, stdout, the rest of stderr); ``cache``: a private
    cache folder of its own (default: the suite's)."""
    env = {**os.environ, "ROBODYN_QUIET": "1", **({} if quick_path else {"ROBODYN_QUICK": "0"}),
           **({} if cache is None else {"ROBODYN_CACHE_DIR": str(cache)})}
    done = subprocess.run([sys.executable, "-c", _SCRIPT, *argv], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=900, check=False)
    lines = done.stderr.splitlines()
    if not lines or not lines[-1].startswith("{"):
        return {"code": done.returncode, "numpy": None}, done.stdout, done.stderr
    found = json.loads(lines[-1])
    imported = {k: found.pop(k) for k in ("scipy", "sympy")}
    if found["numpy"] is False:  # the quick path: no scipy or sympy either
        assert imported == {"scipy": False, "sympy": False}
    return found, _untimed(done.stdout), "\n".join(lines[:-1])


def _untimed(text: str) -> str:
    """``text`` with the seconds the kernel took to load (they vary from run to run) left out."""
    return re.sub(r"loaded from cache in [0-9.]+ s", "loaded from cache in ... s", text)


FIRST_ORDER = """name: quick_probe
kind: first_order
states: [theta, omega]
parameters: {g: 9.81, l: 1.0, c: 0.1}
dynamics:
  theta: omega
  omega: -g/l*sin(theta) - c*omega
"""

CASES = [
    ["simulate", "pendulum", "--t-final", "10", "--x0", "theta=1", "--out", "a.csv"],  # 138 steps: rows grow
    ["simulate", "pendulum", "--t0", "-1", "--t-final", "3.5", "--x0", "theta=0.5,theta_dot=-2", "--rtol", "1e-9",
     "--atol", "1e-12", "--points", "57", "--out", "a.csv"],
    ["simulate", "double_pendulum", "--t-final", "2", "--x0", "theta1=1", "--x0", "theta2=-.5", "--method", "dop853",
     "--out", "-"],
    ["simulate", "joint", "--method", "DOPRI5", "--t-final", "2", "--x0", "q=1"],  # no --out: the summary only
    ["simulate", "model.yaml", "--t-final", "4", "--x0", "theta=1", "--rtol", "1e-4", "--out", "b.CSV"],
    # linear models: the exact path's image (robodyn.integrate.paths.exact_image)
    ["simulate", "joint", "--t-final", "10", "--x0", "q=1", "--out", "e.csv"],
    ["simulate", "joint", "--t-final", "3", "--x0", "q=1,q_dot=-2", "--input", "u=2.5", "--out", "e.csv"],
    ["simulate", "joint", "--t0", "-0.5", "--t-final", "2", "--method", "exact", "--points", "57", "--out", "-"],
    ["simulate", "mbk.yaml", "--t-final", "5", "--x0", "x2=0.25", "--input", "F3=-1e-3", "--input", "F1=2"],
]


@pytest.mark.parametrize("argv", CASES, ids=lambda argv: " ".join(argv[1:4]))
def test_the_quick_path_writes_and_prints_what_the_full_path_does(argv, tmp_path):
    (tmp_path / "model.yaml").write_text(FIRST_ORDER, encoding="utf-8")
    shutil.copyfile(EXAMPLES / "mbk.yaml", tmp_path / "mbk.yaml")  # a mechanical file: linear, three inputs
    out = next((argv[k + 1] for k, word in enumerate(argv) if word == "--out" and argv[k + 1] != "-"), None)
    for _ in range(2):  # the second run's image when the first compiled the model
        full, full_stdout, full_stderr = _robodyn(argv, tmp_path, quick_path=False)
        assert full == {"code": 0, "numpy": True}, full_stderr
    written = (tmp_path / out).read_bytes() if out else None
    if out:
        (tmp_path / out).unlink()
    fast, fast_stdout, fast_stderr = _robodyn(argv, tmp_path)
    assert fast == {"code": 0, "numpy": False}, fast_stderr
    assert fast_stdout == full_stdout and fast_stderr == full_stderr == ""
    if out:
        assert (tmp_path / out).read_bytes() == written


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """The images of ``simulate joint`` and ``simulate pendulum --t-final 3`` in the suite's cache, made once for the
    tests below (not in each: two processes of ~0.6 s per test, ~15 s of the file's 40)."""
    for model in ("joint", "pendulum"):
        _robodyn(["simulate", model, "--t-final", "3"], tmp_path_factory.mktemp("images"), quick_path=False)


@pytest.mark.parametrize("argv, code", [
    (["simulate", "pendulum", "--t-final", "pi", "--out", "c.csv"], 0),  # an expression
    (["simulate", "pendulum", "--t-final=3", "--out", "c.csv"], 0),  # the = form
    (["simulate", "pendulum", "--t-final", "3", "--out", "c.npz"], 0),  # NPZ
    (["simulate", "pendulum", "--t-final", "3", "--x0", "nosuch=1"], 2),  # an unknown state: the full path's error
    (["simulate", "pendulum", "--t-final", "3", "--x0", "theta=1,theta=2"], 2),  # given twice
    (["simulate", "pendulum", "--t-final", "-3"], 2),  # t_final before t0
    (["simulate", "pendulum", "--t-final", "3", "--points", "1"], 2),
    (["simulate", "pendulum", "--t-final", "3", "--out", "file/c.csv"], 2),  # a path under a file
    (["simulate", "pendulum", "--t-final", "3", "--x0", "theta=180"], 0),  # an angle beyond a turn: warned about
    (["simulate", "pendulum", "--t-final", "3", "--x0", "theta=30deg"], 0),  # degrees
])
def test_what_the_quick_path_does_not_take_goes_the_full_way(argv, code, tmp_path, images):
    (tmp_path / "file").write_text("", encoding="utf-8")
    fast, fast_stdout, fast_stderr = _robodyn(argv, tmp_path)
    full, full_stdout, full_stderr = _robodyn(argv, tmp_path, quick_path=False)
    assert fast == full == {"code": code, "numpy": True if code == 0 else None}  # an error exits before the print
    assert (fast_stdout, fast_stderr) == (full_stdout, full_stderr)


@pytest.mark.parametrize("argv, code", [
    (["simulate", "joint", "--t-final", "3", "--input", "u=step(0.5, 0, 1)", "--out", "c.csv"], 0),  # a signal
    (["simulate", "joint", "--t-final", "3", "--input", "u=1", "--input", "u=2"], 2),  # given twice
    (["simulate", "joint", "--t-final", "3", "--input", "u=1,q=2"], 2),  # one signal per --input
    (["simulate", "joint", "--t-final", "3", "--input", "torque=1"], 2),  # an unknown input
    (["simulate", "joint", "--t-final", "3", "--input", "u=1e999"], 2),  # not finite
    (["simulate", "pendulum", "--t-final", "3", "--input", "tau=1"], 0),  # an adaptive run's image has no inputs
])
def test_an_exact_image_takes_constant_inputs_and_nothing_else(argv, code, tmp_path, images):
    fast, fast_stdout, fast_stderr = _robodyn(argv, tmp_path)
    full, full_stdout, full_stderr = _robodyn(argv, tmp_path, quick_path=False)
    assert fast == full == {"code": code, "numpy": True if code == 0 else None}
    assert (fast_stdout, fast_stderr) == (full_stdout, full_stderr)


def test_a_grid_whose_exponential_is_not_kept_runs_the_full_way_once(tmp_path):
    """In a cache of its own (in the suite's, another test may have kept the exponential of the second grid)."""
    cache = tmp_path / "cache"
    first, second = (["simulate", "joint", "--t-final", t, "--x0", "q=1", "--out", "-"] for t in ("3", "7"))
    _robodyn(first, tmp_path, quick_path=False, cache=cache)
    assert _robodyn(first, tmp_path, cache=cache)[0]["numpy"] is False
    full = _robodyn(second, tmp_path, cache=cache)  # the step of 7 / 1000 s has no exponential yet: the full path
    assert full[0]["numpy"] is True
    fast = _robodyn(second, tmp_path, cache=cache)
    assert fast[0]["numpy"] is False and fast[1] == full[1]
    assert _robodyn(first, tmp_path, cache=cache)[0]["numpy"] is False  # both grids' exponentials are kept


def test_the_quick_path_is_off_with_its_variable(tmp_path):
    argv = ["simulate", "pendulum", "--t-final", "3"]
    _robodyn(argv, tmp_path, quick_path=False)
    assert _robodyn(argv, tmp_path)[0]["numpy"] is False
    assert _robodyn(argv, tmp_path, quick_path=False)[0]["numpy"] is True


# --- the parts, in this process ---------------------------------------------------------------------------------
ARGVS = [
    ["pendulum", "--t-final", "10"], ["--t-final", "10", "pendulum", "--x0", "theta=1"],
    ["pendulum", "--t0", "-1", "--t-final", "-.5"], ["pendulum", "--t-final", "1", "--out", "-"],
    ["pendulum", "--t-final", "1", "--x0", "a=1", "--x0", "b=2", "--method", "dop853", "--points", "5"],
    ["pendulum", "--t-final", "-1e-3"], ["pendulum", "--t-final", "1", "--t-final", "2"], ["pendulum", "--t-f", "1"],
    ["pendulum", "--t-final"], ["pendulum", "--x0", "-theta=1", "--t-final", "1"], ["a", "b", "--t-final", "1"],
    ["pendulum", "--t-final", "1", "--", "x"], ["pendulum", "--plot", "p.png", "--t-final", "1"],
    ["joint", "--input", "u=1", "--t-final", "1", "--input", "u=-2"], ["joint", "--input", "-u=1", "--t-final", "1"],
    ["joint", "--t-final", "1", "--input"],
]


@pytest.mark.parametrize("argv", ARGVS, ids=" ".join)
def test_what_the_quick_path_reads_of_a_command_line_is_what_argparse_reads(argv):
    """Where the quick path takes a command line, argparse takes it too, with the same values."""
    given = quick._options(argv)
    if given is None:
        return
    try:
        args = build_parser("simulate").parse_args(["simulate", *argv])
    except SystemExit:
        pytest.fail(f"the quick path took {argv}, which argparse refuses")
    assert isinstance(args, argparse.Namespace)
    assert args.model == given["model"] and args.x0 == given.get("--x0") and args.input == given.get("--input")
    for option in ("--t-final", "--t0", "--method", "--rtol", "--atol", "--points", "--out"):
        value = getattr(args, option[2:].replace("-", "_"))
        assert (None if value is None else str(value)) == (None if option not in given else
                                                          str(given[option]).lower() if option == "--method" else
                                                          given[option])


@pytest.mark.parametrize("span", [(0.0, 10.0), (-1.0, 3.5), (0.1, 0.30000000000000004), (1e-9, 1e9), (-7.25, -7.0)])
@pytest.mark.parametrize("count", [2, 3, 57, 101, 1000, 9999])
def test_output_times_are_numpys_linspace_to_the_bit(span, count):
    assert quick._grid(str(count), *span, 8) == np.linspace(*span, count).tolist()


@pytest.mark.parametrize("texts, expected", [
    (["theta=1"], [1.0, 0.0]), (["theta=1, theta_dot = -2e-3"], [1.0, -2e-3]), (["theta_dot=-0"], [0.0, 0.0]),
    (["theta=1", "theta_dot=2"], [1.0, 2.0]), (["theta=pi"], None), (["theta=1,theta=2"], None), (["theta=1,"], None),
    (["omega=1"], None), (["theta=atan2(1, 2)"], None), (["theta"], None), (["theta=nan"], None),
    (["theta=7"], None), (["theta=90deg"], None),  # beyond a turn (the full path may warn), a unit
])
def test_initial_states_are_plain_numbers_given_once_to_known_states(texts, expected):
    assert quick._initial(texts, ["theta", "theta_dot"]) == expected


@pytest.mark.parametrize("texts, expected", [
    ([], [0.0, 0.0]), (["u=1"], [1.0, 0.0]), (["v = -2.5e-3", " u=0"], [0.0, -2.5e-3]), (["u=1,v=2"], None),
    (["u=1", "u=2"], None), (["w=1"], None), (["u=step(0, 0, 1)"], None), (["u"], None), (["u=inf"], None),
])
def test_constant_inputs_are_plain_numbers_one_per_option(texts, expected):
    assert quick._inputs(texts, ["u", "v"]) == expected
