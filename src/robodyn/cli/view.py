"""``robodyn view MODEL [--at q=...] [--trajectory run.csv] [--out robot.html]``: the model in 3-D in one offline
HTML page (robodyn.viewer), written atomically; nothing else is written."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from robodyn.base.atomic import check_output_path
from robodyn.base.errors import InputError, RobodynWarning
from robodyn.cli.args import add_model, assignments, load_model
from robodyn.cli.commands import PROG

__all__ = ["add_commands"]

DEFAULT_OUT = "robot.html"


def _target(text: str | None) -> list[float] | None:
    from robodyn.model.quantities import parse_number

    if text is None:
        return None
    parts = text.split(",")
    if len(parts) != 3:
        raise InputError(f"--target {text}: give a point x,y,z in m")
    return [parse_number(part, where="--target") for part in parts]


def _plot(given: list[str] | None) -> list[str] | None:
    """``--plot a,b --plot c`` as [a, b, c] (None when not given)."""
    if given is None:
        return None
    return [name.strip() for text in given for name in text.split(",") if name.strip()]


def _cmd_view(args: argparse.Namespace) -> int:
    from robodyn.results.trajectory import Trajectory
    from robodyn.viewer.packages import parse_package_dirs
    from robodyn.viewer.view import view, view_coordinates

    out = check_output_path(args.out, "--out")  # before any work: a folder that cannot be written is refused
    package_dirs = parse_package_dirs(args.package_dir)
    target = _target(args.target)
    model = load_model(args)
    coordinates = view_coordinates(model)  # the joints (and a moving base's states)
    at: Any = None
    if args.at:
        at = assignments(args.at, "--at", model.units())
        unknown = [name for name in at if name not in coordinates]
        if unknown:
            raise InputError(f"--at: {unknown[0]!r} is not a coordinate of {model.name!r}: give joint angles or "
                             f"positions ({', '.join(coordinates)})")
    trajectory = None if args.trajectory is None else Trajectory.load(args.trajectory, states=model.states)
    with warnings.catch_warnings(record=True) as noted:  # robodyn's own (a mesh not found): printed
        warnings.simplefilter("always", RobodynWarning)
        page = view(model, trajectory=trajectory, at=at, target=target, collision=args.collision,
                    package_dirs=package_dirs, plot=_plot(args.plot))
    for note in noted:
        if issubclass(note.category, RobodynWarning):
            print(f"{PROG}: warning: {note.message}", file=sys.stderr)
    page.write(out)
    shown = f"{len(page.scene.times)} instants" if trajectory is not None else "one configuration"
    print(f"{model.name}: {len(page.scene.links)} links, {shown}; wrote {out} ({len(page.html) / 1e6:.1f} MB)")
    return 0


def add_commands(commands: Any) -> None:
    view = commands.add_parser("view", help="the model in 3-D: one HTML page that works offline")
    add_model(view)
    view.add_argument("--at", action="append", metavar="NAME=VALUE,...", help="joint coordinates shown (others 0)")
    view.add_argument("--trajectory", metavar="RUN.csv", help="a run of the model (CSV or NPZ) played at real time")
    view.add_argument("--plot", action="append", metavar="NAME,...",
                      help="the run's outputs, states or inputs plotted under it (default: coordinates and inputs)")
    view.add_argument("--target", metavar="X,Y,Z", help="a point drawn as a marker (m): an optimal-control target")
    view.add_argument("--collision", action="store_true", help="draw the URDF's <collision> shapes, not <visual>")
    view.add_argument("--package-dir", action="append", metavar="NAME=DIR",
                      help="where package://NAME/... meshes are (before ROS_PACKAGE_PATH and example-robot-data)")
    view.add_argument("--out", default=DEFAULT_OUT, metavar="FILE.html", help=f"the page (default {DEFAULT_OUT})")
    view.set_defaults(run=_cmd_view)
