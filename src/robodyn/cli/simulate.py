"""The ``simulate`` command: argument parsing and printing only; the work is :func:`robodyn.simulate`'s.

A warm ``robodyn simulate MODEL --out x.csv`` is the command users run most and the one whose start-up they feel:
this module imports at its top only what parsing needs, and each option's machinery when the option is given
(signals for ``--input``, frames for ``--output``, plots for ``--plot``).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robodyn.base.errors import InputError, RobodynWarning
from robodyn.cli.args import add_model, assignments, check_outputs, load_model, number, number_or
from robodyn.cli.run_output import print_run, print_written, run_summary, values_text
from robodyn.integrate.methods.registry import ALIASES, METHOD_NAMES

if TYPE_CHECKING:
    from robodyn.results.trajectory import Trajectory

__all__ = ["add_commands"]


def _output_grid(model: Any, points: int | None, t0: float, t_final: float) -> Any:
    """``--points`` evenly spaced output times (checked against the memory they take), or None."""
    if points is None:
        return None
    if points < 2:
        raise InputError(f"--points must be at least 2, got {points}")
    import numpy as np

    from robodyn.integrate.guards import check_memory

    check_memory(model, 1, points)
    return np.linspace(t0, t_final, points) if t_final > t0 else None


def _cmd_simulate(args: argparse.Namespace) -> int:
    from robodyn.integrate.simulate import simulate
    from robodyn.results.trajectory import Trajectory

    check_outputs(args)
    model = load_model(args, numeric=True)  # from the parsed-model cache when warm (robodyn.files.cached)
    names = None
    if args.output is not None:
        from robodyn.cli.kinematics import output_names

        names = output_names(model, args.output)  # checked before the run
    x0 = None if args.x0 is None else assignments(args.x0, "--x0", model.units())  # None: the model's own start
    inputs = None
    if args.input:
        from robodyn.files.signal_text import parse_input_assignments

        inputs = parse_input_assignments(args.input, model.inputs)
    t0 = number_or(args.t0, "--t0", 0.0)
    t_final = number_or(args.t_final, "--t-final", 0.0)
    t_eval = _output_grid(model, args.points, t0, t_final)
    assembled = args.x0 is None and not args.assemble and _off_constraints(model, t0)  # the default start: closed
    with warnings.catch_warnings(record=True) as noted:  # robodyn's own (a run past its joint limits): printed
        warnings.simplefilter("always", RobodynWarning)
        trajectory = simulate(
            model, (t0, t_final), x0, inputs, method=args.method,
            rtol=number_or(args.rtol, "--rtol", 1e-6), atol=number_or(args.atol, "--atol", 1e-9),
            dt=number(args.dt, "--dt"), t_eval=t_eval, limits=args.limits, assemble=args.assemble or assembled,
            sensitivities=_sensitivity_names(args.sensitivities),
        )
    assert isinstance(trajectory, Trajectory)  # one x0: one trajectory
    start = _assembled_start(trajectory) if assembled else None
    if names is not None:
        from robodyn.cli.kinematics import select_outputs

        trajectory = select_outputs(model, trajectory, names)
    if args.out == "-":
        sys.stdout.write(trajectory.to_csv_text())
        if start:
            print(f"robodyn: {start}", file=sys.stderr)
        _remember(args, model, trajectory, noted)
        return 0
    from robodyn.base.atomic import write_files_atomic

    files: dict[str, str | bytes] = {}  # drawn before anything is written, then written as one operation
    if args.out:
        files[args.out] = (trajectory.to_csv_text() if Path(args.out).suffix.lower() == ".csv"
                           else trajectory.to_npz_bytes())
    if args.plot:
        from robodyn.results.plots import figure_bytes

        files[args.plot] = figure_bytes(trajectory.plot(), args.plot)
    write_files_atomic(files)
    if start:
        print(start)
    _report(model.name, trajectory, noted, (args.out, args.plot))
    _remember(args, model, trajectory, noted)
    return 0


def _off_constraints(model: Any, t0: float) -> bool:
    """Whether ``model`` has constraints (closed loops) that its default start, the zero state, does not satisfy."""
    constraints = model.constraints()
    if constraints is None:
        return False
    from robodyn.mechanisms.loops.constraints import CONSISTENCY_TOLERANCE

    residuals = constraints.residuals(t0, model.state_vector({}, default=0.0), model.parameter_vector())
    return not all(abs(value) <= CONSISTENCY_TOLERANCE for value in residuals.values())


def _assembled_start(trajectory: Trajectory) -> str:
    """The line that says the default start was assembled, and what it became."""
    start = values_text(trajectory.states, trajectory.x[0])
    return (f"start: no --x0 given and the zero state is off the constraints: assembled from it, keeping the "
            f"independent coordinates and velocities (as --assemble): {start}")


def _remember(args: argparse.Namespace, model: Any, trajectory: Trajectory, noted: list[Any]) -> None:
    """After a plain run of a cached model (only the options robodyn.cli.quick takes, nothing warned, no events, no
    position limits, y = x), keep its run image: the next such command runs without numpy (robodyn.cli.quick). The
    exact path's image also serves runs with constant inputs (``--input NAME=NUMBER``)."""
    key = model.record_key
    plain = not (args.output or args.plot or args.dt or args.param or args.base or args.assemble
                 or args.sensitivities or args.limits != "warn" or noted or trajectory.events)
    if not (plain and key and model.outputs_are_states and not model.position_limits()):
        return
    if trajectory.stats.path == "exact" and all(_constant_input(text) for text in args.input or ()):
        _remember_exact(args, model, trajectory, key)
    if args.input or trajectory.stats.path != "compiled":
        return
    from robodyn.integrate import hint
    from robodyn.integrate.kernels.native import native_kernels
    from robodyn.integrate.kernels.run import MIN_RTOL
    from robodyn.integrate.kernels.run_image import remember

    n, m = model.n_states, model.n_inputs
    remember(native_kernels(), key, args.method or "", {
        "name": model.name, "method_name": trajectory.stats.method, "states": list(model.states),
        "parameters": list(model.parameters.values()), "row_bytes": 8 * (2 * n + m + len(model.outputs)),
        "hint": (hint.MIN_STEPS, hint.MIN_REJECTED)}, MIN_RTOL)


def _constant_input(text: str) -> bool:
    """Whether ``--input`` ``text`` is ``NAME=NUMBER``: a constant, on which the exact path's generator does not
    depend."""
    from robodyn.base.names import plain_number

    return plain_number(text.partition("=")[2]) is not None


def _remember_exact(args: argparse.Namespace, model: Any, trajectory: Trajectory, key: str) -> None:
    """The exact run's image (robodyn.integrate.paths.exact_image): the generator and the exponentials it stepped
    with."""
    from robodyn.integrate.kernels.run_image import remember_exact
    from robodyn.linear.exact import exact_transitions, with_constant

    A, B, c = model.affine_form(trajectory.params)
    B_all, _ = with_constant(B, c, [None] * model.n_inputs)
    fields = exact_transitions(A, B_all, trajectory.t, float(trajectory.t[0]))
    if fields is not None:
        n, m = model.n_states, model.n_inputs
        remember_exact(key, args.method or "", {
            "name": model.name, "states": list(model.states), "inputs": list(model.inputs),
            "constant": B_all.shape[1] > m, "row_bytes": 8 * (2 * n + m + len(model.outputs))}, fields)


def _sensitivity_names(given: list[str] | None) -> list[str] | None:
    """The names of ``--sensitivities`` (comma-separated, the option repeatable), or None without the option."""
    if given is None:
        return None
    names = [part.strip() for text in given for part in text.split(",")]
    if not all(names):
        raise InputError(f"--sensitivities {','.join(given)!r}: an empty name: give x0, states or parameters "
                         "separated by commas, e.g. --sensitivities x0,k")
    return names


def _report(name: str, trajectory: Any, noted: list[warnings.WarningMessage], written: tuple[str | None, ...]) -> None:
    """The run's summary, final state, events, hint and robodyn's warnings, then the files written."""
    stats = trajectory.stats
    summary = run_summary(stats, trajectory.t[0], trajectory.t[-1], trajectory.t.size)
    if trajectory.states:
        print_run(name, summary, trajectory.states, trajectory.final)
    else:  # a sampled block without states: its outputs
        print_run(name, summary, trajectory.outputs, trajectory.y[-1], what="final outputs")
    for sensitivity in trajectory.sensitivity_names:
        final = values_text(trajectory.states, trajectory.sensitivity(sensitivity)[-1])
        print(f"d(final state)/d({sensitivity}): {final}")
    if trajectory.sensitivity_method:
        print(f"sensitivities: {trajectory.sensitivity_method}, error-controlled with the state")
    for event in trajectory.events:
        print(f"event {event.name} at t = {event.t:.12g}")
    if stats.hint:
        print(f"hint: {stats.hint}")
    for note in noted:
        if issubclass(note.category, RobodynWarning):
            print(f"warning: {note.message}")
    print_written(written)


def add_commands(commands: Any) -> None:
    """Register ``simulate`` with the subcommand parsers ``commands``."""
    simulate = commands.add_parser("simulate", help="simulate a model; write CSV/NPZ and a plot")
    add_model(simulate)
    simulate.add_argument("--t-final", required=True, metavar="T", help="final time (pi and arithmetic allowed)")
    simulate.add_argument("--t0", metavar="T0", help="initial time (default 0)")
    simulate.add_argument("--x0", action="append", metavar="NAME=VALUE,...",
                          help="initial state (others 0; without it: the model's initial state)")
    simulate.add_argument("--input", action="append", metavar="NAME=SIGNAL",
                          help="input signal, e.g. u=1, u=step(0.5, 0, 1), u=sine(1, 2, 0, 0), u=table(u.csv)")
    simulate.add_argument("--method", choices=(*METHOD_NAMES, *ALIASES), type=str.lower,
                          help="default: exact for linear models, else dopri5; radau for stiff problems")
    simulate.add_argument("--dt", help="step of euler, heun and rk4")
    simulate.add_argument("--rtol", help="relative tolerance (default 1e-6)")
    simulate.add_argument("--atol", help="absolute tolerance (default 1e-9)")
    simulate.add_argument("--points", type=int, help="number of evenly spaced output times")
    simulate.add_argument("--limits", choices=("warn", "events", "ignore"), default="warn",
                          help="joint position limits: warn when the run leaves them (default), stop there, or ignore")
    simulate.add_argument("--assemble", action="store_true",
                          help="close a mechanism's loops from x0 first (its independent coordinates kept)")
    simulate.add_argument("--sensitivities", action="append", metavar="NAME,...",
                          help="also integrate dx/dNAME for parameters and initial states (x0: every state); "
                               "written as columns d(state)/d(NAME) to --out")
    simulate.add_argument("--out", metavar="FILE", help="write the trajectory: .csv, .npz, or - for CSV on stdout")
    simulate.add_argument("--plot", metavar="FILE.png", help="write a plot of the trajectory (.png, .svg or .pdf)")
    simulate.add_argument("--output", action="append", metavar="NAME,...",
                          help="record these outputs: the model's, or FRAME.QUANTITY (position, orientation, "
                               "velocity, angular_velocity) of a robot's frame, e.g. tool0.position")
    simulate.set_defaults(run=_cmd_simulate)
