"""The model commands: show, classify, modes, existence, equilibrium, linearize, validity, convert, verify
(``simulate`` is :mod:`robodyn.cli.simulate`'s). Argument parsing and printing only; the work is done by the public
API.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import robodyn
from robodyn.base.atomic import check_output_path, write_bytes_atomic, write_text_atomic
from robodyn.base.budget import MAX_PRETTY_NODES, shown, within
from robodyn.base.errors import InputError
from robodyn.cli.args import add_json as _add_json
from robodyn.cli.args import add_model as _add_model
from robodyn.cli.args import add_point as _add_point
from robodyn.cli.args import assignments as _assignments
from robodyn.cli.args import check_outputs as _check_outputs
from robodyn.cli.args import load_model as _model
from robodyn.cli.args import number as _number
from robodyn.cli.args import number_or as _number_or
from robodyn.cli.args import write_plot as _write_plot

# The other analyses (scipy.optimize, scipy.integrate, scipy.sparse, ...) are imported by the commands
# that use them, so that `robodyn show` and `robodyn simulate` do not pay ~0.2 s for them at start-up.
from robodyn.linearization import LINEARIZATION_METHODS as LINEARIZE_METHODS

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["add_commands"]

_HOLDING_POINT = "states and inputs; states left out are 0, inputs default to the holding input"


# --- show --------------------------------------------------------------------------------------------
def _describe(model: ModelContract) -> list[str]:
    lines = [f"model    {model.name} ({model.kind})", f"states   {', '.join(model.states)}",
             f"inputs   {', '.join(model.inputs) or '(none)'}"]
    if model.outputs != model.states:
        lines.append(f"outputs  {', '.join(model.outputs)}")
    if model.parameters:
        units = model.units()
        lines.append("params   " + ", ".join(f"{k} = {v:g}" + (f" {units[k]}" if k in units else "")
                                           for k, v in model.parameters.items()))
    return lines


def _damping_lines(model: ModelContract) -> list[str]:
    info = model.scalar_damping()
    if info is None:
        return []
    if info.omega_n is None:
        return [f"regime   {info.regime} (omega_n undefined)"]
    return [f"omega_n  {info.omega_n:.10g} rad/s", f"zeta     {info.zeta:.10g}", f"regime   {info.regime}"]


def _cmd_show(args: argparse.Namespace) -> int:
    import sympy

    model = _model(args)
    terms = model.equation_terms() or []
    if args.latex:
        latex = model.latex_text()
        if latex is None:
            raise InputError(f"model {model.name!r} has no symbolic equations to print as LaTeX")
        blocks = [latex]
        table: Any = model.symbol_table()  # a model with LaTeX text is symbolic: its table typesets
        blocks += [f"{name} = {table.latex_expr(value)}" for name, value in terms]
        print("\n\n".join(blocks))
        return 0
    equations = model.show_text()
    damping = _damping_lines(model)
    derived = [f"derived  {k} = {v}" for k, v in model.derived_parameters.items()]
    lines = [*_describe(model), *derived, "", equations, *(["", *damping] if damping else [])]
    for name, value in terms:  # drawn in two dimensions when small, else on one line (robodyn.base.budget)
        text = sympy.pretty(value, use_unicode=False, wrap_line=False) if within(value, MAX_PRETTY_NODES) \
            else shown(value, sympy.sstr)
        lines += ["", f"{name} =", text]
    print("\n".join(lines))
    return 0


# --- classify ----------------------------------------------------------------------------------------
def _cmd_classify(args: argparse.Namespace) -> int:
    result = robodyn.classify(_model(args))
    print(json.dumps(result.to_dict(), indent=2) if args.json else result)
    return 0


# --- verify ------------------------------------------------------------------------------------------
def _cmd_verify(args: argparse.Namespace) -> int:
    from robodyn.analysis.verify import verify
    from robodyn.base.atomic import check_output_folder, path_component

    model = _model(args)
    plot = Path(args.out) / f"verify_{path_component(model.name)}.png"  # a model's name is free text
    check_output_path(plot, "--out")
    check_output_folder(args.out, "--out")  # and not "" (the plot would land in the working folder)
    result = verify(model, t_final=_number_or(args.t_final, "--t-final", 2.0))
    write_bytes_atomic(plot, result.png())
    print(json.dumps(result.to_dict(), indent=2) if args.json else result.table())
    if not args.json:
        print(f"wrote {plot}")
    return 0 if result.passed else 1


# --- modes and existence ------------------------------------------------------------------------------
def _point(model: ModelContract, text: Sequence[str] | None, option: str) -> tuple[dict[str, float], dict[str, float]]:
    """``--at`` values split into states and inputs (names left out are 0)."""
    values = _assignments(text, option, model.units())
    unknown = [n for n in values if n not in model.states and n not in model.inputs]
    if unknown:
        model.state_vector({unknown[0]: 0.0}, default=0.0)  # raises with a did-you-mean over the states
    return ({n: v for n, v in values.items() if n in model.states},
            {n: v for n, v in values.items() if n in model.inputs})


def _cmd_modes(args: argparse.Namespace) -> int:
    from robodyn.linear.modes import modes

    model = _model(args)
    x, u = _point(model, args.at, "--at")
    linear = model.linear_model()
    if linear is None:  # nonlinear models are linearized at the point first (exact where the model allows)
        # loops: the states left out assembled; a moving base: its rotation left out is none (not a zero quaternion)
        mapped = model.constraints() is not None or model.chart() is not None
        point = x if mapped else model.state_vector(x, default=0.0)
        linear = robodyn.linearize(model, point, u)
    result = modes(linear)
    reach, see = linear.controllability(), linear.observability()  # one verdict each: robodyn.linear.controllability
    if args.json:
        data = result.to_dict()
        for key, word, test in (("controllability", "controllable", reach), ("observability", "observable", see)):
            full = test.to_dict()
            data[key] = {name: full[name] for name in ("full", word, "failing", "nearly", "rank", "explanation")}
        print(json.dumps(data, indent=2))
    else:
        print("\n".join([result.table(), "", reach.explanation, see.explanation]))
    return 0


def _cmd_existence(args: argparse.Namespace) -> int:
    from robodyn.analysis.existence import existence

    model = _model(args)
    x0 = model.state_vector(_assignments(args.x0, "--x0", model.units()), default=0.0)
    inputs = _assignments(args.input, "--input", model.units())
    result = existence(model, x0, _number_or(args.radius, "--radius", 0.0),
                       _number_or(args.horizon, "--horizon", 1.0), u=inputs or None)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        data = result.to_dict()
        for key in ("M", "L", "delta", "contraction", "rigorous"):
            print(f"{key:<12}{data[key]}")
        print(result.explanation)
    return 0


# --- equilibrium and linearize --------------------------------------------------------------------------
def _cmd_equilibrium(args: argparse.Namespace) -> int:
    from robodyn.linearization.equilibrium import find_equilibrium
    from robodyn.linearization.families import families

    model = _model(args)
    fixed = _assignments(args.fix, "--fix", model.units())
    targets = _assignments(args.target, "--target", model.units()) or None
    points = find_equilibrium(model, fix=fixed, starts=args.starts, targets=targets)
    found = families(model, points, fixed=tuple(fixed), targets=targets)  # one per continuous family
    if args.json:
        print(json.dumps({"equilibria": [family.point.to_dict() for family in found],
                          "families": [{"continuous": family.continuous, "moving": list(family.moving),
                                        "members": family.members} for family in found]}, indent=2))
    else:
        print("\n\n".join(str(family.point) + (
            f"\n(one of a continuous family: every point moved along {', '.join(family.moving)} together is an "
            f"equilibrium too; {family.members} of the points found)" if family.continuous else "")
            for family in found))
    return 0


def _linear_text(name: str, linear: robodyn.LinearSystem) -> str:
    """The point, A, B, C, D labelled by the state, input and output names (round-off shown as 0:
    robodyn.display.text) and the eigenvalues."""
    from robodyn.display import cleaned
    from robodyn.display.text import complex_text, matrix_text, number_text, packed

    assert linear.x_op is not None and linear.u_op is not None
    point = [f"{n} = {number_text(v)}" for n, v in zip((*linear.states, *linear.inputs),
                                                       cleaned(np.concatenate([linear.x_op, linear.u_op])))]
    lines = packed(f"{name} linearized ({linear.method}) at ", point)
    for label, rows, columns, meaning in (("A", linear.states, linear.states, "df/dx"),
                                          ("B", linear.states, linear.inputs, "df/du"),
                                          ("C", linear.outputs, linear.states, "dh/dx"),
                                          ("D", linear.outputs, linear.inputs, "dh/du")):
        lines += ["", f"{label} = {meaning}", matrix_text(label, getattr(linear, label), rows, columns)]
    values = linear.eigenvalues
    shown = cleaned(values, scale=float(np.max(np.abs(values), initial=0.0)))
    values_text = [complex_text(value) for value in shown]
    if linear.dt is not None:
        values_text[-1] += f" (discrete time, dt = {linear.dt:g} s)"
    lines += ["", *packed("poles z: " if linear.dt is not None else "eigenvalues: ", values_text)]
    return "\n".join(lines)


def _cmd_linearize(args: argparse.Namespace) -> int:
    from robodyn.linearization.linearize import operating_point  # the one rule for --at (docs/cli.md)

    model = _model(args, numeric=True, same_numbers=True)  # a diagram from its record when warm: no sympy
    x, u = operating_point(model, *_point(model, args.at, "--at"))
    linear = robodyn.linearize(model, x, u, method=args.method, open=args.open)
    assert linear.x_op is not None and linear.u_op is not None
    values = linear.eigenvalues
    data = {"states": list(linear.states), "inputs": list(linear.inputs), "outputs": list(linear.outputs),
            "x": linear.x_op.tolist(), "u": linear.u_op.tolist(), "A": linear.A.tolist(), "B": linear.B.tolist(),
            "C": linear.C.tolist(), "D": linear.D.tolist(),
            "eigenvalues": [[float(v.real), float(v.imag)] for v in values], "method": linear.method,
            "error_estimate": linear.error_estimate}
    if linear.dt is not None:
        data["dt"] = linear.dt
    margins = linear.margins() if args.open else None
    if margins is not None:
        data["open"] = args.open
        data["margins"] = margins.to_dict()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(_linear_text(model.name, linear))
    if margins is not None:
        print(f"loop transfer L at {args.open} (returned = -L injected): {margins.text()}")
        for note in margins.notes:
            print(f"note: {note}")
    return 0


def _cmd_validity(args: argparse.Namespace) -> int:
    from robodyn.linearization.linearize import operating_point
    from robodyn.linearization.validity import validity

    model = _model(args)
    x, u = operating_point(model, *_point(model, args.at, "--at"))
    horizon = _number(args.horizon, "--horizon")
    _check_outputs(args)
    result = validity(model, x, u, tolerance=_number_or(args.tolerance, "--tolerance", 0.05),
                      horizon=horizon)
    if args.plot:
        _write_plot(args.plot, result.plot())
    print(json.dumps(result.to_dict(), indent=2) if args.json else result.text())
    return 0


# --- convert -----------------------------------------------------------------------------------------
def _cmd_convert(args: argparse.Namespace) -> int:
    from robodyn.mechanisms.urdf.chain import chain_from_urdf, chain_yaml

    if Path(args.to).suffix.lower() not in (".yaml", ".yml"):
        raise InputError(f"--to {args.to}: the chain file is YAML: name a .yaml file")
    check_output_path(args.to, "--to")
    if str(args.urdf).lower().endswith(".xml"):  # MuJoCo's MJCF
        from robodyn.files.loading import load
        from robodyn.mechanisms.mjcf.convert import mjcf_chain_yaml

        model: Any = load(args.urdf, dynamics=not args.no_dynamics)  # every check of the robot, before writing
        text = mjcf_chain_yaml(args.urdf, dynamics=not args.no_dynamics)
    else:
        text = chain_yaml(args.urdf, dynamics=not args.no_dynamics)
        model = chain_from_urdf(args.urdf, dynamics=not args.no_dynamics)  # every check of the robot, before writing
    write_text_atomic(args.to, text)
    print(f"{model.name}: {len(model.states)} states, {len(model.inputs)} inputs; wrote {args.to}")
    return 0


def add_commands(commands: Any) -> None:
    """Register the model commands with the subcommand parsers ``commands``."""
    show = commands.add_parser("show", help="print a model's equations")
    _add_model(show)
    show.add_argument("--latex", action="store_true", help="print the equations as LaTeX")
    show.set_defaults(run=_cmd_show)

    classify = commands.add_parser("classify", help="order, linearity, time invariance, forcing, autonomy")
    _add_model(classify)
    _add_json(classify)
    classify.set_defaults(run=_cmd_classify)

    modes_command = commands.add_parser("modes", help="eigenvalues, natural frequencies, damping, stability")
    _add_model(modes_command)
    _add_point(modes_command, "operating point for nonlinear models (states and inputs; others 0)")
    _add_json(modes_command)
    modes_command.set_defaults(run=_cmd_modes)

    exists = commands.add_parser("existence", help="Picard-Lindelof: Lipschitz constant, guaranteed interval")
    _add_model(exists)
    exists.add_argument("--x0", action="append", required=True, metavar="NAME=VALUE,...", help="initial state")
    exists.add_argument("--radius", required=True, metavar="A", help="half-width of the box around x0")
    exists.add_argument("--horizon", metavar="H", help="time horizon (default 1)")
    exists.add_argument("--input", action="append", metavar="NAME=VALUE,...", help="constant inputs (others 0)")
    _add_json(exists)
    exists.set_defaults(run=_cmd_existence)

    equilibrium = commands.add_parser("equilibrium", help="operating points: solve f(x, u) = 0 for what is free")
    _add_model(equilibrium)
    equilibrium.add_argument("--fix", action="append", metavar="NAME=VALUE,...",
                             help="fixed states and inputs, e.g. --fix tau=0 or --fix theta=0.3,theta_dot=0")
    equilibrium.add_argument("--target", action="append", metavar="OUTPUT=VALUE,...",
                             help="outputs to hold at values (trim), e.g. --target y=0.5: f = 0 and y = 0.5")
    equilibrium.add_argument("--starts", type=int, default=8, help="number of starting points (default 8)")
    _add_json(equilibrium)
    equilibrium.set_defaults(run=_cmd_equilibrium)

    linearize = commands.add_parser("linearize", help="A, B, C, D at an operating point")
    _add_model(linearize)
    _add_point(linearize, _HOLDING_POINT)
    linearize.add_argument("--method", default="auto", choices=LINEARIZE_METHODS, help="default: the best available")
    linearize.add_argument("--open", metavar="BLOCK.PORT", help="a diagram's loop broken there: the loop transfer "
                                                                "and its gain and phase margins")
    _add_json(linearize)
    linearize.set_defaults(run=_cmd_linearize)

    valid = commands.add_parser("validity", help="how far the linear model can be trusted around a point")
    _add_model(valid)
    _add_point(valid, _HOLDING_POINT)
    valid.add_argument("--tolerance", metavar="TOL", help="relative error tolerated (default 0.05)")
    valid.add_argument("--horizon", metavar="H", help="also compare simulated trajectories over [0, H]")
    valid.add_argument("--plot", metavar="FILE.png", help="write the remainder plot (.png, .svg or .pdf)")
    _add_json(valid)
    valid.set_defaults(run=_cmd_validity)

    convert = commands.add_parser("convert", help="write a URDF or MJCF robot as an editable kind: chain file")
    convert.add_argument("urdf", metavar="ROBOT", help="a URDF file (.urdf) or MuJoCo's MJCF (.xml)")
    convert.add_argument("--to", required=True, metavar="CHAIN.yaml", help="the chain file to write")
    convert.add_argument("--no-dynamics", action="store_true",
                         help="leave out <dynamics damping friction> (MJCF: the joints' damping, stiffness, armature "
                              "and frictionloss)")
    convert.set_defaults(run=_cmd_convert)
    check = commands.add_parser("verify", help="integrators vs the exact solution: errors and observed orders")
    check.add_argument("model", metavar="MODEL", nargs="?", default="joint", help="a linear model (default: joint)")
    check.add_argument("--param", action="append", metavar="NAME=VALUE,...", help="override parameters")
    check.add_argument("--t-final", metavar="T", help="length of the test run (default 2)")
    check.add_argument("--out", default="robodyn-out", metavar="DIR", help="folder for the plot (default robodyn-out)")
    _add_json(check)
    check.set_defaults(run=_cmd_verify)
