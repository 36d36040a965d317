"""``robodyn analyze`` (the one-page report of a model) and ``robodyn demo`` (the main job: two reports)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from robodyn.cli.args import add_model, assignments, load_model

__all__ = ["add_commands", "run_demo"]


def _cmd_analyze(args: argparse.Namespace) -> int:
    from robodyn.base.atomic import path_component
    from robodyn.model.quantities import parse_number
    from robodyn.report import analyze
    from robodyn.report.analyze import check_report_folder

    horizon = 5.0 if args.horizon is None else parse_number(args.horizon, where="--horizon")
    model = load_model(args)
    # the model's name is free text: the default folder is one safe component of it, never '..' or a path
    out = check_report_folder(args.out or Path("robodyn-out") / path_component(model.name), "--out")
    key = None if args.base else _file_key(args.model, model)  # a file's report: its points' sections are kept
    report = analyze(model, at=assignments(args.at, "--at", model.units()), horizon=horizon, quiet=args.quiet,
                     workers=os.cpu_count() or 1, key=key)  # this process runs no threads: its points may be forked
    page = report.write(out)
    points = len(report.data.get("points", []))
    print(f"{model.name}: {points} operating point(s) analysed; wrote {page} (with report.json and points.csv)")
    return 0


def _file_key(name: str, model: Any) -> str | None:
    """What identifies the model ``name`` loaded as ``model`` when a model file or catalog file determines it (its
    record key and the parameter values set on it: robodyn.report.kept.model_key), else None."""
    from robodyn.files.loading import model_text
    from robodyn.files.records import model_record_key
    from robodyn.report.kept import model_key

    found = model_text(name)
    return None if found is None else model_key(model_record_key(*found), model.parameters)


def _summary(rows: list[tuple[str, ...]]) -> None:
    """A small table on stdout (rich when it is a terminal, plain text otherwise)."""
    header = ("model", "points", "stability")  # the reports' paths follow, one line each
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(*header)
        for row in rows:
            table.add_row(*row)
        Console().print(table)
        return
    widths = [max(len(r[k]) for r in (header, *rows)) for k in range(len(header))]
    for row in (header, *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())


def run_demo(out: Path) -> int:
    """The main job: the pendulum's report, the seed joint's report and its integrators against the closed
    form; a summary table with the reports' paths. Exit 0 even if a stage fails (it says which)."""
    import robodyn
    from robodyn.analysis.verify import verify
    from robodyn.base.atomic import write_bytes_atomic
    from robodyn.report import analyze
    from robodyn.report.kept import kept_verification

    rows: list[tuple[str, ...]] = []
    pages: list[Path] = []
    for name in ("pendulum", "joint"):
        try:
            model = robodyn.load(name)
            print(f"== {name}: {model.kind} model, states {', '.join(model.states)}")
            print(model.show_text())
            report = analyze(model, quiet=False, key=_file_key(name, model))
            page = report.write(out / name)
            points: list[dict[str, Any]] = report.data.get("points", [])
            verdicts = ", ".join(sorted({str(p.get("stability", "?")) for p in points})) or "-"
            rows.append((name, str(len(points)), verdicts))
            pages.append(page)
        except Exception as exc:  # the demo reports a failed stage and goes on
            print(f"   ({name} failed: {type(exc).__name__}: {exc})")
    try:
        joint = robodyn.load("joint")

        def verified() -> tuple[str, bytes]:
            result = verify(joint)
            return result.table(), result.png()

        table, png = kept_verification(_file_key("joint", joint), (), verified)  # kept like the reports' points
        print("== the seed joint: numerical integration against the closed-form solution")
        print(table)
        plot = write_bytes_atomic(out / "verify_joint.png", png)
        print(f"wrote {plot}")
    except Exception as exc:
        print(f"   (verify failed: {type(exc).__name__}: {exc})")
    print()
    _summary(rows)
    for page in pages:
        print(f"report: {page}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    return run_demo(Path(args.out))


def add_commands(commands: Any) -> None:
    """Add ``analyze`` and ``demo`` to the ``robodyn`` subcommands."""
    demo = commands.add_parser("demo", help="the main job: analyze the pendulum and the seed joint, write reports")
    demo.add_argument("--out", default="robodyn-out", metavar="DIR", help="output folder (default: robodyn-out)")
    demo.set_defaults(run=_cmd_demo)
    analyze = commands.add_parser("analyze", help="one HTML page with a model's whole story (+ JSON, CSV)")
    add_model(analyze)
    analyze.add_argument("--at", action="append", metavar="NAME=VALUE,...",
                         help="values fixed for the equilibria (inputs, default 0), or a robot's joint angles")
    analyze.add_argument("--horizon", metavar="T", help="length of the responses in s (default 5)")
    analyze.add_argument("--out", metavar="DIR", help="folder for report.html (default robodyn-out/<model>)")
    analyze.add_argument("--quiet", action="store_true", help="no progress bar")
    analyze.set_defaults(run=_cmd_analyze)
