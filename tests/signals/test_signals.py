"""Input signals (robodyn.signals): closed-form values, edges, breakpoints, tables, parsing, resolution."""

from __future__ import annotations

import ast
import builtins
import itertools
import math
import os
import re
import subprocess

import numpy as np
import pytest

from robodyn.base.errors import ExpressionError, InputError, ShapeError, UnknownNameError
from robodyn.files.signal_text import parse_input_assignments, parse_signal
from robodyn.signals import (
    KIND_CODES,
    Constant,
    FunctionSignal,
    Inputs,
    Pulse,
    Ramp,
    Scaled,
    Signal,
    Sine,
    StateFeedback,
    Step,
    Sum,
    Table,
    resolve_inputs,
)

WHERE = "--input u"

# --- each signal against its closed form -----------------------------------------------------------------


def test_constant_scalar_and_array():
    c = Constant(2.5)
    assert c(3.0) == 2.5 and isinstance(c(3.0), float)
    values = c(np.zeros((2, 3)))
    assert values.shape == (2, 3) and np.all(values == 2.5)
    assert c.breakpoints(-1, 1).size == 0


def test_step_is_right_continuous():
    s = Step(1.0, -2.0, 3.0)
    assert s(np.nextafter(1.0, 0.0)) == -2.0
    assert s(1.0) == 3.0  # the value at the step time is the "after" value
    np.testing.assert_array_equal(s(np.array([-5.0, 0.999, 1.0, 7.0])), [-2.0, -2.0, 3.0, 3.0])
    np.testing.assert_array_equal(s.breakpoints(0.0, 2.0), [1.0])
    assert s.breakpoints(1.0, 2.0).size == 0  # strictly inside only
    assert s.breakpoints(0.0, 1.0).size == 0


def test_ramp_closed_form():
    r = Ramp(2.0, 0.5, initial=1.0)
    t = np.array([0.0, 1.999, 2.0, 3.0, 10.0])
    expected = np.where(t < 2.0, 1.0, 1.0 + 0.5 * (t - 2.0))
    np.testing.assert_array_equal(r(t), expected)
    assert r(4.0) == 2.0
    np.testing.assert_array_equal(r.breakpoints(0.0, 5.0), [2.0])
    assert Ramp(0.0, 2.0)(-1.0) == 0.0  # initial defaults to 0


def test_sine_frequency_is_in_hertz():
    s = Sine(2.0, 0.5, phase=0.3, offset=1.0)
    for t in (0.0, 0.7, 1.3, 12.0):
        assert s(t) == pytest.approx(2.0 * math.sin(2 * math.pi * 0.5 * t + 0.3) + 1.0, rel=1e-15)
    assert s(0.25) == pytest.approx(s(0.25 + 2.0), abs=1e-14)  # period 1/f = 2 s
    assert s.omega == pytest.approx(math.pi)
    assert s.breakpoints(0, 10).size == 0


def test_pulse_single():
    p = Pulse(1.0, 0.5, 2.0, base=-1.0)
    t = np.array([0.0, 0.999, 1.0, 1.25, 1.4999, 1.5, 3.0])
    np.testing.assert_array_equal(p(t), [-1.0, -1.0, 1.0, 1.0, 1.0, -1.0, -1.0])
    np.testing.assert_array_equal(p.breakpoints(0.0, 2.0), [1.0, 1.5])
    np.testing.assert_array_equal(p.breakpoints(1.2, 2.0), [1.5])


def test_pulse_periodic_edges_are_exact():
    p = Pulse(0.25, 0.25, 1.0, period=1.0)
    np.testing.assert_array_equal(p.breakpoints(0.0, 3.0), [0.25, 0.5, 1.25, 1.5, 2.25, 2.5])
    np.testing.assert_array_equal(p(np.array([0.0, 0.25, 0.5, 1.25, 1.4, 1.5, 2.3])), [0, 1, 0, 1, 1, 0, 1])
    assert p(-0.75) == 0.0  # no repeats before t0


@pytest.mark.parametrize(("t0", "width", "period"), [(0.1, 0.1, 0.3), (0.7, 0.01, 0.1), (-3.3, 1e-3, 0.37)])
def test_pulse_periodic_value_at_every_edge_is_the_after_value(t0, width, period):
    """With periods that are not binary fractions, the edges returned must still switch exactly there."""
    p = Pulse(t0, width, 1.0, period=period)
    edges = p.breakpoints(t0 - 1.0, t0 + 40 * period)
    assert edges.size == 80
    after = p(edges)
    np.testing.assert_array_equal(after, np.tile([1.0, 0.0], 40))  # rising, falling, rising, ...
    before = p(np.nextafter(edges, -np.inf))
    np.testing.assert_array_equal(before, np.tile([0.0, 1.0], 40))


def test_table_zoh_and_linear_closed_form():
    times, values = [0.0, 1.0, 3.0], [2.0, 4.0, -2.0]
    zoh, lin = Table(times, values), Table(times, values, "linear")
    t = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 9.0])
    np.testing.assert_array_equal(zoh(t), [2.0, 2.0, 2.0, 4.0, 4.0, -2.0, -2.0])
    np.testing.assert_allclose(lin(t), [2.0, 2.0, 3.0, 4.0, 1.0, -2.0, -2.0], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(zoh.breakpoints(-1.0, 2.0), [0.0, 1.0])
    np.testing.assert_array_equal(lin.breakpoints(0.0, 3.0), [1.0])
    assert Table([5.0], [7.0], "linear")(0.0) == 7.0


def test_table_arrays_are_read_only_copies():
    times = np.array([0.0, 1.0])
    table = Table(times, [1.0, 2.0])
    times[0] = -5.0
    assert table.times[0] == 0.0
    with pytest.raises(ValueError, match="read-only"):
        table.values[0] = 3.0


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Table([0.0, 2.0, 1.0], [1, 2, 3]), "strictly increasing"),
        (lambda: Table([0.0, 1.0, 1.0], [1, 2, 3]), "strictly increasing"),
        (lambda: Table([0.0, 1.0], [1.0]), "one value per time"),
        (lambda: Table([0.0, np.nan], [1.0, 2.0]), "not finite"),
        (lambda: Table([], []), "at least one row"),
        (lambda: Table([0.0, 1.0], [1.0, 2.0], "cubic"), "'zoh' or 'linear'"),
        (lambda: Table([[0.0, 1.0]], [[1.0, 2.0]]), "one-dimensional"),
        (lambda: Pulse(0.0, 0.0, 1.0), "width must be > 0"),
        (lambda: Pulse(0.0, 1.0, 1.0, period=1.0), "greater than its width"),
        (lambda: Step(np.nan, 0.0, 1.0), "finite"),
        (lambda: Sine(1.0, math.inf), "finite"),
        (lambda: Ramp("0", 1.0), "real number"),
        (lambda: Constant(True), "real number"),
        (lambda: Scaled(2.0, "x"), "Signal or a number"),
        (lambda: Sum(()), "at least one term"),
        (lambda: FunctionSignal(3.0), "callable"),
    ],
)
def test_invalid_values_raise_input_error(build, message):
    with pytest.raises(InputError, match=re.escape(message)):
        build()


def test_times_must_be_finite_numbers():
    with pytest.raises(InputError, match="finite"):
        Step(0, 0, 1)(np.array([0.0, np.nan]))
    with pytest.raises(InputError, match="interval end"):
        Step(0, 0, 1).breakpoints(1.0, 0.0)


# --- arithmetic --------------------------------------------------------------------------------------------


def test_sums_flatten_and_evaluate():
    a, b, c, d = Step(0, 0, 1), Ramp(1, 2), Sine(1, 1), Constant(3)
    total = (a + b) + (c + d)
    assert isinstance(total, Sum) and total.terms == (a, b, c, d)
    t = np.linspace(-1, 3, 41)
    np.testing.assert_array_equal(total(t), a(t) + b(t) + c(t) + d(t))
    assert (a + 2.0)(1.0) == 3.0 and (2.0 + a)(1.0) == 3.0


def test_scalings_and_differences():
    s = Step(1.0, 1.0, 5.0)
    t = np.array([0.0, 2.0])
    np.testing.assert_array_equal((2 * s)(t), [2.0, 10.0])
    np.testing.assert_array_equal((s * 2)(t), [2.0, 10.0])
    np.testing.assert_array_equal((s / 4)(t), [0.25, 1.25])
    np.testing.assert_array_equal((-s)(t), [-1.0, -5.0])
    np.testing.assert_array_equal((1 - s)(t), [0.0, -4.0])
    np.testing.assert_array_equal((s - 1)(t), [0.0, 4.0])
    np.testing.assert_array_equal((s - s)(t), [0.0, 0.0])
    assert isinstance(np.float64(2.0) * s, Signal)  # numpy scalars defer to the signal
    nested = 3 * (2 * s)
    assert isinstance(nested, Scaled) and nested.gain == 6.0 and nested.signal is s


def test_invalid_arithmetic():
    s = Step(0, 0, 1)
    with pytest.raises(TypeError):
        s * s
    with pytest.raises(TypeError):
        1 / s
    with pytest.raises(TypeError):
        s + "1"
    with pytest.raises(InputError, match="divided by zero"):
        s / 0


def test_breakpoints_of_a_sum_are_the_sorted_union():
    s = Step(2.0, 0, 1) + Ramp(0.5, 1) + 3 * Pulse(1.0, 0.5, 1) + Table([0.0, 2.0, 4.0], [0, 1, 0]) + Sine(1, 1)
    np.testing.assert_array_equal(s.breakpoints(0.0, 3.0), [0.5, 1.0, 1.5, 2.0])
    np.testing.assert_array_equal(s.breakpoints(0.5, 1.5), [1.0])


def test_sine_terms_and_affine_pieces_of_a_simple_sum():
    s = 2 * Sine(3.0, 0.5, 0.1, offset=1.0) + Ramp(1.0, 4.0) - Step(2.0, 0.0, 1.0)
    assert s.sine_terms() == [(6.0, math.pi, 0.1)]
    breaks, values, slopes = s.affine_pieces(0.0, 3.0)
    np.testing.assert_array_equal(breaks, [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(values, [2.0, 2.0, 5.0])  # offset 2*1, ramp 0 / 0 / 4, step 0 / 0 / -1
    np.testing.assert_array_equal(slopes, [0.0, 4.0, 4.0])
    with pytest.raises(InputError, match="t0 < t1"):
        s.affine_pieces(1.0, 1.0)


def test_function_signal():
    f = FunctionSignal(lambda t: t * t)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0, 3.0])), [1.0, 4.0, 9.0])
    assert not f.is_compilable and not (Step(0, 0, 1) + f).is_compilable and Step(0, 0, 1).is_compilable
    for call in (lambda: f.affine_pieces(0, 1), f.sine_terms, lambda: (2 * f + Sine(1, 1)).affine_pieces(0, 1)):
        with pytest.raises(InputError, match=re.escape("no exact form: use method='dopri5'")):
            call()
    with pytest.raises(InputError, match="finite"):
        FunctionSignal(lambda t: math.nan)(0.0)
    with pytest.raises(InputError, match="real number"):
        FunctionSignal(lambda t: "x")(0.0)


# --- state feedback -------------------------------------------------------------------------------------------


def test_state_feedback_law():
    K = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    x_ref = np.array([0.1, 0.2, 0.3])
    fb = StateFeedback(K, x_ref, [Step(1.0, 0.0, 2.0), 0.5])
    x = np.array([1.0, -1.0, 2.0])
    for t in (0.0, 1.0):
        expected = np.array([2.0 if t >= 1.0 else 0.0, 0.5]) - K @ (x - x_ref)
        np.testing.assert_allclose(fb(t, x), expected, rtol=1e-15)
    np.testing.assert_array_equal(fb.breakpoints(0, 2), [1.0])
    plain = StateFeedback([[2.0]])
    assert plain(0.0, [3.0])[0] == -6.0  # x_ref and u_ref default to zero
    with pytest.raises(ShapeError, match="x_ref"):
        StateFeedback(K, [0.0, 1.0])
    with pytest.raises(ShapeError, match="u_ref"):
        StateFeedback(K, x_ref, [1.0])
    with pytest.raises(ShapeError, match="2-dimensional"):
        StateFeedback([1.0, 2.0])
    with pytest.raises(ShapeError, match="state has shape"):
        fb(0.0, [1.0, 2.0])


# --- CSV tables -------------------------------------------------------------------------------------------------


def write(tmp_path, text, name="u.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_csv_good_file(tmp_path):
    path = write(tmp_path, "t,u\n# comment\n0, 1.5\n1,2\n\n2.5,-1e-1\n")
    table = Table.from_csv(path)
    np.testing.assert_array_equal(table.times, [0.0, 1.0, 2.5])
    np.testing.assert_array_equal(table.values, [1.5, 2.0, -0.1])
    assert table.interpolation == "zoh"
    assert Table.from_csv(path, interpolation="linear")(0.5) == 1.75


def test_csv_choose_column(tmp_path):
    path = write(tmp_path, "time,left,right\n0,1,10\n1,2,20\n")
    np.testing.assert_array_equal(Table.from_csv(path, "right").values, [10.0, 20.0])
    with pytest.raises(InputError, match="choose one"):
        Table.from_csv(path)
    with pytest.raises(UnknownNameError, match="did you mean 'right'"):
        Table.from_csv(path, "rigth")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("t,u\n0,1\n1,abc\n", r"u\.csv:3: column 'u': 'abc' is not a number"),
        ("t,u\n0,1\n1,nan\n", r"u\.csv:3: column 'u': 'nan' is not finite"),
        ("t,u\n0,1\n1,2,3\n", r"u\.csv:3: expected 2 comma-separated values, got 3"),
        ("t,u\n0,1\n2,2\n1,3\n", r"u\.csv:4: time 1 is not after the previous time 2 \(line 3\)"),
        ("t,u\n0,1\n0,3\n", r"u\.csv:3: .*strictly increasing"),
        ("x,u\n0,1\n", r"u\.csv:1: the first column must be the time"),
        ("0,1\n1,2\n", r"u\.csv:1: the first column must be the time"),
        ("t,u\n", r"u\.csv: no data rows"),
        ("", r"u\.csv: empty table"),
        ("t\n0\n", r"u\.csv:1: value columns none"),
    ],
)
def test_csv_errors_name_file_and_line(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=message):
        Table.from_csv(path)


def test_csv_missing_file(tmp_path):
    with pytest.raises(InputError, match=r"cannot read table .*missing\.csv"):
        Table.from_csv(tmp_path / "missing.csv")


# --- text parser -------------------------------------------------------------------------------------------


def equal_on_grid(a: Signal, b: Signal) -> bool:
    t = np.linspace(-2.0, 6.0, 801)
    return bool(np.allclose(a(t), b(t), rtol=1e-14, atol=1e-14))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", Constant(1.0)),
        ("2*pi", Constant(2 * math.pi)),
        ("-sqrt(4)/2", Constant(-1.0)),
        ("step(1, 0, 2)", Step(1, 0, 2)),
        ("ramp(0.5, 2)", Ramp(0.5, 2)),
        ("ramp(0.5, 2, -1)", Ramp(0.5, 2, -1)),
        ("sine(1, 2)", Sine(1, 2)),
        ("sine(1, 2, pi/2)", Sine(1, 2, math.pi / 2)),
        ("sine(1, 2, pi/2, 3)", Sine(1, 2, math.pi / 2, 3)),
        ("pulse(1, 0.5, 2)", Pulse(1, 0.5, 2)),
        ("pulse(1, 0.5, 2, -1)", Pulse(1, 0.5, 2, -1)),
        ("pulse(1, 0.5, 2, -1, 2)", Pulse(1, 0.5, 2, -1, 2)),
    ],
)
def test_parse_each_form(text, expected):
    parsed = parse_signal(text, where=WHERE)
    assert parsed == expected


def test_parse_combinations():
    parsed = parse_signal("step(0,0,1) + 0.5*sine(1, 2)", where=WHERE)
    assert equal_on_grid(parsed, Step(0, 0, 1) + 0.5 * Sine(1, 2))
    parsed = parse_signal("  2*(step(1, 0, 1) - ramp(0, 1)) / 4 + 1 - -pulse(0, 1, 1)", where=WHERE)
    assert equal_on_grid(parsed, 2 * (Step(1, 0, 1) - Ramp(0, 1)) / 4 + 1 + Pulse(0, 1, 1))
    assert equal_on_grid(parse_signal("(1 + 2) * step(0, 0, 1)", where=WHERE), 3 * Step(0, 0, 1))


def test_parse_tables(tmp_path, monkeypatch):
    write(tmp_path, "t,u\n0,0\n2,4\n")
    write(tmp_path, "t,a,b\n0,1,10\n1,2,20\n", name="two, cols.csv")
    linear = parse_signal("table(u.csv, linear)", where=WHERE, base_dir=tmp_path)
    assert isinstance(linear, Table) and linear.interpolation == "linear" and linear(1.0) == 2.0
    zoh = parse_signal(f"table({tmp_path / 'u.csv'})", where=WHERE)
    assert isinstance(zoh, Table) and zoh(1.0) == 0.0
    quoted = parse_signal("2*table('two, cols.csv', column=b) + 1", where=WHERE, base_dir=tmp_path)
    assert quoted(0.5) == 21.0
    monkeypatch.chdir(tmp_path)
    assert parse_signal("table( u.csv ) + step(1, 0, 1)", where=WHERE)(2.0) == 5.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("table(missing.csv)", "cannot read table"),
        ("table(u.csv, cubic)", "unknown table() option 'cubic'"),
        ("table(u.csv", "unclosed table("),
        ("table()", "table() needs a file path"),
        ("table(u.csv) * table(u.csv)", "product of two signals"),
    ],
)
def test_parse_table_errors(tmp_path, text, message):
    write(tmp_path, "t,u\n0,0\n2,4\n")
    with pytest.raises(InputError, match=re.escape(message)) as info:
        parse_signal(text, where=WHERE, base_dir=tmp_path)
    assert str(info.value).startswith(WHERE)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("step(0, 0)", "step() takes 3 arguments (t0, before, after), got 2"),
        ("ramp(1)", "ramp() takes 2 to 3 arguments (t0, slope[, initial]), got 1"),
        ("sine(1, 2, 3, 4, 5)", "sine() takes 2 to 4 arguments (amplitude, frequency[, phase[, offset]]), got 5"),
        ("pulse(0, 1)", "pulse() takes 3 to 5 arguments (t0, width, amplitude[, base[, period]]), got 2"),
        ("step(t0=0, before=0, after=1)", "keyword arguments are not allowed"),
        ("step(x, 0, 1)", "unknown name"),
        ("step(t, 0, 1)", "unknown name"),
        ("step", "used without calling it: write step(t0, before, after)"),
        ("step + 1", "used without calling it"),
        ("foo(1)", "unknown function"),
        ("square(0, 1)", "unknown function"),
        ("sin(step(0, 0, 1))", "sin() of a signal is not allowed"),
        ("step(step(0, 0, 1), 0, 1)", "argument 1 of step() must be a number"),
        ("step(0, 0, 1) * step(0, 0, 1)", "product of two signals"),
        ("1 / step(0, 0, 1)", "division by a signal"),
        ("step(0, 0, 1) / 0", "division by zero"),
        ("step(0, 0, 1) ** 2", "operator not allowed"),
        ("step(0, 0, 1).real", "attribute access not allowed"),
        ("step(0, 0, 1)[0]", "subscripts not allowed"),
        ("step(0, 0, 1) > 1", "comparisons not allowed"),
        ("pulse(0, -1, 1)", "width must be > 0"),
        ("pulse(0, 1, 1, 0, 0.5)", "greater than its width"),
        ("9**9**9", "'9**9**9'"),
        ("'1'", "strings not allowed"),
        ("step(0, 0, 1", "invalid syntax"),
        ("", "empty signal"),
        ("   ", "empty signal"),
    ],
)
def test_parse_errors_name_where_token_and_form(text, message):
    with pytest.raises(ExpressionError, match=re.escape(message)) as info:
        parse_signal(text, where=WHERE)
    assert str(info.value).startswith(WHERE)


@pytest.fixture
def tripwires(monkeypatch):
    """Make eval/exec/os.system/subprocess raise, and allow compile() only for AST-only parsing."""
    calls: list[str] = []

    def tripped(name):
        def trap(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"{name} was called during parsing")

        return trap

    real_compile = builtins.compile

    def ast_only_compile(source, filename, mode, flags=0, *args, **kwargs):
        if not flags & ast.PyCF_ONLY_AST:
            calls.append("compile")
            raise AssertionError("compile() to code was called during parsing")
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "eval", tripped("eval"))
    monkeypatch.setattr(builtins, "exec", tripped("exec"))
    monkeypatch.setattr(builtins, "compile", ast_only_compile)
    monkeypatch.setattr(os, "system", tripped("os.system"))
    monkeypatch.setattr(subprocess, "Popen", tripped("subprocess.Popen"))
    return calls


HOSTILE = [
    "__import__('os').system('touch {file}')",
    "__import__('os')",
    "open('{file}', 'w')",
    "eval(\"open('{file}', 'w')\")",
    "exec('1')",
    "step(0, 0, 1).__class__.__init__.__globals__",
    "step(0, 0, open('{file}', 'w'))",
    "step(0, 0, 1) + open('{file}', 'w')",
    "().__class__.__bases__[0].__subclasses__()",
    "(lambda: open('{file}', 'w'))()",
    "[step(0, 0, 1) for _ in ()]",
    "globals()",
    "table(u.csv).__class__",
]


@pytest.mark.parametrize("template", HOSTILE)
def test_hostile_text_executes_nothing(template, tripwires, tmp_path):
    write(tmp_path, "t,u\n0,0\n")
    target = tmp_path / "robodyn_pwned"
    with pytest.raises(ExpressionError, match=re.escape(WHERE)):
        parse_signal(template.format(file=target), where=WHERE, base_dir=tmp_path)
    assert not target.exists()
    assert tripwires == []


def test_tripwires_still_allow_parsing(tripwires):
    assert parse_signal("step(0, 0, 2*pi) - 0.5*sine(1, 2)", where=WHERE)(0.0) == pytest.approx(2 * math.pi)
    assert tripwires == []


def test_parse_input_assignments():
    parsed = parse_input_assignments(["u=step(1, 0, 1)", " f = 2*pi "], ("u", "f", "g"))
    assert parsed == {"u": Step(1, 0, 1), "f": Constant(2 * math.pi)}
    with pytest.raises(UnknownNameError, match=r"unknown input 'uu'.*did you mean 'u'"):
        parse_input_assignments(["uu=1"], ("u", "f"))
    with pytest.raises(ExpressionError, match="expected NAME=SIGNAL"):
        parse_input_assignments(["step(0, 0, 1)"], ("u",))
    with pytest.raises(ExpressionError, match="given twice"):
        parse_input_assignments(["u=1", "u=2"], ("u",))
    with pytest.raises(ExpressionError, match=re.escape("--input f: step() takes 3 arguments")):
        parse_input_assignments(["f=step(1)"], ("u", "f"))


# --- resolving a model's inputs -------------------------------------------------------------------------


def test_resolve_none_numbers_and_arrays():
    zero = resolve_inputs(("a", "b"), None)
    np.testing.assert_array_equal(zero.evaluate(1.0), [0.0, 0.0])
    assert zero.is_compilable and zero.names == ("a", "b")
    np.testing.assert_array_equal(resolve_inputs(("a",), 2.5).evaluate(0.0), [2.5])
    both = resolve_inputs(("a", "b"), np.array([1.0, -2.0]))
    np.testing.assert_array_equal(both.evaluate_many([0.0, 1.0]), [[1.0, -2.0], [1.0, -2.0]])
    assert all(isinstance(s, Constant) for s in both.signals)
    assert resolve_inputs((), None).evaluate(0.0).shape == (0,)
    with pytest.raises(ShapeError, match=r"expected \(2,\)"):
        resolve_inputs(("a", "b"), [1.0, 2.0, 3.0])
    with pytest.raises(ShapeError):
        resolve_inputs(("a", "b"), 1.0)
    with pytest.raises(InputError, match="finite"):
        resolve_inputs(("a",), [np.inf])
    with pytest.raises(InputError, match="inputs must be"):
        resolve_inputs(("a",), "step(0, 0, 1)")


def test_resolve_mapping():
    inputs = resolve_inputs(("force", "torque", "v"), {"torque": Step(1, 0, 3), "force": 2.0, "v": lambda t: t})
    np.testing.assert_array_equal(inputs.evaluate(2.0), [2.0, 3.0, 2.0])
    np.testing.assert_array_equal(inputs.evaluate(0.5), [2.0, 0.0, 0.5])
    assert isinstance(inputs.signals[2], FunctionSignal) and not inputs.is_compilable
    missing = resolve_inputs(("force", "torque"), {"force": 1.0})
    np.testing.assert_array_equal(missing.evaluate(0.0), [1.0, 0.0])  # left-out inputs are 0
    with pytest.raises(UnknownNameError, match=r"unknown input 'torqe'.*did you mean 'torque'"):
        resolve_inputs(("force", "torque"), {"torqe": 1.0})
    with pytest.raises(InputError, match="input 'force'"):
        resolve_inputs(("force",), {"force": "1"})


def test_resolve_signal_and_sequence():
    one = resolve_inputs(("u",), Step(0, 0, 1))
    assert one.signals == (Step(0, 0, 1),)
    with pytest.raises(ShapeError, match="one signal given for 2 inputs"):
        resolve_inputs(("u", "v"), Step(0, 0, 1))
    seq = resolve_inputs(("u", "v"), [Ramp(0, 1), 3.0])
    np.testing.assert_array_equal(seq.evaluate(2.0), [2.0, 3.0])
    with pytest.raises(ShapeError, match="expected 2"):
        resolve_inputs(("u", "v"), [Ramp(0, 1)])


def test_resolve_state_feedback():
    fb = StateFeedback([[1.0, 2.0]], [1.0, 0.0], [Step(1, 0, 1)])
    inputs = resolve_inputs(("u",), fb)
    assert inputs.signals == (None,) and inputs.feedback is fb and inputs.depends_on_state
    np.testing.assert_allclose(inputs.evaluate(2.0, [2.0, 1.0]), [1.0 - (1.0 + 2.0)])
    xs = np.array([[0.0, 0.0], [2.0, 1.0]])
    np.testing.assert_allclose(inputs.evaluate_many([0.0, 2.0], xs), [[1.0], [-2.0]])
    np.testing.assert_array_equal(inputs.breakpoints(0.0, 3.0), [1.0])
    with pytest.raises(InputError, match="pass the state x"):
        inputs.evaluate(0.0)
    with pytest.raises(ShapeError, match="one state row per time"):
        inputs.evaluate_many([0.0], xs)
    with pytest.raises(ShapeError, match="1 rows but the model has 2 inputs"):
        resolve_inputs(("u", "v"), fb)


def test_resolve_callable_of_time_and_state():
    inputs = resolve_inputs(("u", "v"), lambda t, x: [t, -x[0]])
    assert not inputs.is_compilable and inputs.function is not None and inputs.signals == (None, None)
    np.testing.assert_array_equal(inputs.evaluate(2.0, [3.0]), [2.0, -3.0])
    np.testing.assert_array_equal(inputs.evaluate_many([0.0, 1.0], [[1.0], [2.0]]), [[0.0, -1.0], [1.0, -2.0]])
    assert inputs.breakpoints(0.0, 1.0).size == 0
    with pytest.raises(InputError, match="interpreted path"):
        inputs.compiled()
    with pytest.raises(ShapeError, match=r"returned shape \(3,\)"):
        resolve_inputs(("u", "v"), lambda t, x: [1, 2, 3]).evaluate(0.0, [0.0])
    with pytest.raises(InputError, match="non-finite"):
        resolve_inputs(("u",), lambda t, x: math.nan).evaluate(0.0, [0.0])


def test_inputs_breakpoints_union():
    inputs = resolve_inputs(("u", "v"), {"u": Step(2, 0, 1), "v": Pulse(0.5, 0.25, 1) + Step(2, 1, 0)})
    np.testing.assert_array_equal(inputs.breakpoints(0.0, 5.0), [0.5, 0.75, 2.0])


# --- compiled representation -------------------------------------------------------------------------------


def test_compiled_arrays_have_fixed_dtypes_and_kind_codes():
    inputs = resolve_inputs(
        ("a", "b"),
        {
            "a": Constant(2) + Step(0, 1, 2) + Ramp(0, 1) + Sine(1, 1),
            "b": -Pulse(0, 1, 1, period=2) + Table([0, 1], [1, 2]) + 3 * Table([0, 1, 2], [0, 1, 0], "linear"),
        },
    )
    codes, coef, tdata, K, xref, flags = inputs.compiled(n_states=3)
    expected_kinds = ["constant", "step", "ramp", "sine", "pulse", "table_zoh", "table_linear"]
    assert codes.tolist() == [[0 if i < 4 else 1, KIND_CODES[k]] for i, k in enumerate(expected_kinds)]
    assert coef[4].tolist() == [-1.0, 0.0, 1.0, 1.0, 0.0, 2.0]
    assert coef[5].tolist() == [1.0, 0.0, 2.0, 0.0, 0.0, 0.0] and coef[6, :3].tolist() == [3.0, 4.0, 3.0]
    assert tdata.tolist() == [0.0, 1.0, 1.0, 2.0, 0.0, 1.0, 2.0, 0.0, 1.0, 0.0]
    # flags: no feedback; not held between breakpoints (a ramp, a sine and a linear table vary inside them)
    assert K.shape == (2, 3) and not K.any() and xref.shape == (3,) and flags.tolist() == [0, 0]
    for array, dtype, ndim in zip(
        (codes, coef, tdata, K, xref, flags), ("i8", "f8", "f8", "f8", "f8", "i8"), (2, 2, 1, 2, 1, 1)
    ):
        assert array.dtype == np.dtype(dtype) and array.ndim == ndim
        assert array.flags.c_contiguous and array.flags.writeable


def test_compiled_empty_and_feedback_shapes():
    codes, coef, tdata, K, xref, flags = resolve_inputs((), None).compiled()
    assert codes.shape == (0, 2) and coef.shape == (0, 6) and tdata.shape == (0,) and K.shape == (0, 0)
    fb = StateFeedback(np.eye(2), [1.0, 2.0])
    *_, K, xref, flags = resolve_inputs(("u", "v"), fb).compiled(n_states=2)
    assert K.tolist() == [[1.0, 0.0], [0.0, 1.0]] and xref.tolist() == [1.0, 2.0] and flags.tolist() == [1, 0]
    assert K.flags.writeable  # a copy: numba would compile read-only arrays separately
    with pytest.raises(ShapeError, match="2 columns but the model has 3 states"):
        resolve_inputs(("u", "v"), fb).compiled(n_states=3)


@pytest.mark.parametrize(("u", "held"), [
    (None, 1), (2.0, 1), (Step(1, 0, 2) + Pulse(0, 1, 1, period=2), 1), (Table([0, 1], [1, 2]), 1),
    (Constant(1) + Ramp(0, 1), 0), (Sine(1, 1), 0), (Table([0, 1], [1, 2], "linear"), 0),
])
def test_compiled_flags_say_when_inputs_are_held_between_breakpoints(u, held):
    # Held inputs are constant between breakpoints, so the adaptive kernels evaluate them once per segment.
    inputs = resolve_inputs(("u",), u)
    flags = inputs.compiled(n_states=1)[5]
    assert flags.tolist() == [0, held]
    if held:  # the claim itself: constant between consecutive breakpoints
        edges = [0.0, *inputs.breakpoints(0.0, 5.0), 5.0]
        for lo, hi in itertools.pairwise(edges):
            inside = np.linspace(lo, hi, 7)[1:-1]
            values = [inputs.evaluate(t, np.zeros(1)) for t in inside]
            assert all(np.array_equal(v, values[0]) for v in values)


def test_inputs_is_a_frozen_dataclass():
    inputs = resolve_inputs(("u",), 1.0)
    assert isinstance(inputs, Inputs)
    with pytest.raises(AttributeError):
        inputs.names = ("v",)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Step(0, 0, 1).t0 = 2.0  # type: ignore[misc]


# --- keyword forms that cannot be mistaken (issue 23) --------------------------------------------------------
def test_step_ramp_and_pulse_take_the_switch_time_by_keyword():
    import warnings

    from robodyn.base.errors import RobodynWarning
    from robodyn.signals import Pulse, Ramp

    assert Step(at=1.0, before=0.0, after=2.0) == Step(1.0, 0.0, 2.0)
    assert Ramp(at=0.5, slope=2.0, initial=1.0) == Ramp(0.5, 2.0, 1.0)
    assert Pulse(at=1.0, width=0.5, amplitude=3.0) == Pulse(1.0, 0.5, 3.0)
    step = Step(at=1.0, before=0.0, after=2.0)
    assert step(np.array([0.5, 1.0, 1.5])).tolist() == [0.0, 2.0, 2.0]
    with pytest.raises(InputError, match="give the switch time once"):
        Step(1.0, 0.0, 2.0, at=1.0)
    with pytest.raises(InputError, match="give the switch time at="):
        Step(before=0.0, after=1.0)
    with pytest.raises(InputError, match="give the value after="):
        Step(at=1.0, before=0.0)
    with pytest.warns(RobodynWarning, match=r"is constant 0: the switch time comes first"):
        Step(1.0, 0.0, 0.0)  # the mistaken order of Step(t0, before, after): a silent zero input before
    with warnings.catch_warnings():
        warnings.simplefilter("error", RobodynWarning)
        Step(at=0.0, before=0.0, after=1.0)


def test_the_text_form_is_still_answered_at_its_old_place_with_a_warning():
    import robodyn.signals

    for name in ("parse_signal", "parse_input_assignments"):
        with pytest.warns(DeprecationWarning, match=f"robodyn.files.signal_text.{name}"):
            moved = getattr(robodyn.signals, name)
        assert moved is globals()[name]


def test_a_trajectory_gives_its_inputs_as_tables():
    """A run (a Trajectory, an optimal control solution) is an input: each of the model's inputs from the column of
    the same name, held between rows; as a whole or as a mapping value."""
    import robodyn

    pendulum = robodyn.load("pendulum")
    source = robodyn.simulate(pendulum, 1.0, {"theta": 0.2}, {"tau": Sine(0.5, 3.0)}, t_eval=np.linspace(0, 1, 21))
    table = Table(source.t, source.u[:, 0], "zoh")
    # interpreted: what is under test is how the inputs are read, not a kernel (no compile in a cold cache)
    expected = robodyn.simulate(pendulum, 1.0, {"theta": 0.0}, {"tau": table}, rtol=1e-10, atol=1e-12,
                                backend="interpreted")
    for given in (source, {"tau": source}):
        replay = robodyn.simulate(pendulum, 1.0, {"theta": 0.0}, given, rtol=1e-10, atol=1e-12, backend="interpreted")
        np.testing.assert_array_equal(replay.u, expected.u)
        np.testing.assert_allclose(replay.x, expected.x, rtol=0, atol=1e-12)  # the same tables: the same run
    arm = robodyn.load("two_link_arm")
    with pytest.raises(UnknownNameError, match=r"given as inputs has no input '\w+' \(its inputs: tau\)"):
        robodyn.simulate(arm, 1.0, None, source)
