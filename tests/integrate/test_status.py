"""Kernel status codes: one table of codes and messages, used by name in the kernel template and the engine."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest
from tests.integrate import kernel_harness as kh

import robodyn
from robodyn.base.errors import NumericalError
from robodyn.integrate import status
from robodyn.integrate.kernels.module import KERNEL_TEMPLATE, kernel_module_text
from robodyn.integrate.kernels.run import _failure
from robodyn.integrate.status import (
    CODES,
    FAILURES,
    MAX_STEPS,
    NON_FINITE,
    OK,
    SECOND_ORDER_HINT,
    STEP_COLLAPSE,
    TERMINATED,
    failure_message,
)
from robodyn.signals import kinds

FIELDS = {"method", "t", "state", "max_steps", "hint"}  # what failure_message fills in
TEMPLATE_TREE = ast.parse(Path(KERNEL_TEMPLATE).read_text(encoding="utf-8"))


# --- the table ------------------------------------------------------------------------------------------
def test_codes_are_distinct_named_integers() -> None:
    assert dict(CODES) == {"OK": 0, "TERMINATED": 1, "STEP_COLLAPSE": -1, "MAX_STEPS": -2, "NON_FINITE": -3}
    assert all(getattr(status, name) == code and type(code) is int for name, code in CODES.items())
    assert len(set(CODES.values())) == len(CODES)


def test_every_failure_code_has_a_message() -> None:
    failures = {code for code in CODES.values() if code < 0}
    assert set(FAILURES) == failures == {STEP_COLLAPSE, MAX_STEPS, NON_FINITE}
    assert OK not in FAILURES and TERMINATED not in FAILURES


@pytest.mark.parametrize("code", sorted(FAILURES))
def test_each_message_says_what_happened_and_what_to_try(code: int) -> None:
    failure = FAILURES[code]
    assert failure.happened.startswith("{method}: ") and "{t:.10g}" in failure.happened
    assert re.match(r"(try|check) \S", failure.remedy), failure.remedy  # an action, not a diagnosis
    assert failure.template == f"{failure.happened}; {failure.remedy}"
    used = {field for _, field, _, _ in string.Formatter().parse(failure.template) if field}
    assert used <= FIELDS
    message = failure_message(code, method="dopri5", t=1.5, state="q", max_steps=10, second_order=True)
    assert "{" not in message and "}" not in message


def test_messages_keep_their_wording() -> None:
    kwargs = {"method": "dopri5", "t": 0.25, "max_steps": 1000}
    assert failure_message(STEP_COLLAPSE, state="q", second_order=False, **kwargs) == (
        "dopri5: the step size collapsed at t = 0.25 (state q): the problem is stiff or singular there; "
        "try --method radau (method='radau')")
    assert failure_message(MAX_STEPS, state=None, second_order=False, **kwargs) == (
        "dopri5: more than 1000 steps before t = 0.25: the problem may be stiff; "
        "try --method radau (method='radau') or allow more steps (max_steps)")
    assert failure_message(NON_FINITE, state="q_dot", second_order=True, **kwargs) == (
        "dopri5: a non-finite value appeared at t = 0.25 (state q_dot): the solution blows up or the mass matrix "
        "is not positive definite there; check the model and the initial state, or shorten the time span")
    assert SECOND_ORDER_HINT not in failure_message(NON_FINITE, state=None, second_order=False, **kwargs)


def test_engine_errors_format_from_the_table() -> None:
    joint = robodyn.load("joint")  # second order: the mass-matrix hint applies
    error = _failure(joint, NON_FINITE, 0.125, 1, 100, "rk4")
    assert isinstance(error, NumericalError)
    assert str(error) == failure_message(NON_FINITE, method="rk4", t=0.125, state="q_dot", max_steps=100,
                                         second_order=True)
    assert "(state" not in str(_failure(joint, STEP_COLLAPSE, 0.125, -1, 100, "rk4"))  # no state known


# --- the kernel template uses the names -----------------------------------------------------------------
def _status_values(node: ast.expr, position: int | None) -> list[ast.expr]:
    """The expressions ``node`` assigns to the target at ``position`` of a tuple (None: the whole value)."""
    if isinstance(node, ast.IfExp):
        return _status_values(node.body, position) + _status_values(node.orelse, position)
    if position is not None and isinstance(node, ast.Tuple):
        return [node.elts[position]]
    return [node]


def _is_status(node: ast.expr) -> bool:
    """``status``/``statuses[...]``: the names the template keeps status codes in."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Name) and node.id in ("status", "statuses")


def test_the_template_imports_the_codes_and_defines_none() -> None:
    imported = {alias.name for node in TEMPLATE_TREE.body if isinstance(node, ast.ImportFrom)
                and node.module == "robodyn.integrate.status" for alias in node.names}
    assert imported == set(CODES)
    assigned = {target.id for node in ast.walk(TEMPLATE_TREE) if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name)}
    assert not assigned & set(CODES)


def test_the_template_compares_statuses_by_name() -> None:
    comparisons = [node for node in ast.walk(TEMPLATE_TREE) if isinstance(node, ast.Compare)
                   and any(_is_status(side) for side in (node.left, *node.comparators))]
    assert comparisons  # the check below looks at something
    for node in comparisons:
        others = [side for side in (node.left, *node.comparators) if not _is_status(side)]
        assert all(isinstance(side, ast.Name) and side.id in CODES for side in others), ast.unparse(node)


def test_the_template_sets_statuses_by_name() -> None:
    values = []
    for node in ast.walk(TEMPLATE_TREE):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if _is_status(target):
                values += _status_values(node.value, None)
            elif isinstance(target, ast.Tuple):
                values += [value for k, element in enumerate(target.elts) if _is_status(element)
                           for value in _status_values(node.value, k)]
    assert len(values) >= 5  # OK at the start, the three failures and TERMINATED
    code_names = [value.id for value in values if isinstance(value, ast.Name) and value.id in CODES]
    assert set(code_names) == set(CODES)
    # Anything else is a buffer or a copy of another status variable, never a number.
    literals = [value for value in values if isinstance(value, ast.Constant | ast.UnaryOp)]
    assert not literals, [ast.unparse(value) for value in literals]


def test_loaded_templates_see_the_codes() -> None:
    module = kh.load_interpreted("status_codes_interpreted")
    assert all(getattr(module, name) == code for name, code in CODES.items())
    run = kh.adaptive(module, "dopri5", [kh.JOINT, 0.01, 0.1, 1.0], (0.0, 5.0), [0.0, 0.0], max_steps=10)
    assert run.status == MAX_STEPS


@pytest.mark.parametrize("backend", ["compiled", "interpreted"])
def test_simulate_reports_a_kernel_failure_from_the_table(backend: str) -> None:
    with pytest.raises(NumericalError) as raised:
        robodyn.simulate(robodyn.load("joint"), 5.0, None, 1.0, method="dopri5", max_steps=10, backend=backend)
    message = str(raised.value)
    assert message.startswith("dopri5: more than 10 steps before t = ")
    assert message.endswith("; " + FAILURES[MAX_STEPS].remedy)


# --- generated modules change with the numbers ----------------------------------------------------------
def test_module_text_spells_out_the_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    text = kernel_module_text()
    assert all(f"{name!r}: {code}" in text for name, code in CODES.items())
    assert all(f"{name!r}: {code}" in text for name, code in kinds.KIND_CODES.items())
    monkeypatch.setattr(status, "CODES", {**CODES, "MAX_STEPS": -7})
    changed_status = kernel_module_text()
    monkeypatch.setattr(kinds, "KIND_CODES", {**kinds.KIND_CODES, "sine": 9})
    changed_kinds = kernel_module_text()
    assert len({text, changed_status, changed_kinds}) == 3  # so the content hash, the cache's key, changes
