"""The ``robodyn`` command: argument parsing and printing only; the work is done by the public API.

Errors never show a traceback: a :class:`~robodyn.errors.RobodynError` becomes one line on stderr and
exit code 2 (bad input) or 1 (numerical failure). Set ``ROBODYN_DEBUG=1`` to see tracebacks.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

import robodyn
from robodyn.atomic import write_text_atomic
from robodyn.errors import InputError, RobodynError
from robodyn.model.expr import parse_assignments
from robodyn.model.lagrange import LagrangianSystem
from robodyn.model.mechanical import ManipulatorSystem, MechanicalSystem
from robodyn.model.symbolic import SymbolicModel
from robodyn.model.system import Model

__all__ = ["main"]

PROG = "robodyn"


class _Parser(argparse.ArgumentParser):
    """argparse with errors as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (see '{self.prog} --help')", 2)


def _fail(message: str, code: int) -> NoReturn:
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    raise SystemExit(code)


# --- shared option handling --------------------------------------------------------------------------
def _assignments(texts: Sequence[str] | None, option: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for text in texts or ():
        for name, value in parse_assignments(text, where=option).items():
            if name in values:
                raise InputError(f"{option}: {name!r} is given twice")
            values[name] = value
    return values


def _model(args: argparse.Namespace) -> Model:
    """Load MODEL and apply ``--param`` overrides (checked against the model's parameters)."""
    return robodyn.load(args.model).with_parameters(_assignments(args.param, "--param"))


def _add_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL", help="a YAML model file or a catalog name (joint, pendulum, ...)")
    parser.add_argument("--param", action="append", metavar="NAME=VALUE,...",
                        help="override parameters, e.g. --param m=2,l=0.5 (values accept pi and arithmetic)")


# --- show --------------------------------------------------------------------------------------------
def _describe(model: Model) -> list[str]:
    kind = ("mechanical" if isinstance(model, MechanicalSystem)
            else "lagrangian" if isinstance(model, LagrangianSystem)
            else "manipulator" if isinstance(model, ManipulatorSystem)
            else "first_order" if isinstance(model, SymbolicModel) else type(model).__name__)
    lines = [f"model    {model.name} ({kind})", f"states   {', '.join(model.states)}",
             f"inputs   {', '.join(model.inputs) or '(none)'}"]
    if model.outputs != model.states:
        lines.append(f"outputs  {', '.join(model.outputs)}")
    if model.parameters:
        lines.append("params   " + ", ".join(f"{k} = {v:g}" for k, v in model.parameters.items()))
    return lines


def _damping_lines(model: Model) -> list[str]:
    if not isinstance(model, MechanicalSystem) or model.n_coordinates != 1:
        return []
    info = model.damping_info()
    if info.omega_n is None:
        return [f"regime   {info.regime} (omega_n undefined)"]
    return [f"omega_n  {info.omega_n:.10g} rad/s", f"zeta     {info.zeta:.10g}", f"regime   {info.regime}"]


def _cmd_show(args: argparse.Namespace) -> int:
    model = _model(args)
    if args.latex:
        if not isinstance(model, SymbolicModel):
            raise InputError(f"model {model.name!r} has no symbolic equations to print as LaTeX")
        print(model.latex())
        return 0
    equations = model.pretty() if isinstance(model, SymbolicModel) else repr(model)
    damping = _damping_lines(model)
    print("\n".join([*_describe(model), "", equations, *(["", *damping] if damping else [])]))
    return 0


# --- classify ----------------------------------------------------------------------------------------
def _cmd_classify(args: argparse.Namespace) -> int:
    result = robodyn.classify(_model(args))
    print(json.dumps(result.to_dict(), indent=2) if args.json else result)
    return 0


# --- demo --------------------------------------------------------------------------------------------
def _cmd_demo(args: argparse.Namespace) -> int:
    """The main job on the built-in pendulum; each stage reports and the demo always exits 0."""
    out = Path(args.out)
    stages: list[tuple[str, Callable[[], list[str]]]] = [
        ("equations and classification", lambda: _demo_equations(out)),
    ]
    for title, stage in stages:
        print(f"== {title}")
        try:
            for line in stage():
                print(line)
        except Exception as exc:  # the demo reports a failed stage and goes on
            print(f"   (stage failed: {type(exc).__name__}: {exc})")
        print()
    print(f"results in {out}/")
    return 0


def _demo_equations(out: Path) -> list[str]:
    model = robodyn.load("pendulum")
    assert isinstance(model, SymbolicModel)
    classification = robodyn.classify(model)
    lines = [*_describe(model), "", model.pretty(), "", str(classification)]
    written = [
        write_text_atomic(out / "pendulum_equations.txt", "\n".join(lines) + "\n"),
        write_text_atomic(out / "pendulum_equations.tex", model.latex() + "\n"),
        write_text_atomic(out / "pendulum_classification.json", json.dumps(classification.to_dict(), indent=2) + "\n"),
    ]
    return [*lines, "", *(f"wrote {path}" for path in written)]


# --- entry point -------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = _Parser(prog=PROG, description="Robot and mechanical dynamics: equations, simulation, linearization.")
    parser.add_argument("--version", action="version", version=f"{PROG} {robodyn.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    demo = commands.add_parser("demo", help="run the main job on the built-in pendulum, write ./robodyn-out/")
    demo.add_argument("--out", default="robodyn-out", metavar="DIR", help="output folder (default: robodyn-out)")
    demo.set_defaults(run=_cmd_demo)

    show = commands.add_parser("show", help="print a model's equations")
    _add_model(show)
    show.add_argument("--latex", action="store_true", help="print the equations as LaTeX")
    show.set_defaults(run=_cmd_show)

    classify = commands.add_parser("classify", help="order, linearity, time invariance, forcing, autonomy")
    _add_model(classify)
    classify.add_argument("--json", action="store_true", help="print JSON")
    classify.set_defaults(run=_cmd_classify)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 success, 1 numerical failure, 2 bad input)."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.run(args)
        return code
    except RobodynError as exc:
        if os.environ.get("ROBODYN_DEBUG"):
            raise
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug in robodyn: still one line, with what to do
        if os.environ.get("ROBODYN_DEBUG"):
            raise
        _fail(f"internal error {type(exc).__name__}: {exc} (rerun with ROBODYN_DEBUG=1 and report it)", 1)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
