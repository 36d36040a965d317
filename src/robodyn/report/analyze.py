"""The order of the report's story (:func:`analyze`) and its files (:class:`Report`); see robodyn.report."""

from __future__ import annotations

import contextlib
import csv
import datetime
import difflib
import html
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import InputError, UnknownNameError
from robodyn.base.progress import progress
from robodyn.base.progress import quiet as quiet_progress
from robodyn.display.page import guarded, number, page, strict_json, table
from robodyn.model.system import require_model
from robodyn.report.point import existence_section, point_section
from robodyn.report.points import csv_row, operating_points
from robodyn.report.views import points_view, robot_shapes
from robodyn.report.workers import Workers

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["MAX_POINTS", "Report", "analyze", "check_report_folder", "report_files"]

MAX_POINTS: Final = 4  # operating points analysed in full (the others are listed)
ROBOT_COORDINATES: Final = 3  # rigid-body models with more coordinates are analysed at one configuration


@dataclass
class Report:
    """An analysis report: ``html`` (the page), ``data`` (JSON-ready) and ``rows`` (the operating points, for
    the CSV). :meth:`write` puts them in a folder."""

    model: str
    html: str
    data: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def write(self, folder: str | Path) -> Path:
        """Write ``report.html``, ``report.json`` and ``points.csv`` into ``folder`` (created) as one operation
        (robodyn.base.atomic.write_files_atomic: all three or none); returns the page's path."""
        from robodyn.base.atomic import write_files_atomic

        out = check_report_folder(folder, "analyze --out")
        buffer = io.StringIO()
        if self.rows:
            writer = csv.DictWriter(buffer, fieldnames=list(self.rows[0]))
            writer.writeheader()
            writer.writerows(self.rows)
        files = dict(zip(report_files(out), (self.html, strict_json(self.data), buffer.getvalue())))
        return write_files_atomic(files, "analyze --out")[0]


def report_files(folder: Path) -> tuple[Path, Path, Path]:
    """The files a report writes into ``folder``: the page, its data, the operating points."""
    return folder / "report.html", folder / "report.json", folder / "points.csv"


def check_report_folder(folder: str | Path, option: str = "--out") -> Path:
    """Refuse, before any work, a folder the report cannot be written into (robodyn.base.atomic's checks of the
    folder and of each file in it: a folder named ``report.html``, a read-only ``report.json``)."""
    from robodyn.base.atomic import check_output_folder, check_output_path

    out = check_output_folder(folder, option)
    for path in report_files(out):
        check_output_path(path, option, probe=False)
    return out


def analyze(model: ModelContract, *, at: Mapping[str, float] | None = None, horizon: float = 5.0, quiet: bool = True,
            max_points: int = MAX_POINTS, workers: int = 1, key: str | None = None) -> Report:
    """The report of ``model`` (see the module docstring).

    Parameters
    ----------
    at
        Values fixed while looking for equilibria (inputs, by default all 0; or states). For a model with
        frames (a robot) given joint angles, or with more than :data:`ROBOT_COORDINATES` coordinates: the
        operating point at those angles (others 0), held by their torques.
    horizon
        Length of the free and step responses (s).
    quiet
        No progress bar (it is shown on a terminal's stderr otherwise).
    workers
        Processes the operating points and equations are worked out in (forked: robodyn.report.workers); the CLI
        uses one per core; keep the default 1 in a process that runs threads of its own (a notebook kernel).
    key
        What built the model, when a file did (robodyn.report.kept.model_key): the points' sections are then kept in
        the private cache and read back by the next report of the same file, parameters, code and libraries; their
        JSON records are JSON data (lists, not arrays) either way. None (the default): everything is computed.
    """
    require_model(model, "analyze")
    from robodyn.analysis.classify import classify
    from robodyn.linearization import equilibrium  # noqa: F401 - imported (scipy.optimize with it) before workers fork

    given = _checked_options(model, at, horizon, max_points, workers)
    if workers > 1:  # what the operating points and every section import, once, before the workers fork
        import scipy.optimize  # noqa: F401
    sections: list[str] = []
    data: dict[str, Any] = {"model": model.name, "kind": model.kind, "states": list(model.states),
                            "inputs": list(model.inputs), "outputs": list(model.outputs),
                            "parameters": dict(model.parameters),
                            "generated": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}
    with contextlib.ExitStack() as stack:
        if quiet:
            stack.enter_context(quiet_progress())
        step = stack.enter_context(progress(4 + 6 * max_points, f"analyze {model.name}"))
        pool = stack.enter_context(Workers(model, workers))
        step(description="equations")
        equations = pool.submit(_equations)  # typeset (in a worker, while the operating points are found)
        data["equations"] = model.show_text()
        step(description="classification")
        guarded(sections, data, "classification", "Classification", lambda: _classification(classify(model)))
        step(description="operating points")
        coordinates = model.states[: model.n_states // 2] if model.order == 2 else ()
        # a rigid-body model at the given joint angles (or, beyond ROBOT_COORDINATES, at q = 0), held by its
        # torques: its rest points form a continuum when inputs are free, and a search in many dimensions is slow
        robot = model.kinematics() is not None and model.order == 2 and (
            any(name in given for name in coordinates) or len(coordinates) > ROBOT_COORDINATES)
        found = guarded(sections, data, "operating_points", "Operating points",
                         lambda: operating_points(model, given, robot))
        chosen = found.points[:max_points] if found else []
        if found:
            data["operating_points"] = [str(point) for point in found.points]
            data["equilibrium_families"] = found.records
        rows = [csv_row(model, point, k, found.records[k]) for k, point in enumerate(chosen)] if found else []
        geometry = robot_shapes(model)  # a robot file that draws something: shown in 3-D, not as sticks
        exists = pool.submit(_existence, chosen[0], key) if chosen else None
        started = [pool.submit(_point, point, k, horizon, None if pool.pool else step, key, geometry is None)
                   for k, point in enumerate(chosen)]
        if geometry is not None and chosen:
            guarded(sections, data, "view", "The robot in 3-D", lambda: points_view(model, geometry, chosen))
        sections.insert(0, f"<h2>Equations</h2>{equations.get()}")
        if model.roles():
            from robodyn.report.closed_loop import roles_record

            data["roles"] = roles_record(model.roles())
        structure = model.block_diagram()
        if structure is not None:
            from robodyn.report.diagram import diagram_section

            sections.insert(0, diagram_section(structure))
            data["block_diagram"] = {k: v for k, v in structure.items() if k != "blocks"} | {
                "blocks": {b: {k: v for k, v in info.items()} for b, info in structure["blocks"].items()}}
        done = []
        for k, handle in enumerate(started):
            done.append(handle.get())
            step(6 if pool.pool else 0, description=f"point {k}: done")
        sections += [text for text, _ in done]
        if done and exists is not None:
            data["points"] = [record for _, record in done]
            text, data["points"][0]["existence"] = exists.get()
            sections.append(text)
    return Report(model.name, _page(model, sections), data, rows)


def _point(model: ModelContract, point: Any, k: int, horizon: float, step: Any, key: str | None, stick: bool
           ) -> tuple[str, dict[str, Any]]:
    """Operating point ``k``'s section (robodyn.report.point), kept when ``key`` says what built the model."""
    from robodyn.report.kept import kept_section

    return kept_section(key, "point", (point.x, point.u, k, float(horizon), stick),
                        lambda: point_section(model, point, k, horizon, step, stick=stick))


def _existence(model: ModelContract, point: Any, key: str | None) -> tuple[str, dict[str, Any]]:
    """The existence section at the first point, kept like the points' sections."""
    from robodyn.report.kept import kept_section

    return kept_section(key, "existence", (point.x, point.u), lambda: existence_section(model, point, 0))


def _checked_options(model: ModelContract, at: Mapping[str, float] | None, horizon: float, max_points: int,
                     workers: int) -> dict[str, float]:
    """``at`` as ``{name: value}`` after the checks of :func:`analyze`'s options (InputError naming the fix)."""
    from robodyn.model.system import values_to_vector

    if isinstance(horizon, bool) or not isinstance(horizon, int | float | np.integer | np.floating) or not (
            math.isfinite(horizon) and horizon > 0):
        raise InputError(f"analyze: horizon must be a positive number of seconds, got {horizon!r}")
    if isinstance(workers, bool) or not isinstance(workers, int | np.integer) or not 1 <= workers <= 256:
        raise InputError(f"analyze: workers must be a whole number of processes from 1 to 256, got {workers!r}")
    if isinstance(max_points, bool) or not isinstance(max_points, int | np.integer) or max_points < 1:
        raise InputError(f"analyze: max_points must be a whole number >= 1 (operating points analysed in full), got "
                         f"{max_points!r}")
    if at is None:
        return {}
    if not isinstance(at, Mapping):
        raise InputError(f"analyze: at must be a mapping {{name: value}} of states and inputs, got "
                         f"{type(at).__name__}")
    names = (*model.states, *model.inputs)
    for name in at:
        if name not in names:
            close = difflib.get_close_matches(str(name), names, n=1)
            raise UnknownNameError(f"analyze: {name!r} in at is not a state or input of {model.name!r} (states "
                                   f"{', '.join(model.states)}; inputs {', '.join(model.inputs) or 'none'})"
                                   + (f"; did you mean {close[0]!r}?" if close else ""))
    values = values_to_vector(dict(at), names, "operating point", default=0.0)  # real, finite numbers
    return {name: float(values[names.index(name)]) for name in at}


def _classification(result: Any) -> tuple[str, Any]:
    verdicts = ["linear", "time_invariant", "homogeneous", "autonomous"]
    rows = [[name.replace("_", " "), "yes" if getattr(result, name) else "no", result.reasons.get(name, "")]
            for name in verdicts]
    text = (f"<p>Order {result.order}, {result.dimension} coordinate(s) / {result.state_dimension} state(s); decided "
            f"{html.escape(result.method)}.</p>")
    return text + table(["property", "verdict", "reason"], rows, text_columns=3), {
        **{name: bool(getattr(result, name)) for name in verdicts}, "reasons": dict(result.reasons),
        "method": result.method}


def _equations(model: ModelContract) -> str:
    """The equations typeset (robodyn.display.formulas), the plain text and the LaTeX source under them."""
    from robodyn.display.formulas import formulas_html

    latex = model.latex_text()
    source = f"<details><summary>LaTeX source</summary><pre>{html.escape(latex)}</pre></details>" if latex else ""
    text = f"<details><summary>as text</summary><pre>{html.escape(model.show_text())}</pre></details>"
    return formulas_html(model) + text + source


def _page(model: ModelContract, sections: list[str]) -> str:
    units = model.units()
    parameters = ", ".join(f"{k} = {number(v)}" + (f" {units[k]}" if k in units else "")
                           for k, v in model.parameters.items()) or "none"
    intro = (f"<p>{html.escape(model.kind)} model: states {html.escape(', '.join(model.states))}; inputs "
             f"{html.escape(', '.join(model.inputs) or 'none')}; parameters {html.escape(parameters)}.</p>")
    return page(f"robodyn analysis of {model.name}", intro, sections)
