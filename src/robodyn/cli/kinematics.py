"""The kinematics commands of ``robodyn``: ``fk``, ``ik`` and ``animate``, and ``simulate --output``.

JSON keys are a promise to scripts: ``fk`` prints ``frame``, ``position`` (3), ``rotation`` (3x3),
``quaternion`` (w, x, y, z), ``rpy`` and with ``--jacobian`` the 6 x n ``jacobian`` (linear-velocity rows,
then angular, world axes at the frame origin); ``ik`` prints ``q`` ({coordinate: value}), ``residual``,
``reachable``, ``iterations`` (and ``frame``, ``position_error``, ``orientation_error``).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from robodyn.base.errors import ConvergenceError, InputError, UnknownNameError
from robodyn.base.names import split_degrees
from robodyn.cli.args import add_json, add_model, assignments, load_model, quantities
from robodyn.model.quantities import Quantity, parse_number
from robodyn.results.trajectory import Trajectory

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["add_commands", "output_names", "select_outputs"]


def _configuration(model: ModelContract, texts: list[str] | None) -> dict[str, float]:
    from robodyn.kinematics import kinematics

    values = assignments(texts, "--at", model.units())
    coordinates = kinematics(model).coordinates
    unknown = [name for name in values if name not in coordinates]
    if unknown:
        raise InputError(f"--at: {unknown[0]!r} is not a coordinate of {model.name!r}: give joint angles or positions "
                         f"({', '.join(coordinates)})")
    return values


def _cmd_fk(args: argparse.Namespace) -> int:
    from robodyn.kinematics import kinematics

    model = load_model(args)
    K = kinematics(model)
    q = _configuration(model, args.at)
    pose = K.pose(q, args.frame)
    result = pose.as_dict()
    if args.jacobian:
        result["jacobian"] = K.jacobian(q, pose.frame).tolist()
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"frame      {pose.frame} of {model.name} at " + ", ".join(f"{c} = {q.get(c, 0.0):g}" for c in K.coordinates))
    print("position   " + "  ".join(f"{v:.10g}" for v in pose.position) + "  (m)")
    print("rpy        " + "  ".join(f"{v:.10g}" for v in pose.rpy) + "  (rad: R = Rz(yaw) Ry(pitch) Rx(roll))")
    print("quaternion " + "  ".join(f"{v:.10g}" for v in pose.quaternion) + "  (w, x, y, z)")
    for k, row in enumerate(pose.rotation):
        print(("rotation   " if k == 0 else "           ") + "  ".join(f"{v:13.10f}" for v in row))
    if args.jacobian:
        print(f"jacobian   (world axes at the frame origin; columns {', '.join(K.coordinates)})")
        for label, row in zip(("vx", "vy", "vz", "wx", "wy", "wz"), result["jacobian"]):
            print(f"  {label}  " + "  ".join(f"{v:11.6f}" for v in row))
    return 0


#: The numbers of ``ik --target``: a position, then roll, pitch, yaw.
_TARGET_UNITS: Final = {"x": "m", "y": "m", "z": "m", "roll": "rad", "pitch": "rad", "yaw": "rad"}


def _target(text: str) -> tuple[np.ndarray, np.ndarray | None]:
    """``x,y,z`` (m) or ``x,y,z,roll,pitch,yaw`` (m and rad; an angle may be given in degrees, ``90deg``)."""
    parts = text.split(",")
    if len(parts) not in (3, 6):
        raise InputError(f"--target {text}: give x,y,z (m) or x,y,z,roll,pitch,yaw (m and rad, or deg: 90deg)")
    given = {}
    for name, part in zip(_TARGET_UNITS, parts):
        number, degrees = split_degrees(part)
        given[name] = Quantity(parse_number(number, where=f"--target {name}"), degrees)
    values = list(quantities(given, _TARGET_UNITS, "--target").values())
    return np.array(values[:3]), (np.array(values[3:]) if len(values) == 6 else None)


def _cmd_ik(args: argparse.Namespace) -> int:
    from robodyn.kinematics import kinematics
    from robodyn.kinematics.ik import check_search, inverse_kinematics

    model = load_model(args)
    check_search(args.starts, args.seed, len(kinematics(model).coordinates),
                 options={"starts": "--starts", "seed": "--seed"})  # before the target is parsed, before any work
    position, orientation = _target(args.target)
    tolerance = 1e-10 if args.tolerance is None else parse_number(args.tolerance, where="--tolerance")
    result = inverse_kinematics(model, position, orientation=orientation, frame=args.frame, starts=args.starts,
                                seed=args.seed, tolerance=tolerance, q0=_configuration(model, args.at) or None)
    if args.json:
        print(json.dumps(result.as_dict()))
    else:
        print(f"frame {result.frame} of {model.name}: {'reached' if result.reachable else 'NOT reached'} in "
              f"{result.iterations} iterations, residual {result.residual:.3g} (position error "
              f"{result.position_error:.3g} m, orientation error {result.orientation_error:.3g} rad)")
        print("q: " + ", ".join(f"{c} = {v:.12g}" for c, v in result.q.items()))
    if not result.reachable:
        raise ConvergenceError(f"ik: the target is not reachable by frame {result.frame!r}: the best of {args.starts} "
                               f"starts stops {result.residual:.3g} from it (more --starts, another --at start, or a "
                               "target inside the workspace)")
    return 0


def _cmd_animate(args: argparse.Namespace) -> int:
    import robodyn
    from robodyn.kinematics import kinematics
    from robodyn.kinematics.animate import animate, check_options

    solid = args.render == "3d"  # drawn by the 3-D view in headless Chromium (robodyn.viewer.render)
    check_options(None if solid else args.out, fps=args.fps, max_frames=args.frames,
                  options={"out": "--out", "fps": "--fps", "max_frames": "--frames"})  # before any work
    if solid:
        from robodyn.viewer.render import check_render

        if args.frame is not None:
            raise InputError("animate: --frame traces a frame in the stick animation: drop it with --render 3d")
        check_render(args.out)
    model = load_model(args)
    kinematics(model).frame_name(args.frame)  # no frames, an unknown frame: a clear error before simulating
    t_final = parse_number(args.t_final, where="--t-final")
    trajectory = robodyn.simulate(model, t_final, assignments(args.x0, "--x0", model.units()), method=args.method)
    assert isinstance(trajectory, Trajectory)
    if solid:
        from robodyn.viewer.render import render_gif

        render_gif(trajectory, args.out, model=model, fps=args.fps, max_frames=args.frames)
    else:
        animate(trajectory, args.out, frame=args.frame, fps=args.fps, max_frames=args.frames)
    print(f"{model.name}: {len(trajectory)} points over [0, {t_final:g}] s; wrote {args.out}")
    return 0


def output_names(model: ModelContract, texts: list[str]) -> list[str]:
    """The names of ``--output NAME,...`` (repeatable), each checked against ``model`` before the run: an
    output of the model, or ``FRAME.QUANTITY`` of one of its frames. InputError (UnknownNameError for a
    frame) naming the option; none at all (``--output ""``) is refused too."""
    names = [name.strip() for text in texts for name in text.split(",") if name.strip()]
    if not names:
        raise InputError(f"--output {' '.join(texts)!r:.60}: no output named: give NAME,... (outputs of "
                         f"{model.name!r}: {', '.join(model.outputs)}; or FRAME.QUANTITY such as tool0.position)")
    for k, name in enumerate(names):
        if name in names[:k]:
            raise InputError(f"--output: {name!r} is named twice: name each output once")
        _frame_and_quantity(model, model.outputs, name)
    return names


def _frame_and_quantity(model: ModelContract, outputs: tuple[str, ...], name: str) -> tuple[str, str] | None:
    """None for an output of the model; (frame, quantity) for ``FRAME.QUANTITY``; InputError otherwise."""
    from robodyn.mechanisms.chain.outputs import QUANTITIES  # imports sympy and the tape compiler

    if name in outputs:
        return None
    frame, _, quantity = name.rpartition(".")
    if not frame or quantity not in QUANTITIES:
        raise InputError(f"--output {name}: not an output of {model.name!r} ({', '.join(outputs)}) nor "
                         f"FRAME.QUANTITY with a quantity of {', '.join(QUANTITIES)}")
    from robodyn.kinematics import kinematics

    if model.kinematics() is None:
        raise InputError(f"--output {name}: model {model.name!r} ({model.kind}) has no frames: name one of its outputs "
                         f"({', '.join(outputs)})")
    try:
        kinematics(model).frame_name(frame)
    except UnknownNameError as exc:
        raise UnknownNameError(f"--output {name}: {exc}") from None
    return frame, quantity


def select_outputs(model: ModelContract, trajectory: Trajectory, names: list[str]) -> Trajectory:
    """The trajectory with its outputs replaced by ``names``: outputs of the model, or ``FRAME.QUANTITY`` (one
    of position, orientation, velocity, angular_velocity) computed from the run's states."""
    from robodyn.mechanisms.chain.outputs import QUANTITIES  # imports sympy and the tape compiler

    columns: list[str] = []
    blocks: list[np.ndarray] = []
    for name in names:
        split = _frame_and_quantity(model, trajectory.outputs, name)
        if split is None:
            columns.append(name)
            blocks.append(trajectory.y[:, [trajectory.outputs.index(name)]])
            continue
        frame, quantity = split
        columns += [f"{frame}_{c}" for c in QUANTITIES[quantity]]
        blocks.append(_frame_quantity(model, trajectory, frame, quantity))
    found = trajectory.output_sensitivities if trajectory.output_sensitivities is not None else (
        trajectory.sensitivities if trajectory.outputs == trajectory.states else None)
    kept = None if found is None or not all(c in trajectory.outputs for c in columns) else \
        found[:, :, [trajectory.outputs.index(c) for c in columns]]  # the outputs' sensitivities, when all are
    return Trajectory(trajectory.t, trajectory.x, trajectory.u, np.hstack(blocks), trajectory.states,
                      trajectory.inputs, tuple(columns), trajectory.model, trajectory.stats, trajectory.events,
                      source=trajectory.source, params=trajectory.params, sensitivities=trajectory.sensitivities,
                      output_sensitivities=kept, sensitivity_names=trajectory.sensitivity_names,
                      sensitivity_method=trajectory.sensitivity_method)


def _frame_quantity(model: ModelContract, trajectory: Trajectory, frame: str, quantity: str) -> Any:
    from robodyn.kinematics import kinematics

    K = kinematics(model)
    n = len(K.coordinates)
    q, qd = trajectory.x[:, :n], trajectory.x[:, n:]
    if quantity == "position":
        return K.pose(q, frame).position
    if quantity == "orientation":
        return K.pose(q, frame).rpy
    twist = K.velocity(q, qd, frame)
    return twist[:, :3] if quantity == "velocity" else twist[:, 3:]


def add_commands(commands: Any) -> None:
    """Add ``fk``, ``ik`` and ``animate`` to the ``robodyn`` subcommands."""
    fk = commands.add_parser("fk", help="forward kinematics: the pose (and Jacobian) of a frame")
    add_model(fk)
    fk.add_argument("--at", action="append", metavar="NAME=VALUE,...", help="joint coordinates (others 0)")
    fk.add_argument("--frame", help="the frame (default: the tool, the last frame nothing hangs from)")
    fk.add_argument("--jacobian", action="store_true", help="also the 6 x n geometric Jacobian")
    add_json(fk)
    fk.set_defaults(run=_cmd_fk)
    ik = commands.add_parser("ik", help="inverse kinematics: joint coordinates that reach a target")
    add_model(ik)
    ik.add_argument("--target", required=True, metavar="X,Y,Z[,R,P,Y]", help="position (m) [and roll, pitch, yaw]")
    ik.add_argument("--frame", help="the frame to place (default: the tool)")
    ik.add_argument("--at", action="append", metavar="NAME=VALUE,...", help="the first start (others: random)")
    ik.add_argument("--starts", type=int, default=8, help="starts tried together (default 8)")
    ik.add_argument("--seed", type=int, default=0, help="seed of the random starts (default 0)")
    ik.add_argument("--tolerance", metavar="TOL", help="residual that counts as reached (default 1e-10)")
    add_json(ik)
    ik.set_defaults(run=_cmd_ik)
    animate = commands.add_parser("animate", help="simulate and write an animation of the arm (GIF or MP4)")
    add_model(animate)
    animate.add_argument("--t-final", required=True, metavar="T", help="final time")
    animate.add_argument("--x0", action="append", metavar="NAME=VALUE,...", help="initial state (others 0)")
    animate.add_argument("--method", help="integration method (default: dopri5)")
    animate.add_argument("--frame", help="the frame whose path is traced (default: the tool)")
    animate.add_argument("--fps", type=int, default=25, help="frames per second (default 25)")
    animate.add_argument("--frames", type=int, default=200, help="at most this many frames (default 200)")
    animate.add_argument("--out", required=True, metavar="FILE.gif", help="the animation: .gif or .mp4")
    animate.add_argument("--render", choices=("sticks", "3d"), default="sticks",
                         help="sticks (default: matplotlib) or 3d: the robot with its meshes, drawn by the 3-D view "
                              "in headless Chromium (a GIF)")
    animate.set_defaults(run=_cmd_animate)
