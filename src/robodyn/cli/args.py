"""Options shared by the ``robodyn`` commands: the model argument, ``--param``, ``--at``, ``--json``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robodyn.base.errors import InputError
from robodyn.cli.commands import PROG
from robodyn.model.quantities import Quantity, in_units, parse_number, parse_quantities

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["add_json", "add_model", "add_point", "assignments", "check_outputs", "load_model", "number", "number_or",
           "quantities", "write_plot"]


def assignments(texts: Sequence[str] | None, option: str, units: Mapping[str, str]) -> dict[str, float]:
    """``NAME=VALUE,...`` texts of a repeatable option as one mapping (a name given twice is bad input).

    A value may end with ``deg`` when ``units`` (the model's, :meth:`units`) says its name is an angle: it is
    converted to that unit; ``deg`` elsewhere is bad input naming it. An angle in rad beyond a whole turn
    (``theta=180``) is taken as given, with a warning on stderr naming the value and ``deg``
    (:func:`robodyn.model.quantities.in_units`).
    """
    values: dict[str, float] = {}
    for text in texts or ():
        for name, value in quantities(parse_quantities(text, where=option), units, option).items():
            if name in values:
                raise InputError(f"{option}: {name!r} is given twice")
            values[name] = value
    return values


def quantities(given: Mapping[str, Quantity], units: Mapping[str, str], option: str) -> dict[str, float]:
    """Values as written (a number, maybe in degrees) in their names' units, an angle that looks like degrees
    warned about on stderr (:func:`robodyn.model.quantities.in_units`)."""
    values, notes = in_units(given, units, where=option)
    for note in notes:
        print(f"{PROG}: warning: {note}", file=sys.stderr)
    return values


def number(text: str | None, option: str) -> float | None:
    """The number an option gives (``pi`` and arithmetic allowed), or None when it is not given."""
    return None if text is None else parse_number(text, where=option)


def number_or(text: str | None, option: str, default: float) -> float:
    """The number an option gives, or ``default`` when it is not given."""
    return default if text is None else parse_number(text, where=option)


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse bad --out and --plot paths before any work (nothing is written unless everything passes)."""
    from robodyn.base.atomic import check_output_path

    out = getattr(args, "out", None)
    for option, value, kinds in (("--out", out, ".csv or .npz file (or - for CSV on stdout)"),
                                 ("--plot", getattr(args, "plot", None), ".png, .svg or .pdf file")):
        if value is not None and not value.strip():
            raise InputError(f"{option} {value!r}: the path is empty: name a {kinds}")
    if out and out != "-":
        if Path(out).suffix.lower() not in (".csv", ".npz"):
            raise InputError(f"--out {out}: write a .csv or .npz file (or - for CSV on stdout)")
        check_output_path(out, "--out")
    if getattr(args, "plot", None):
        if Path(args.plot).suffix.lower() not in (".png", ".svg", ".pdf"):
            raise InputError(f"--plot {args.plot}: the plot is written as PNG, SVG or PDF: name a .png, .svg or .pdf "
                             "file")
        check_output_path(args.plot, "--plot")


def write_plot(path: str, figure: Any) -> None:
    """Write a figure as PNG, SVG or PDF by the suffix of ``path`` (robodyn.results.plots.save_figure), atomically."""
    from robodyn.results.plots import save_figure

    save_figure(figure, path)


def load_model(args: argparse.Namespace, *, numeric: bool = False, same_numbers: bool = False) -> ModelContract:
    """Load MODEL and apply ``--param`` overrides (checked against the model's parameters).

    ``numeric``: for a command that only evaluates the model (``simulate``), a model file or catalog model
    comes from the parsed-model cache when it is warm (:func:`robodyn.files.cached.load_cached`: no sympy);
    with ``same_numbers`` only when the record's numbers are the full model's own (a diagram's), for a command that
    prints them (``linearize``).
    """
    base = getattr(args, "base", None)
    if base is not None:  # a URDF robot's root joined to the world by a moving joint
        if not str(args.model).lower().endswith(".urdf"):
            raise InputError(f"--base applies to a URDF robot; {args.model!r} is not one: write 'base: {base}' in a "
                             "chain file")
        from robodyn.files.loading import load

        model = load(args.model, base=base)
    elif numeric:
        from robodyn.files.cached import load_cached

        model = load_cached(args.model, same_numbers=same_numbers)
    else:
        from robodyn.files.loading import load

        model = load(args.model)
    return model.with_parameters(assignments(args.param, "--param", model.units()))


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


def add_point(parser: argparse.ArgumentParser, description: str) -> None:
    parser.add_argument("--at", action="append", metavar="NAME=VALUE,...", help=description)


def add_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL",
                        help="a YAML model file, a URDF or MJCF (.xml) robot or a catalog name (joint, pendulum, ...)")
    parser.add_argument("--base", choices=("fixed", "floating", "planar"),
                        help="a URDF robot's root joined to the world: floating (free-flyer) or planar "
                             "(default: the file's root joint, else fixed)")
    parser.add_argument("--param", action="append", metavar="NAME=VALUE,...",
                        help="override parameters, e.g. --param m=2,l=0.5 (values accept pi and arithmetic)")
