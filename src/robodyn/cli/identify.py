"""``robodyn identify MODEL --data run.csv --fit J,b,k``: parameters fitted to measured data (robodyn.identify)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from robodyn.base.errors import InputError
from robodyn.cli.args import add_json, add_model, assignments, load_model, number_or

__all__ = ["add_commands"]


def _names(texts: list[str] | None) -> list[str]:
    return [name.strip() for text in texts or () for name in text.split(",") if name.strip()]


def _bounds(texts: list[str] | None) -> dict[str, tuple[float, float]]:
    """``--bounds k=0:10,b=0:1`` as {name: (low, high)}."""
    from robodyn.model.quantities import parse_number

    found: dict[str, tuple[float, float]] = {}
    for text in texts or ():
        for part in text.split(","):
            name, sep, span = part.partition("=")
            low, colon, high = span.partition(":")
            if not sep or not colon or not name.strip():
                raise InputError(f"--bounds {part!r}: write NAME=LOW:HIGH, e.g. k=0:10")
            found[name.strip()] = (parse_number(low, where=f"--bounds {name}"), parse_number(high, where=f"--bounds "
                                                                                                          f"{name}"))
    return found


def _x0(text: str) -> str | list[str]:
    return text if text in ("given", "fit") else _names([text])


def _check_paths(args: argparse.Namespace) -> None:
    from robodyn.base.atomic import check_output_path

    if args.write_model is not None:
        if Path(args.write_model).suffix.lower() not in (".yaml", ".yml"):
            raise InputError(f"--write-model {args.write_model}: the model file is YAML: name a .yaml file")
        check_output_path(args.write_model, "--write-model")
    if args.report is not None:
        if Path(args.report).suffix.lower() not in (".html", ".htm"):
            raise InputError(f"--report {args.report}: the report is one HTML page: name a .html file")
        check_output_path(args.report, "--report")


def _cmd_identify(args: argparse.Namespace) -> int:
    from robodyn.identification.identify import identify

    _check_paths(args)
    if args.max_evaluations < 1:
        raise InputError(f"--max-evaluations {args.max_evaluations}: give the number of simulations the fit may run, "
                         "at least 1 (default 200)")
    model = load_model(args)
    parameters = _names(args.fit)
    inputs: dict[str, Any] = {}
    if args.input:
        from robodyn.files.signal_text import parse_input_assignments

        inputs = parse_input_assignments(args.input, model.inputs)
    text = None
    if args.write_model is not None:  # the file's text and every check of it before the fit
        from robodyn.files.loading import model_text

        found = model_text(args.model)
        if found is None:
            raise InputError(f"--write-model: {args.model!r} is not a model file whose parameters could be written")
        text = found
    columns = None if args.inputs in (None, "columns") else _names([args.inputs])
    units = model.units()  # an angle's value may be given in degrees
    result = identify(model, list(args.data), parameters, x0=_x0(args.x0), initial=assignments(args.initial,
                      "--initial", units) or None, inputs=inputs or None, input_columns=columns,
                      intersample=args.intersample, bounds=_bounds(args.bounds) or None,
                      noise=assignments(args.noise, "--noise", units) or None,
                      method=args.method, rtol=number_or(args.rtol, "--rtol", 1e-8),
                      atol=number_or(args.atol, "--atol", 1e-10), max_evaluations=args.max_evaluations)
    written = _write(result, args, text)
    if args.json:
        from robodyn.display.page import strict_json

        print(strict_json(result.to_dict()), end="")
    else:
        print(f"{model.name}: identified from {len(result.measured)} data set(s)")
        print(result.text())
        for path in written:
            print(f"wrote {path}")
    return 0


def _write(result: Any, args: argparse.Namespace, text: tuple[str, str] | None) -> list[str]:
    """The files asked for, written as one operation after the fit succeeded (robodyn.base.atomic.write_files_atomic:
    both or neither; a replaced model file keeps its permissions, a link to it stays a link)."""
    from robodyn.base.atomic import write_files_atomic

    files: dict[str, str] = {}
    if args.report is not None:
        from robodyn.identification.report import identification_page
        from robodyn.report.views import run_view

        view = run_view(result.model, result.fitted[0], what="The model simulated at the estimates, data set 1")
        files[args.report] = identification_page(result, f"Identification of {result.model.name}",
                                                 () if view is None else (view,))
    if text is not None:
        from robodyn.files.parameter_values import with_parameter_values

        values = {name: result.values[name] for name in _names(args.fit)}
        files[args.write_model] = with_parameter_values(text[0], values, text[1])
    write_files_atomic(files)
    return list(files)


def add_commands(commands: Any) -> None:
    """Add ``identify`` to the ``robodyn`` subcommands."""
    identify = commands.add_parser("identify", help="fit parameters (and initial states) to measured data: estimates, "
                                                    "standard errors, a fit report")
    add_model(identify)
    identify.add_argument("--data", action="append", required=True, metavar="RUN.csv",
                          help="measured data: t, then outputs and inputs by name (repeat for several runs)")
    identify.add_argument("--fit", action="append", required=True, metavar="NAME,...", help="the parameters to fit")
    identify.add_argument("--x0", default="given", metavar="given|fit|STATE,...",
                          help="initial states: given (--initial, else 0), fit (all), or the states to fit")
    identify.add_argument("--initial", action="append", metavar="NAME=VALUE,...",
                          help="initial states (the guess of those fitted)")
    identify.add_argument("--inputs", metavar="columns|NAME,...",
                          help="the inputs applied from data columns (default: every column named by an input)")
    identify.add_argument("--input", action="append", metavar="NAME=SIGNAL",
                          help="a signal for an input the data have no column for (others are 0)")
    identify.add_argument("--intersample", choices=("zoh", "linear"), default="zoh",
                          help="measured inputs between samples: held (zoh, default) or linear")
    identify.add_argument("--noise", action="append", metavar="OUTPUT=SIGMA,...",
                          help="known noise levels (default: estimated from the residuals)")
    identify.add_argument("--bounds", action="append", metavar="NAME=LOW:HIGH,...", help="bounds of fitted numbers")
    identify.add_argument("--method", default="dopri5", help="the integrator (default dopri5; radau if stiff)")
    identify.add_argument("--rtol", help="relative tolerance of the simulations (default 1e-8)")
    identify.add_argument("--atol", help="absolute tolerance of the simulations (default 1e-10)")
    identify.add_argument("--max-evaluations", type=int, default=200, metavar="N",
                          help="simulations allowed before the fit gives up (default 200)")
    identify.add_argument("--report", metavar="FILE.html", help="write the fit report (measured vs fitted, residuals)")
    identify.add_argument("--write-model", metavar="FILE.yaml", help="write the model file with the identified values")
    add_json(identify)
    identify.set_defaults(run=_cmd_identify)
