"""The ``track`` command: simulate a model under time-varying LQR along a trajectory file (:func:`robodyn.tvlqr`,
then :func:`robodyn.simulate` with its feedback); argument parsing and printing only.

The trajectory file is a CSV with the columns ``t``, the model's states, then its inputs (what ``robodyn optimize``
writes), or a ``.npz`` that ``Trajectory.to_npz`` wrote (states and inputs by name). The run's CSV is the one
``robodyn simulate`` writes.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robodyn.base.errors import InputError
from robodyn.cli.args import add_model, assignments, check_outputs, load_model, number_or
from robodyn.cli.run_output import print_run, print_written, run_summary

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract
    from robodyn.results.trajectory import Trajectory

__all__ = ["add_commands", "read_reference"]


def read_reference(path: str, model: ModelContract) -> Trajectory:
    """The trajectory of ``model`` in ``path`` (module docstring), its columns checked against the model's names."""
    from robodyn.results.trajectory import SimulationStats, Trajectory

    if not Path(path).is_file():
        raise InputError(f"--trajectory {path}: no such file: give the CSV robodyn optimize wrote")
    loaded = Trajectory.load(path, states=model.states)
    if Path(path).suffix.lower() == ".npz":
        if tuple(loaded.inputs) != tuple(model.inputs):
            raise InputError(f"--trajectory {path}: its inputs ({', '.join(loaded.inputs) or 'none'}) are not "
                             f"{model.name!r}'s ({', '.join(model.inputs)})")
        return loaded
    columns = tuple(loaded.outputs) if loaded.y.shape[1] else ()
    if columns != tuple(model.inputs):
        expected = ", ".join(("t", *model.states, *model.inputs))
        raise InputError(f"--trajectory {path}: its columns after the states are ({', '.join(columns) or 'none'}), "
                         f"expected the inputs of {model.name!r}: the columns {expected}")
    return Trajectory(loaded.t, loaded.x, loaded.y, loaded.x, model.states, model.inputs, model.states, model.name,
                      SimulationStats("loaded", "unknown"))


def _weights(texts: list[str] | None, option: str) -> dict[str, float]:
    return assignments(texts, option, {})


def _cmd_track(args: argparse.Namespace) -> int:
    import numpy as np

    from robodyn.control.tracking.tvlqr import tvlqr
    from robodyn.integrate.simulate import simulate
    from robodyn.results.trajectory import Trajectory

    check_outputs(args)
    model = load_model(args)
    reference = read_reference(args.trajectory, model)
    Q, R = _weights(args.Q, "--Q"), _weights(args.R, "--R")
    Qf = None if args.Qf is None else _weights(args.Qf, "--Qf")
    start = dict(zip(model.states, reference.x[0].tolist()))  # states left out start on the trajectory
    start.update(assignments(args.x0, "--x0", model.units()))
    x0 = model.state_vector(start)
    if not np.all(np.isfinite(x0)):
        raise InputError("--x0: the initial state must be finite numbers")
    design = tvlqr(model, reference, Q, R, Qf, discrete=args.discrete, handover=args.handover,
                   interpolation=args.interpolation)
    run = simulate(model, (float(reference.t[0]), float(reference.t[-1])), x0, design.feedback, method=args.method,
                   rtol=number_or(args.rtol, "--rtol", 1e-6), atol=number_or(args.atol, "--atol", 1e-9))
    assert isinstance(run, Trajectory)  # one x0: one trajectory
    from robodyn.base.atomic import write_files_atomic

    if args.out == "-":
        import sys

        sys.stdout.write(run.to_csv_text())
        return 0
    text: str | bytes = run.to_csv_text() if Path(args.out).suffix.lower() == ".csv" else run.to_npz_bytes()
    write_files_atomic({args.out: text})
    _report(model, run, reference, args.out)
    return 0


def _report(model: Any, run: Trajectory, reference: Trajectory, out: str) -> None:
    import numpy as np

    summary = run_summary(run.stats, run.t[0], run.t[-1], run.t.size)
    print_run(model.name, summary, run.states, run.final)
    print(f"distance from the trajectory's end: {float(np.linalg.norm(run.final - reference.x[-1])):.6g}")
    print_written((out,))


def add_commands(commands: Any) -> None:
    """Register ``track`` with the subcommand parsers ``commands``."""
    from robodyn.integrate.methods.registry import ALIASES, METHOD_NAMES

    track = commands.add_parser("track", help="simulate a model under TVLQR along a trajectory file")
    add_model(track)
    track.add_argument("--trajectory", required=True, metavar="FILE",
                       help="CSV with columns t, the states, then the inputs (robodyn optimize's), or a .npz")
    track.add_argument("--Q", action="append", required=True, metavar="NAME=WEIGHT,...",
                       help="state weights (the diagonal of Q; states left out weigh 0)")
    track.add_argument("--R", action="append", required=True, metavar="NAME=WEIGHT,...",
                       help="input weights (the diagonal of R; every input needs a positive weight)")
    track.add_argument("--Qf", action="append", metavar="NAME=WEIGHT,...", help="terminal weights (default: Q)")
    track.add_argument("--x0", action="append", metavar="NAME=VALUE,...",
                       help="initial state (states left out start on the trajectory)")
    track.add_argument("--discrete", action="store_true",
                       help="the discrete-time design (exact ZOH model per interval) instead of the Riccati ODE")
    track.add_argument("--handover", action="store_true",
                       help="Qf from the infinite-horizon LQR at the final point (not with --Qf)")
    track.add_argument("--interpolation", choices=("hold", "linear"), default="hold",
                       help="the inputs between the trajectory's rows: held (default: DDP's) or linear (collocation's)")
    track.add_argument("--method", choices=(*METHOD_NAMES, *ALIASES), type=str.lower,
                       help="the closed loop's integrator (default dopri5)")
    track.add_argument("--rtol", help="relative tolerance (default 1e-6)")
    track.add_argument("--atol", help="absolute tolerance (default 1e-9)")
    track.add_argument("--out", required=True, metavar="FILE", help="write the run: .csv, .npz, or - for CSV on stdout")
    track.set_defaults(run=_cmd_track)
