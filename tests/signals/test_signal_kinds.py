"""The table of kind codes (robodyn.signals.kinds): the one source the packer and the evaluator template share.

The template must name every kind it compares against (no bare numbers), and for every kind in the
table the packed row evaluated by the evaluator (jitted and interpreted) must equal the Signal's own value.
"""

from __future__ import annotations

import ast

import numpy as np
import pytest

from robodyn.signals import (
    EVALUATOR_SOURCE_PATH,
    Constant,
    Pulse,
    Ramp,
    Sine,
    Step,
    Table,
    WhiteNoise,
    kinds,
    load_evaluator,
    resolve_inputs,
)

# one example signal per kind name of the table, with the times worth checking (edges and their sides)
EXAMPLES = {
    "constant": (Constant(-2.5), [-1.0, 0.0, 3.0]),
    "step": (Step(1.0, -1.0, 2.0), [0.0, np.nextafter(1.0, 0.0), 1.0, 4.0]),
    "ramp": (Ramp(1.0, 2.0, 0.5), [0.0, np.nextafter(1.0, 0.0), 1.0, 1.75, 3.0]),
    "sine": (Sine(1.5, 0.7, 0.3, -0.2), [-1.0, 0.0, 0.4, 2.9]),
    "pulse": (Pulse(0.5, 0.25, 3.0, 1.0, period=1.0), [0.0, 0.5, 0.6, 0.75, 1.5, np.nextafter(1.75, 0.0), 2.2]),
    "table_zoh": (Table([0.0, 1.0, 3.0], [1.0, -2.0, 4.0]), [-1.0, 0.0, 0.5, 1.0, 2.9, 3.0, 5.0]),
    "table_linear": (Table([0.0, 1.0, 3.0], [1.0, -2.0, 4.0], "linear"), [-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 5.0]),
    "white_noise": (WhiteNoise(0.3, 0.25, 11, mean=0.1, start=0.5), [-1.0, 0.0, 0.5, np.nextafter(0.75, 0.0), 0.75,
                                                                     1e6]),
}


def _kernel_tree() -> ast.Module:
    return ast.parse(EVALUATOR_SOURCE_PATH.read_text(encoding="utf-8"))


def _imported_kinds(tree: ast.Module) -> dict[str, str]:
    """The template's alias -> name imported from robodyn.signals.kinds."""
    return {
        alias.asname or alias.name: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "robodyn.signals.kinds"
        for alias in node.names
    }


def _kind_variables(function: ast.FunctionDef) -> set[str]:
    """Names assigned from ``codes[..., 1]`` (the kind column) in ``function``."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript):
            index = node.value.slice
            column = index.elts[-1] if isinstance(index, ast.Tuple) else index
            if isinstance(node.value.value, ast.Name) and node.value.value.id == "codes":
                if isinstance(column, ast.Constant) and column.value == 1:
                    names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return names


def test_the_table_is_consistent():
    named = {name: getattr(kinds, name) for name in kinds.__all__ if isinstance(getattr(kinds, name), int)}
    named.pop("N_COEF")
    assert {name.lower(): code for name, code in named.items()} == dict(kinds.KIND_CODES)
    assert sorted(kinds.KIND_CODES.values()) == list(range(len(kinds.KIND_CODES)))  # distinct, 0..k-1
    assert set(kinds.HELD_KINDS) <= set(kinds.KIND_CODES.values())
    assert set(EXAMPLES) == set(kinds.KIND_CODES)  # a new kind needs an example below


def test_the_kernel_compares_kinds_only_against_names_from_the_table():
    tree = _kernel_tree()
    imported = _imported_kinds(tree)
    assert imported and all(hasattr(kinds, name) and name in kinds.__all__ for name in imported.values())
    (function,) = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "eval_inputs"]
    kind_names = _kind_variables(function)
    assert kind_names, "eval_inputs no longer reads the kind column codes[j, 1]"
    compared = set()
    for node in ast.walk(function):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        if not any(isinstance(op, ast.Name) and op.id in kind_names for op in operands):
            continue
        for op in operands:
            if isinstance(op, ast.Name) and op.id in kind_names:
                continue
            assert isinstance(op, ast.Name), f"line {node.lineno}: compare the kind with a name from kinds.py"
            assert op.id in imported, f"line {node.lineno}: {op.id} is not imported from robodyn.signals.kinds"
            compared.add(op.id)
    assert compared == set(imported)  # every imported code is used in a comparison
    # no kind table of its own: the template assigns no module-level numbers
    numbers = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, int | float)
    ]
    assert not numbers, f"module-level numbers at lines {[node.lineno for node in numbers]}: import them from kinds.py"


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "interpreted"])
@pytest.mark.parametrize("kind", sorted(kinds.KIND_CODES, key=kinds.KIND_CODES.__getitem__))
def test_packer_and_kernel_agree_on_every_kind(kind, compiled):
    signal, times = EXAMPLES[kind]
    inputs = resolve_inputs(("u", "v"), {"v": 0.75 * signal})
    codes, coef, *_ = inp = inputs.compiled()
    assert codes.tolist() == [[1, kinds.KIND_CODES[kind]]]  # the packer used this kind's code
    assert coef.shape == (1, kinds.N_COEF) and coef[0, 0] == 0.75
    evaluator = load_evaluator(compiled)
    for t in times:
        out = np.full(2, np.nan)
        evaluator(float(t), float(t), np.zeros(0), inp, out)
        expected = 0.75 * signal(float(t))
        assert out[0] == 0.0
        assert out[1] == pytest.approx(expected, rel=1e-15, abs=1e-15), (kind, t)
    held = inputs.compiled()[5][1] == 1
    assert held == (kinds.KIND_CODES[kind] in kinds.HELD_KINDS)
