"""The recipe "A block (for diagrams)" of docs/dev/architecture.md followed literally by a newcomer: on a copy of
the package, add blocks as one file each in ``robodyn/diagrams/blocks/`` and nothing else, then use them from
``make_block``, ``robodyn.blocks`` and a ``kind: diagram`` file, in a fresh interpreter that imports the copy."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).resolve().parents[3] / "src" / "robodyn"
RECIPE = Path(__file__).resolve().parents[3] / "docs" / "dev" / "architecture.md"

#: y = u + c: a block without states (the recipe: no ``discrete``, ``sampled`` holds its equation).
OFFSET = '''"""The ``offset`` block: y = u + c, no states."""

from __future__ import annotations

from robodyn.diagrams.blocks.common import number, sampled
from robodyn.diagrams.blocks.registry import BlockKind
from robodyn.model.kinds.symbolic import SymbolicSystem


def offset(c: float = 0.0, *, sample: float | None = None, name: str = "offset") -> SymbolicSystem:
    """y = u + c."""
    return sampled(SymbolicSystem([], ["u"], [], parameters={"c": number(c, "c", name)}, outputs={"y": "u + c"},
                                  name=name), sample)


BLOCK = BlockKind("offset", offset)
'''

#: x' = -a x + u, y = x: a block with a state and its exact discrete form x <- e^(-aT) x + (1 - e^(-aT))/a u.
LEAK = '''"""The ``leak`` block: x' = -a x + u, y = x; sampled, x <- e^(-aT) x + (1 - e^(-aT))/a u."""

from __future__ import annotations

import sympy

from robodyn.diagrams.blocks.common import discrete_form, number, sampled
from robodyn.diagrams.blocks.registry import BlockKind
from robodyn.model.expr import symbol
from robodyn.model.kinds.discrete import DiscreteSystem
from robodyn.model.kinds.symbolic import SymbolicSystem


def leak(a: float = 1.0, *, sample: float | None = None, name: str = "leak") -> SymbolicSystem:
    """x' = -a x + u, y = x."""
    rate = number(a, "a", name, positive=True)
    return sampled(SymbolicSystem(["x"], ["u"], {"x": "-a*x + u"}, parameters={"a": rate}, outputs={"y": "x"},
                                  name=name), sample, discrete)


def discrete(continuous: SymbolicSystem, period: float) -> DiscreteSystem:
    """x <- e^(-aT) x + (1 - e^(-aT))/a u."""
    decay = sympy.exp(-symbol("a") * sympy.Float(period))
    return discrete_form(continuous, period, [decay * symbol("x") + (1 - decay) / symbol("a") * symbol("u")])


BLOCK = BlockKind("leak", leak, discrete)
'''

DIAGRAM = """name: shifted_leak
kind: diagram
blocks:
  shift: {model: offset, parameters: {c: 2.0}}
  leak: {model: leak, parameters: {a: 4.0}SAMPLE}
connect:
  - shift.y -> leak.u
inputs: {u: shift.u}
outputs: {y: leak.y}
"""

SCRIPT = """
import json, sys
import numpy as np
import robodyn
import robodyn.blocks
from robodyn.diagrams.blocks.library import BLOCKS, make_block

shift = make_block("offset", {"c": 2.0})
answer = {
    "file": robodyn.__file__,
    "blocks": list(BLOCKS),
    "in_all": [n in robodyn.blocks.__all__ for n in ("offset", "leak")],
    "same": robodyn.blocks.offset is BLOCKS["offset"] and robodyn.blocks.leak is BLOCKS["leak"],
    "offset_y": float(shift.h_raw(0.0, np.zeros(0), np.array([1.5]), shift.parameter_vector())[0]),
    "held": type(make_block("offset", {"c": 2.0, "sample": 0.1})).__name__,
}
for label in ("continuous", "sampled"):
    model = robodyn.load(sys.argv[1 if label == "continuous" else 2])
    trajectory = robodyn.simulate(model, 1.0, {"leak.x": 0.0}, u={"u": 1.0}, rtol=1e-10, atol=1e-12)
    line = robodyn.linearize(model, np.zeros(1), u=[0.0])
    answer[label] = {"states": list(model.states), "t": trajectory.t.tolist(), "x": trajectory.x[:, 0].tolist(),
                     "A": np.asarray(line.A).tolist(), "B": np.asarray(line.B).tolist(),
                     "C": np.asarray(line.C).tolist(), "D": np.asarray(line.D).tolist()}
print(json.dumps(answer))
"""


def _files(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> SHA-256), caches left out."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def test_the_recipe_names_the_one_file_a_block_is() -> None:
    text = RECIPE.read_text(encoding="utf-8")
    recipe = text[text.index("**A block (for diagrams).**"):text.index("**A file format.**")]
    assert "`src/robodyn/diagrams/blocks/<name>.py`, and no other source file changes" in recipe
    assert 'BLOCK = BlockKind("<name>", <name>, discrete)' in recipe and "discrete(continuous, period)" in recipe


def test_a_newcomer_adds_blocks_as_one_file_each(tmp_path: Path) -> None:
    copy = tmp_path / "src" / "robodyn"
    shutil.copytree(SOURCE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = _files(copy)
    folder = copy / "diagrams" / "blocks"  # where the recipe says
    (folder / "offset.py").write_text(OFFSET, encoding="utf-8")
    (folder / "leak.py").write_text(LEAK, encoding="utf-8")
    after = _files(copy)
    changed = {k for k in after if before.get(k) != after[k]} | (set(before) - set(after))
    assert changed == {os.path.join("diagrams", "blocks", "offset.py"), os.path.join("diagrams", "blocks", "leak.py")}

    (tmp_path / "continuous.yaml").write_text(DIAGRAM.replace("SAMPLE", ""), encoding="utf-8")
    (tmp_path / "sampled.yaml").write_text(DIAGRAM.replace("SAMPLE", ", sample: 0.1"), encoding="utf-8")
    # the suite's cache and its prepared kernels (a cache of its own compiled them again: ~15 s cold); the copy only
    # adds block files, whose generated code is cached by its content
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "continuous.yaml"),
                           str(tmp_path / "sampled.yaml")], capture_output=True, text=True, timeout=600, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[-1])
    assert answer["file"] == str(copy / "__init__.py")
    assert answer["blocks"] == ["gain", "sum", "integrator", "first_order", "pid", "saturation", "lti", "dc_motor",
                                "quantizer", "leak", "offset"]  # the library's order, new blocks after by name
    assert answer["in_all"] == [True, True] and answer["same"]
    assert answer["offset_y"] == 3.5 and answer["held"] == "DiscreteSystem"

    a, c, u = 4.0, 2.0, 1.0  # x' = -a x + (u + c) from 0
    continuous = answer["continuous"]
    assert continuous["states"] == ["leak.x"]
    t, x = np.array(continuous["t"]), np.array(continuous["x"])
    np.testing.assert_allclose(x, (u + c) / a * (1 - np.exp(-a * t)), atol=1e-8)
    assert (continuous["A"], continuous["B"], continuous["C"], continuous["D"]) == ([[-a]], [[1.0]], [[1.0]],
                                                                                    [[0.0]])
    sampled = answer["sampled"]  # exact at the instants k T, T = 0.1: the held input is constant
    t, x = np.array(sampled["t"]), np.array(sampled["x"])
    instants = np.isclose(t / 0.1, np.round(t / 0.1), atol=1e-9)
    assert instants.sum() >= 10
    np.testing.assert_allclose(x[instants], (u + c) / a * (1 - np.exp(-a * t[instants])), atol=1e-12)
    decay = np.exp(-a * 0.1)
    np.testing.assert_allclose(sampled["A"], [[decay]], rtol=1e-14)
    np.testing.assert_allclose(sampled["B"], [[(1 - decay) / a]], rtol=1e-14)
