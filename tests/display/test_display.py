"""Rich display in Jupyter: ``_repr_html_`` and ``_repr_latex_`` of models, linear systems, analyses and
trajectories, and the helpers in :mod:`robodyn.display`.

The HTML is checked to be well formed (every element closed in order), to contain the names and values,
and to escape user text; the LaTeX to hold the matrices as ``bmatrix`` with the right entries.
"""

from __future__ import annotations

import subprocess
import sys
from html.parser import HTMLParser

import matplotlib
import numpy as np
import pytest

import robodyn
from robodyn import display
from robodyn.linearization.equilibrium import OperatingPoint
from robodyn.results.trajectory import SimulationStats, Trajectory

matplotlib.use("Agg")

HOSTILE = "<script>alert('x')</script> & co"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _WellFormed(HTMLParser):
    """Collects the tags and the text, and fails on an end tag that does not close the innermost element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack, f"</{tag}> closes nothing"
        assert self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1]}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(html: str) -> _WellFormed:
    """The parser after reading ``html``, checked well formed (all elements closed)."""
    parser = _WellFormed()
    parser.feed(html)
    parser.close()
    assert not parser.stack, f"unclosed elements: {parser.stack}"
    assert html.startswith("<div") and html.endswith("</div>")
    return parser


def text_of(html: str) -> str:
    return " ".join(parsed(html).text)


def linear_system(name: str = "lin") -> robodyn.LinearSystem:
    return robodyn.LinearSystem([[0.0, 1.0], [-2.0, 0.1 + 0.2]], [[0.0], [1e-7]], states=["p", "v"], inputs=["F"],
                                name=name)


# --- helpers ---------------------------------------------------------------------------------------------
def test_numbers_are_compact() -> None:
    assert display.number(0.1 + 0.2) == "0.3"
    assert display.number(-0.0) == "0"
    assert display.number(123456789.0) == "1.23457e+08"
    assert display.number(complex(-1.0, -2.5)) == "-1 - 2.5j"
    assert display.latex_number(1e-7) == r"1 \cdot 10^{-7}"
    assert display.latex_number(2.5e12) == r"2.5 \cdot 10^{12}"
    assert display.latex_identifier("q_dot") == r"\mathrm{q\_dot}"


def test_table_escapes_every_cell() -> None:
    html = display.html_table([(HOSTILE, 1.5, True)], header=("<a>", "b", "c"), row_header=True)
    parser = parsed(f"<div>{html}</div>")
    assert "script" not in parser.tags and "a" not in parser.tags
    assert HOSTILE in " ".join(parser.text) and "1.5" in parser.text and "yes" in parser.text


def test_importing_display_does_not_import_matplotlib() -> None:
    code = "import sys, robodyn.display, robodyn.results.trajectory; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.strip() == "False"


# --- models ----------------------------------------------------------------------------------------------
def test_symbolic_model_shows_its_equations() -> None:
    model = robodyn.load("pendulum")
    latex = model._repr_latex_()
    assert latex == f"$${model.latex_text()}$$"
    html = model._repr_html_()
    text = text_of(html)
    for word in ("pendulum", model.kind, "theta", "theta_dot", "tau", "parameter", "default", "9.81"):
        assert word in text
    # issue 23: typeset as SVG in the HTML itself (front ends without MathJax showed "$$...$$" as source); the
    # LaTeX of each line stays in the SVG's title, for copying and screen readers
    assert "$$" not in html and html.count("<svg") == len(robodyn.display.formulas.formulas(model)) >= 3
    assert r"<title>M_{\theta} = l^{2}\,m</title>" in html
    assert "m/s^2" in text and "kg" in text  # the parameters with their units


def test_python_model_without_latex_falls_back_to_plain_text() -> None:
    model = robodyn.System(lambda t, x, u, p: [-p[0] * x[0]], states=["x"], parameters={"k": 2.0}, name=HOSTILE)
    assert model._repr_latex_() is None
    html = model._repr_html_()
    parser = parsed(html)
    assert "script" not in parser.tags and "<script>" not in html and "&lt;script&gt;" in html
    assert "pre" in parser.tags and "$$" not in html
    text = " ".join(parser.text)
    assert HOSTILE in text and model.show_text() in text and "python" in text


def test_linear_system_latex_has_the_matrices() -> None:
    latex = linear_system()._repr_latex_()
    assert latex.startswith("$$") and latex.endswith("$$")
    assert r"A &= \begin{bmatrix} 0 & 1 \\ -2 & 0.3 \end{bmatrix}" in latex
    assert r"B &= \begin{bmatrix} 0 \\ 1 \cdot 10^{-7} \end{bmatrix}" in latex
    assert r"C &= \begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}" in latex
    assert r"D &= \begin{bmatrix} 0 \\ 0 \end{bmatrix}" in latex
    assert "B &=" not in robodyn.LinearSystem([[-1.0]])._repr_latex_()  # no inputs: no empty B and D


def test_linear_system_html_labels_rows_and_columns_and_escapes_the_name() -> None:
    html = linear_system(HOSTILE)._repr_html_()
    parser = parsed(html)
    assert "script" not in parser.tags and "<script>" not in html
    assert parser.tags.count("table") == 5  # the summary, then A, B, C, D
    text = parser.text
    assert HOSTILE in " ".join(text)
    for cell in ("A", "B", "C", "D", "p", "v", "F", "0.3", "-2", "1e-07"):
        assert cell in text
    assert "0.30000000000000004" not in html
    assert "no inputs" in text_of(robodyn.LinearSystem([[-1.0]])._repr_html_())


def test_large_linear_system_is_cut_with_a_note() -> None:
    n = 15
    system = robodyn.LinearSystem(np.arange(n * n, dtype=float).reshape(n, n))
    latex = system._repr_latex_()
    a_matrix = latex.split("A &= ")[1].split(r"\end{bmatrix}")[0]
    rows = a_matrix.split(r" \\ ")
    assert len(rows) == display.MAX_ROWS and r"\vdots" in rows[-1] and r"\ddots" in rows[-1]
    assert all(row.count("&") == display.MAX_COLUMNS - 1 for row in rows)  # bmatrix takes at most 10 columns
    assert r"\cdots" in rows[0]
    html = system._repr_html_()
    text = text_of(html)
    rows_note = f"the first {display.MAX_ROWS} of {n} rows"
    assert f"showing {rows_note} and the first {display.MAX_COLUMNS} of {n} columns" in text
    cells = parsed(html).text
    assert "x12" in cells and "x13" not in cells  # rows (and columns) beyond the cut are left out
    assert "224" not in cells  # A[14, 14] = 224 is not shown


# --- analyses --------------------------------------------------------------------------------------------
def test_classification_html() -> None:
    result = robodyn.classify(robodyn.load("pendulum"))
    text = text_of(result._repr_html_())
    assert "nonlinear" in text and "order 2" in text and result.reasons["linear"] in text
    assert str(result).splitlines()[0] in text


def test_modes_html_and_latex() -> None:
    result = robodyn.modes(robodyn.LinearSystem([[0.0, 1.0], [-4.0, -0.4]]))
    latex = result._repr_latex_()
    assert r"\lambda_{1} &= -0.2 \pm 1.98997\,i" in latex and r"\zeta &= 0.1" in latex
    assert r"\text{asymptotically stable}" in latex
    text = text_of(result._repr_html_())
    assert "asymptotically stable" in text and "-0.2 ± 1.98997j" in text and result.explanation in text


def test_operating_point_html_and_latex() -> None:
    point = OperatingPoint(x=[1.0, 0.0], u=[0.5], states=("q", "q_dot"), inputs=("tau",), residual=1e-12,
                           converged=True, method="fixed")
    latex = point._repr_latex_()
    assert r"\mathrm{q} &= 1" in latex and r"\mathrm{q\_dot} &= 0" in latex and r"\mathrm{tau} &= 0.5" in latex
    text = parsed(point._repr_html_()).text
    for cell in ("q", "q_dot", "tau", "state", "input", "1", "0.5"):
        assert cell in text
    assert "operating point (fixed, converged)" in text


# --- trajectories ----------------------------------------------------------------------------------------
def test_trajectory_html_has_a_summary_and_a_small_svg() -> None:
    import matplotlib.pyplot as plt

    tr = robodyn.simulate(robodyn.load("joint"), 5.0, None, 1.0, t_eval=np.linspace(0.0, 5.0, 2001))
    assert isinstance(tr, Trajectory)
    before = plt.get_fignums()
    html = tr._repr_html_()
    parser = parsed(html)
    assert "svg" in parser.tags and "path" in parser.tags
    assert "<style" not in html and "<?xml" not in html  # nothing that would leak into the page
    assert len(html) < 60_000  # at most PLOT_POINTS points per curve
    text = " ".join(parser.text)
    for word in ("joint", "exact (exact)", "[0, 5]", "2001", f"q = {display.number(tr.final[0])}", "q_dot"):
        assert word in text
    assert plt.get_fignums() == before  # no figure left open


def test_trajectory_html_of_one_point_and_a_hostile_model_name() -> None:
    tr = Trajectory(np.zeros(1), np.ones((1, 1)), np.zeros((1, 0)), np.ones((1, 1)), ("x",), (), ("x",), HOSTILE,
                    SimulationStats("exact", "exact"))
    html = tr._repr_html_()
    parser = parsed(html)
    assert "script" not in parser.tags and HOSTILE in " ".join(parser.text)


@pytest.mark.parametrize("shape", [(3, 2), (20, 20)])
def test_matrix_latex_shape(shape: tuple[int, int]) -> None:
    latex = display.matrix_latex(np.ones(shape))
    assert latex.startswith(r"\begin{bmatrix}") and latex.endswith(r"\end{bmatrix}")
    rows = latex.removeprefix(r"\begin{bmatrix} ").removesuffix(r" \end{bmatrix}").split(r" \\ ")
    assert len(rows) == min(shape[0], display.MAX_ROWS)
    assert {row.count("&") for row in rows} == {min(shape[1], display.MAX_COLUMNS) - 1}


def test_every_public_result_displays_itself_in_a_notebook():
    """Issue 23: SecondOrder, Validity, Existence and the other results had no rich display. Each public class
    that is not an error or a model base shows an HTML table (and its figure when it has one), units beside values."""
    import inspect

    from robodyn.reference import public_names

    skip = {"Model", "System", "SymbolicModel", "Signal"}  # bases: the kinds display themselves
    classes = {name: getattr(robodyn, name) for name in public_names()["robodyn"]
               if inspect.isclass(getattr(robodyn, name)) and not issubclass(getattr(robodyn, name), Exception)
               and name not in skip}
    missing = [name for name, cls in classes.items() if not callable(getattr(cls, "_repr_html_", None))]
    assert not missing, missing
    joint, pendulum = robodyn.load("joint"), robodyn.load("pendulum")
    shown = [robodyn.second_order(0.01, 0.1, 1.0), robodyn.validity(pendulum, [0.0, 0.0]),
             robodyn.existence(pendulum, [0.5, 0.0], 0.1), robodyn.modes(robodyn.linearize(joint, [0, 0])).rows[0],
             robodyn.simulate(pendulum, 1.0, np.array([[0.1, 0.0], [0.2, 0.0]])),
             robodyn.StateFeedback([[1.0, 2.0]]), robodyn.Kinematics(robodyn.load("two_link_arm"))]
    for result in shown:
        page = result._repr_html_()
        assert page.startswith('<div class="robodyn">') and "<table" in page, type(result).__name__
    assert "rad/s" in shown[0]._repr_html_() and "<svg" in shown[1]._repr_html_()
    assert "theta [rad] (run 0)" in text_of(shown[4]._repr_html_())
    trajectory = robodyn.simulate(pendulum, 1.0, {"theta": 0.3})
    assert "t [s]" in trajectory._repr_html_() and "theta [rad]" in trajectory._repr_html_()  # the thumbnail's units


def test_the_control_designs_display_themselves():
    pendulum = robodyn.load("pendulum")
    problem = robodyn.OptimalControlProblem(pendulum, 1.0, 10, {"theta": 0.0, "theta_dot": 0.0},
                                            {"input": {"weights": {"tau": 1.0}}},
                                            bounds={"inputs": {"tau": [-1, 1]}})
    assert "knots" in text_of(problem._repr_html_()) and "tau" in text_of(problem._repr_html_())
    run = robodyn.simulate(pendulum, 1.0, {"theta": 0.3}, method="rk4", dt=0.1)
    design = robodyn.tvlqr(pendulum, run, {"theta": 1.0, "theta_dot": 0.1}, {"tau": 1.0}, discrete=True)
    for shown in (design, design.feedback):
        page = shown._repr_html_()
        assert page.startswith('<div class="robodyn">') and "<table" in page
        assert display.number(float(design.K[0, 0, 0])) in text_of(page)
