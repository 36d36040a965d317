"""Work bounded before it starts (issue 45, item 6): what an input asks for is counted from the input alone and
refused beyond a named limit, with an InputError naming the quantity, the limit and the fix (exit code 2 on the
command line, one line). Each case trips before the work: the tests run in milliseconds where the defects ran for
minutes, allocated tens of GiB or ended in ValueError/OverflowError.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn
from cli_run import one_line, run  # tests/cli_run.py
from robodyn.base.budget import check_count
from robodyn.base.errors import InputError
from robodyn.diagrams.blocks.library import MAX_BLOCK_PORTS, MAX_LTI_ENTRIES, lti, make_block
from robodyn.diagrams.build import MAX_DIAGRAM_BLOCKS, MAX_DIAGRAM_DEPTH
from robodyn.diagrams.diagram import Diagram


def test_check_count_names_the_quantity_the_limit_and_the_fix():
    assert check_count(10.0, 10, "steps", "fewer") == 10
    for count, shown in ((11, "11"), (2.5e9, "2,500,000,000"), (float("inf"), "inf"), (1e300, "1e+300"),
                         (float("nan"), "nan")):
        with pytest.raises(InputError) as caught:
            check_count(count, 10, "the steps", "take fewer", "simulate")
        assert str(caught.value) == f"simulate: the steps would be {shown}, more than the limit of 10: take fewer"


# --- diagrams that include diagrams ----------------------------------------------------------------------------
def fan(folder: Path, levels: int, fan_out: int) -> Path:
    """``levels`` small diagram files, each including the next ``fan_out`` times; the last holds one lag: the
    first expands to fan_out ** (levels - 1) blocks."""
    for level in range(1, levels):
        blocks = "".join(f"  b{k}: {{model: d{level + 1}.yaml, default: 0}}\n" for k in range(fan_out))
        (folder / f"d{level}.yaml").write_text(f"name: d{level}\nkind: diagram\nblocks:\n{blocks}")
    (folder / f"d{levels}.yaml").write_text("name: leaf\nkind: diagram\nblocks:\n  g: {model: first_order, "
                                             "default: 0}\n")
    return folder / "d1.yaml"


def test_diagram_files_including_each_other_fan_wise_are_refused_before_building(tmp_path, capsys):
    """Defect: 8 files each including the next 8 times (8^6 blocks) ran for minutes. The count is made from the
    files' text; none of the 262,144 blocks is built."""
    top = fan(tmp_path, 7, 8)
    with pytest.raises(InputError) as caught:
        robodyn.load(str(top))
    assert (f"the blocks it expands to (those of the diagrams inside it counted) would be 262,144, more than the "
            f"limit of {MAX_DIAGRAM_BLOCKS:,}") in str(caught.value)
    code, out, err = run(capsys, "simulate", str(top), "--t-final", "1")
    assert code == 2 and out == "" and "would be 262,144" in one_line(err)


def test_a_diagram_just_within_the_block_limit_loads(tmp_path):
    top = fan(tmp_path, 3, 4)  # 16 blocks: the count agrees with the model built
    model = robodyn.load(str(top))
    assert model.n_states == 16 and len(model.states) == 16


def test_diagrams_nested_too_deep_are_refused(tmp_path, capsys):
    top = fan(tmp_path, MAX_DIAGRAM_DEPTH + 1, 1)  # a chain of files, one block each: depth 17
    message = f"the levels of diagrams inside diagrams would be more than the limit of {MAX_DIAGRAM_DEPTH} " \
              f"({tmp_path / 'd17.yaml'} is at level 17)"
    with pytest.raises(InputError) as caught:
        robodyn.load(str(top))
    assert message in str(caught.value)
    code, _, err = run(capsys, "show", str(top))
    assert code == 2 and message in one_line(err)
    inner: robodyn.Model = make_block("first_order")  # the same through the Python API, counted exactly
    for level in range(MAX_DIAGRAM_DEPTH):
        inner = Diagram({"b": inner}, defaults={"b": 0.0}, name=f"level{level + 1}")
    with pytest.raises(InputError, match=rf"diagram 'level17': the levels of diagrams inside diagrams would be 17, "
                                         rf"more than the limit of {MAX_DIAGRAM_DEPTH}"):
        Diagram({"b": inner}, defaults={"b": 0.0}, name="level17")
    deepest = robodyn.load(str(tmp_path / "d2.yaml"))  # 16 levels: within the limit
    assert deepest.states == ("b0." * (MAX_DIAGRAM_DEPTH - 1) + "g.y",)


def test_diagram_objects_shared_fan_wise_are_refused_before_building():
    """The Python API: one diagram object used 8 times at every level expands as the files do; each level counts
    its blocks from its blocks' counts, before wiring anything."""
    inner: robodyn.Model = make_block("first_order")
    for level in range(3):  # 8, 64, 512 blocks
        inner = Diagram({f"b{k}": inner for k in range(8)}, defaults={f"b{k}": 0.0 for k in range(8)},
                        name=f"level{level}")
    with pytest.raises(InputError, match=r"diagram 'level3': the blocks it expands to .* would be 4,096, more than "
                                         r"the limit of 1,000"):
        Diagram({f"b{k}": inner for k in range(8)}, defaults={f"b{k}": 0.0 for k in range(8)}, name="level3")


def test_a_diagram_file_that_lists_itself_many_times_is_counted_once_per_use(tmp_path):
    """The count follows each use of a file (a file used twice counts twice), but reads each file once."""
    top = fan(tmp_path, 3, 40)  # 40 * 40 = 1,600 blocks from two small files
    with pytest.raises(InputError, match=r"would be 1,600, more than the limit of 1,000"):
        robodyn.load(str(top))


# --- library blocks ------------------------------------------------------------------------------------------
def test_a_sum_with_20000_signs_is_refused(tmp_path, capsys):
    """Defect: a sum block with 20,000 signs ran for minutes (and 3,000 overflowed Python's recursion)."""
    with pytest.raises(InputError, match=rf"block 'sum': its inputs \(one per sign\) would be 20,000, more than the "
                                         rf"limit of {MAX_BLOCK_PORTS}"):
        make_block("sum", {"signs": "+" * 20_000})
    path = tmp_path / "many.yaml"
    path.write_text(f"name: many\nkind: diagram\nblocks:\n  s: {{model: sum, parameters: {{signs: '{'+' * 20_000}'}},"
                    " default: 0}\n")
    code, _, err = run(capsys, "show", str(path))
    assert code == 2 and "would be 20,000, more than the limit of 100" in one_line(err)
    assert make_block("sum", {"signs": "+-" * (MAX_BLOCK_PORTS // 2)}).n_inputs == MAX_BLOCK_PORTS


def test_an_lti_block_too_large_to_compile_is_refused():
    """A dense 60-state lti took 35 s to build and evaluate; its 3,720 entries are refused, a 200-pole transfer
    function too, before sympy sees them."""
    with pytest.raises(InputError, match=rf"nonzero matrix entries would be 3,720, more than the limit of "
                                         rf"{MAX_LTI_ENTRIES:,}"):
        lti(A=np.ones((60, 60)), B=np.ones((60, 1)), C=np.ones((1, 60)))
    with pytest.raises(InputError, match=r"its states would be 199, more than the limit of 100"):
        lti(num=[1.0], den=[1.0] * 200)
    with pytest.raises(InputError, match=r"its inputs would be 101"):
        lti(D=np.ones((1, 101)))
    block = lti(A=-np.eye(30), B=np.ones((30, 1)), C=np.ones((1, 30)))  # 90 entries: built
    assert block.n_states == 30


# --- sampled blocks and fixed steps over long horizons ---------------------------------------------------------
SAMPLED = """name: sampled_loop
kind: diagram
blocks:
  plant: joint
  pi: {{model: pid, parameters: {{kp: 2, ki: 1}}, sample: {period}}}
connect:
  - pi.u -> plant.u
  - plant.q -> pi.y
inputs: {{r: pi.r}}
outputs: {{q: plant.q}}
"""


@pytest.mark.parametrize(("period", "t_final", "count"), [("1e-300", "1", "1e+300"),
                                                          ("1e-7", "1000", "10,000,000,000")])
def test_sample_instants_beyond_the_step_budget_are_refused_before_allocating(tmp_path, capsys, period, t_final,
                                                                               count):
    """Defect: 'Maximum allowed size exceeded' (ValueError) and a 74.5 GiB MemoryError."""
    path = tmp_path / "sampled.yaml"
    path.write_text(SAMPLED.format(period=period))
    message = (f"simulate: the sample instants of dt = {float(period):g} s over [0, {float(t_final):g}] would be "
               f"{count}, more than the limit of 1,000,000")
    code, _, err = run(capsys, "simulate", str(path), "--t-final", t_final)
    assert code == 2 and message in one_line(err)
    with pytest.raises(InputError, match=r"raise simulate's max_steps"):
        robodyn.simulate(robodyn.load(str(path)), float(t_final))


def test_a_sample_period_too_short_for_the_times_is_refused(tmp_path):
    path = tmp_path / "sampled.yaml"
    path.write_text(SAMPLED.format(period="1e-7"))
    with pytest.raises(InputError, match=r"the sample period 1e-07 s is below 1e-09 of the times \(\|t\| up to "
                                         r"1e\+06 s\)"):
        robodyn.simulate(robodyn.load(str(path)), (1e6, 1e6 + 0.01))
    path.write_text(SAMPLED.format(period="2e-3"))  # twice the shortest period at these times: accepted
    run_ = robodyn.simulate(robodyn.load(str(path)), (1e6, 1e6 + 0.01))
    assert run_.t[0] == 1e6 and run_.t[-1] == 1e6 + 0.01


def test_a_hyperperiod_of_too_many_base_periods_is_refused_before_linearizing(tmp_path):
    path = tmp_path / "rates.yaml"
    path.write_text(SAMPLED.format(period="1e-9").replace("outputs:", "outputs:").replace(
        "  pi: ", "  slow: {model: gain, parameters: {k: 1}, sample: 1.0}\n  pi: ").replace(
        "  - plant.q -> pi.y\n", "  - plant.q -> slow.u\n  - slow.y -> pi.y\n"))
    model = robodyn.load(str(path))
    with pytest.raises(InputError, match=r"the base periods of 1e-09 s in its hyperperiod would be 1,000,000,000, "
                                         r"more than the limit of 100,000"):
        robodyn.linearize(model, np.zeros(model.n_states), np.zeros(model.n_inputs))


def test_fixed_steps_beyond_the_limit_are_refused_without_overflow(capsys):
    """Defect: dt = 1e-320 over 1e10 s ended in 'internal error OverflowError'."""
    code, _, err = run(capsys, "simulate", "pendulum", "--method", "rk4", "--dt", "1e-320", "--t-final", "1e10")
    assert code == 2
    assert "simulate: the steps of dt = 9.99989e-321 s over [0, 1e+10] would be inf, more than the limit of " \
           "50,000,000: choose a larger dt or a shorter span" in one_line(err)
    with pytest.raises(InputError, match=r"would be 100,000,000, more than the limit of 50,000,000"):
        robodyn.simulate(robodyn.load("pendulum"), 1000.0, method="rk4", dt=1e-5)


# --- iterations ------------------------------------------------------------------------------------------------
def test_identify_with_no_evaluations_is_refused(capsys, tmp_path):
    """Defect: --max-evaluations 0 ended in 'internal error ValueError'."""
    data = tmp_path / "run.csv"
    data.write_text("t,q,u\n0,0,0\n1,0.1,1\n2,0.2,1\n")
    for given in ("0", "-3"):
        code, _, err = run(capsys, "identify", "joint", "--data", str(data), "--fit", "k", "--max-evaluations",
                           given)
        assert code == 2 and f"--max-evaluations {given}: give the number of simulations the fit may run, at " \
                              "least 1" in one_line(err)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InputError, match=r"max_evaluations must be a whole number >= 1"):
            robodyn.identify(robodyn.load("joint"), str(data), ["k"], max_evaluations=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(("options", "phrase"), [
    ({"harmonics": 1000}, "harmonics=1000 must be a whole number from 1 to 100"),
    ({"samples": 10**7}, "the samples per period would be 10,000,000, more than the limit of 20,000"),
    ({"maxiter": 0}, "maxiter=0 must be a whole number of iterations >= 1"),
])
def test_an_excitation_design_beyond_its_limits_is_refused(options, phrase):
    from robodyn.identification.excitation import design_excitation

    arm = robodyn.load("examples/two_link_arm.urdf")
    with pytest.raises(InputError, match=phrase.replace("(", r"\(")):
        design_excitation(arm, velocity_limits=1.0, **options)


def test_a_nested_diagram_asks_each_block_for_its_units_once():
    """Defect: Diagram.units asked a block up to three times, so a diagram nested 18 deep asked its leaf 262,143
    times (`robodyn show` of a chain of diagram files ran for minutes)."""
    leaf = make_block("dc_motor")
    asked: list[int] = []
    leaf_units = leaf.units

    def units_counted() -> dict[str, str]:
        asked.append(1)
        return leaf_units()

    object.__setattr__(leaf, "units", units_counted)
    model: robodyn.Model = leaf
    for level in range(12):
        model = Diagram({"b": model}, defaults={"b": 0.0}, name=f"level{level}")
    units = model.units()
    assert len(asked) == 1
    assert units == {f"{'b.' * 12}{name}": unit for name, unit in leaf_units().items()}
    assert units[f"{'b.' * 12}tau"] == "N m"
