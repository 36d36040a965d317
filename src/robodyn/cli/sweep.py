"""``robodyn sweep``: a sweep over parameters and initial states, its table and a summary plot."""

from __future__ import annotations

import argparse
import inspect
import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np

from robodyn.base.errors import InputError
from robodyn.base.names import split_degrees
from robodyn.cli.args import number_or, quantities
from robodyn.cli.commands import PROG
from robodyn.integrate.methods.registry import ALIASES, METHOD_NAMES
from robodyn.model.quantities import Quantity, parse_number
from robodyn.sweep import sweep as _sweep_api

__all__ = ["MAX_SUMMARY_ROWS", "add_commands", "summary_figure", "summary_rows"]

MAX_SUMMARY_ROWS: Final = 250_000  # rows the summary plot shows at most (a larger sweep: a coarser grid, or every n-th)
#: How runs are integrated when the options are left out: robodyn.sweep's own defaults.
_DEFAULTS: Final = {name: parameter.default for name, parameter in inspect.signature(_sweep_api).parameters.items()
                    if name in ("method", "rtol", "atol", "points")}


def _ranges(texts: list[str] | None, option: str, samples: bool, units: Mapping[str, str]) -> dict[str, Any]:
    """``NAME=start:stop:count`` (a grid) or, with ``--samples``, ``NAME=low:high`` (a range); the ends are values as
    ``simulate --x0`` reads them (an angle may be given in degrees, ``90deg``: robodyn.cli.args.quantities)."""
    from robodyn.sweep import parse_range

    result: dict[str, Any] = {}
    for text in texts or ():
        for item in text.split(","):
            name, sep, value = item.partition("=")
            name = name.strip()
            if not sep or not name:
                raise InputError(f"{option} {item!r}: write NAME=start:stop:count (or NAME=low:high with --samples)")
            if name in result:
                raise InputError(f"{option}: {name!r} is given twice")
            parts = value.split(":")
            if samples and len(parts) != 2:
                raise InputError(f"{option} {item!r}: with --samples give a range NAME=low:high")
            converted = []
            for end in parts if samples else parts[:2]:
                number, degrees = split_degrees(end)
                given = Quantity(parse_number(number, where=f"{option} {name}"), degrees)
                converted.append(quantities({name: given}, units, option)[name])
            if samples:
                result[name] = tuple(converted)
            else:  # the count as written, the ends as the numbers they are (repr reads back exactly)
                result[name] = parse_range(":".join([*map(repr, converted), *parts[2:]]), f"{option} {name}")
    return result


def summary_figure(table: Any, swept: list[str], outcome: str) -> Any:
    """The outcome over one swept variable (a line) or two (a heat map, when they form a grid)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 4.5), layout="constrained")
    ax = figure.add_subplot()
    if len(swept) == 1:
        ordered = table.sort_values(swept[0])
        ax.plot(ordered[swept[0]], ordered[outcome], ".-")
        ax.set(xlabel=swept[0], ylabel=outcome)
    else:
        x, y = swept[:2]
        xs, ys = np.unique(table[x]), np.unique(table[y])
        image: Any
        if xs.size * ys.size == len(table):  # a grid: a heat map
            grid = table.pivot_table(index=y, columns=x, values=outcome, aggfunc="mean")
            image = ax.pcolormesh(grid.columns.to_numpy(), grid.index.to_numpy(), grid.to_numpy(), shading="auto")
        else:  # random samples: a scatter coloured by the outcome
            image = ax.scatter(table[x], table[y], c=table[outcome], s=6)
        figure.colorbar(image, ax=ax, label=outcome)
        ax.set(xlabel=x, ylabel=y)
    ax.set_title(f"{outcome} over {', '.join(swept[:2])}")
    return figure


def _strides(sizes: list[int], limit: int) -> list[int]:
    """Per grid axis, every how many values the summary keeps, so that at most ``limit`` grid points are kept (a
    coarser grid, still a grid)."""
    strides = [1] * len(sizes)
    while sizes and math.prod(-(-n // s) for n, s in zip(sizes, strides)) > limit:
        widest = max(range(len(sizes)), key=lambda j: -(-sizes[j] // strides[j]))
        strides[widest] *= 2
    return strides


def summary_rows(folder: Path, swept: list[str], outcome: str, sizes: list[int] | None, count: int,
                 limit: int | None = None) -> Any:
    """The rows of the summary plot, read part by part: every row of a sweep of at most ``limit`` rows; of a
    larger grid (axis ``sizes``) a coarser grid of at most ``limit`` points, of larger random samples every n-th.

    Memory is bounded by a part and ``limit`` rows, whatever the size of the sweep."""
    import pandas as pd

    from robodyn.sweep import iter_parts

    limit = MAX_SUMMARY_ROWS if limit is None else limit
    strides = _strides(sizes, limit) if sizes else []
    every = 1 if sizes else -(-count // limit)
    kept = []
    for frame in iter_parts(folder, columns=[*swept[:2], outcome]):
        sample = frame["sample"].to_numpy()
        if sizes and max(strides) > 1:
            digits = np.unravel_index(sample, sizes)
            keep = np.logical_and.reduce([d % s == 0 for d, s in zip(digits, strides)])
        else:
            keep = sample % every == 0
        kept.append(frame[keep])
    return pd.concat(kept, ignore_index=True) if kept else pd.DataFrame()


def _cmd_sweep(args: argparse.Namespace) -> int:
    from robodyn.base.atomic import check_output_path
    from robodyn.files.cached import load_cached
    from robodyn.results.plots import save_figure
    from robodyn.sweep.store import read_manifest

    samples = args.samples
    units = load_cached(args.model).units()  # the swept names' units (an angle may be given in degrees)
    over = {**_ranges(args.param, "--param", samples is not None, units),
            **_ranges(args.x0, "--x0", samples is not None, units)}
    reducers = [r.strip() for text in args.reduce for r in text.split(",") if r.strip()] or ["final"]
    if args.points is not None and args.points < 2:
        raise InputError(f"--points must be at least 2, got {args.points}")
    out = Path(args.out)
    if os.path.lexists(out) and not out.is_dir():
        raise InputError(f"--out {out}: not a folder: name a folder for the sweep's table")
    check_output_path(out / "summary.png", "--out")
    folder = _sweep_api(args.model, over, parse_number(args.t_final, where="--t-final"), reduce=reducers,
                        samples=samples, seed=args.seed, out=out, scheduler=args.scheduler, workers=args.workers,
                        chunk_size=args.chunk_size, points=_DEFAULTS["points"] if args.points is None else args.points,
                        method=args.method or _DEFAULTS["method"],
                        rtol=number_or(args.rtol, "--rtol", _DEFAULTS["rtol"]),
                        atol=number_or(args.atol, "--atol", _DEFAULTS["atol"]), table=False)
    manifest = read_manifest(folder) or {}
    count = int(manifest.get("samples", 0))
    swept = list(over)
    reduced = [c for c in manifest.get("columns") or () if c not in ("sample", *swept)]
    shown = ""
    if reduced:
        sizes = None if samples is not None else [len(values) for values in over.values()]
        table = summary_rows(folder, swept, reduced[0], sizes, count)
        if len(table):
            save_figure(summary_figure(table, swept, reduced[0]), str(out / "summary.png"))
        shown = f" ({len(table)} of them)" if len(table) < count else ""
    print(f"{args.model}: {count} trajectories over {', '.join(swept)}; reduced to {', '.join(reduced)}; table in "
          f"{out} (robodyn.load_sweep), summary plot {out / 'summary.png'}{shown}")
    print(f"{PROG}: {_integration(manifest.get('sweep') or {})}", file=sys.stderr)
    return 0


def _integration(definition: Mapping[str, Any]) -> str:
    """How the runs were integrated, as the manifest records it (its ``sweep``: method, rtol, atol, points)."""
    return (f"each run by {definition.get('method')} at rtol {definition.get('rtol'):g}, atol "
            f"{definition.get('atol'):g}, {definition.get('points')} output times (manifest.json: sweep)")


def add_commands(commands: Any) -> None:
    """Add ``sweep`` to the ``robodyn`` subcommands."""
    sweep = commands.add_parser("sweep", help="many simulations over parameters and initial states, reduced")
    sweep.add_argument("model", metavar="MODEL", help="a YAML model file or a catalog name")
    sweep.add_argument("--param", action="append", metavar="NAME=START:STOP:COUNT",
                       help="a parameter's values (a grid), or NAME=LOW:HIGH with --samples")
    sweep.add_argument("--x0", action="append", metavar="NAME=START:STOP:COUNT", help="an initial state's values")
    sweep.add_argument("--t-final", required=True, metavar="T", help="final time")
    sweep.add_argument("--method", choices=(*METHOD_NAMES, *ALIASES), type=str.lower,
                       help=f"integrator (default {_DEFAULTS['method']}); fixed-step methods are refused (no --dt)")
    sweep.add_argument("--rtol", help=f"relative tolerance (default {_DEFAULTS['rtol']:g})")
    sweep.add_argument("--atol", help=f"absolute tolerance (default {_DEFAULTS['atol']:g})")
    sweep.add_argument("--points", type=int,
                       help=f"evenly spaced output times per run, for the reducers (default {_DEFAULTS['points']})")
    sweep.add_argument("--reduce", action="append", default=[], metavar="NAME,...",
                       help="final, max_abs, settling_time, converged (default final)")
    sweep.add_argument("--samples", type=int, help="random samples instead of a grid")
    sweep.add_argument("--seed", type=int, default=0, help="seed of the random samples (default 0)")
    sweep.add_argument("--chunk-size", type=int, default=10_000, help="trajectories per batch (default 10000)")
    sweep.add_argument("--out", required=True, metavar="DIR", help="folder for the Parquet table and the plot")
    where = sweep.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, help="run on a local Dask cluster of N worker processes")
    where.add_argument("--scheduler", metavar="ADDR", help="run on the Dask cluster at tcp://host:port")
    sweep.set_defaults(run=_cmd_sweep)
