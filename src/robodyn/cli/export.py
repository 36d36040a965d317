"""``robodyn export MODEL --lang c --out DIR``: the model's functions as standalone C99 (robodyn.export_c);
``--lang fmu --out FILE.fmu``: the model as an FMI unit (robodyn.export_fmu)."""

from __future__ import annotations

import argparse
from typing import Any

from robodyn.base.errors import InputError
from robodyn.cli.args import add_model, load_model, number_or

__all__ = ["add_commands"]

LANGUAGES = ("c", "fmu")
_FMU_ONLY = ("fmi", "kind", "step")
_C_ONLY = ("functions", "frames")


def _cmd_export(args: argparse.Namespace) -> int:
    if args.lang not in LANGUAGES:
        raise InputError(f"--lang {args.lang!r}: the languages are {', '.join(LANGUAGES)}")
    wrong = _C_ONLY if args.lang == "fmu" else _FMU_ONLY
    given = [f"--{name}" for name in wrong if getattr(args, name) is not None]
    if given:
        raise InputError(f"{', '.join(given)}: not an option of --lang {args.lang} (--functions and --frames are the "
                         "C export's; --fmi, --kind and --step the FMU's)")
    return _fmu(args) if args.lang == "fmu" else _c(args)


def _c(args: argparse.Namespace) -> int:
    from robodyn.export.c import export_c

    functions = None if args.functions is None else [f.strip() for f in args.functions.split(",") if f.strip()]
    frames = None if args.frames is None else [f.strip() for f in args.frames.split(",") if f.strip()]
    model = load_model(args)
    export = export_c(model, args.out, functions=functions, frames=frames, prefix=args.prefix, source=args.model)
    print(f"{model.name}: wrote {', '.join(str(f) for f in export.files)}")
    print(f"  functions: {', '.join(export.functions)}")
    renamed = [f"{name!r} -> {field}" for name, field in export.parameter_fields.items() if field != name]
    renamed += [f"frame {frame!r} -> {function}" for frame, function in export.frame_functions.items()
                if function != f"{export.prefix}_fk_{frame}"]
    if renamed:  # the rule of docs/export.md, "Names in C"
        print(f"  C names: {', '.join(renamed)}")
    return 0


def _fmu(args: argparse.Namespace) -> int:
    from robodyn.base.numbers import finite_number
    from robodyn.export.fmu import DEFAULT_STEP, FMI_VERSIONS, FMU_KINDS, export_fmu

    versions = {str(v): v for v in FMI_VERSIONS}
    fmi = "2" if args.fmi is None else args.fmi
    if fmi not in versions:
        raise InputError(f"--fmi {fmi!r}: the FMI versions written are {', '.join(versions)}")
    kind = "me" if args.kind is None else args.kind
    if kind not in FMU_KINDS:
        raise InputError(f"--kind {kind!r}: choose me (model exchange) or cs (co-simulation)")
    step = finite_number(number_or(args.step, "--step", DEFAULT_STEP), "--step",
                         positive="{what} {value!r} is not > 0: give the longest RK4 substep in seconds")
    model = load_model(args)
    export = export_fmu(model, args.out, fmi=versions[fmi], kind=kind, prefix=args.prefix, step=step,
                        source=args.model)
    what = "co-simulation, RK4 substeps of at most " + repr(export.step) + " s" if kind == "cs" else "model exchange"
    print(f"{model.name}: wrote {export.path} (FMI {fmi}.0, {what}; modelIdentifier {export.model_identifier})")
    print(f"  variables: {', '.join(v.name for v in export.variables)}")
    return 0


def add_commands(commands: Any) -> None:
    """Add ``export`` to the ``robodyn`` subcommands."""
    export = commands.add_parser("export", help="write the model's functions as standalone C99 (a header, a source, a "
                                                "Makefile and a CMakeLists.txt) or the model as an FMU")
    add_model(export)
    export.add_argument("--lang", default="c", help="the language: c (default) or fmu")
    export.add_argument("--out", required=True, metavar="PATH",
                        help="the folder to write (c; created when missing) or the .fmu file (fmu)")
    export.add_argument("--functions", metavar="f,linearize,...",
                        help="a subset of f, h, linearize, mass, rnea, aba, com, fk, step_rk4, step_dopri5 (default: "
                             "all the model has)")
    export.add_argument("--frames", metavar="F1,F2,...",
                        help="the frames whose P_fk_<frame> to write (default: every frame; implies fk)")
    export.add_argument("--prefix", metavar="P", help="the C names' prefix, an FMU's modelIdentifier (default: the "
                                                      "model's name)")
    export.add_argument("--fmi", metavar="2", help="fmu: the FMI version (default 2)")
    export.add_argument("--kind", metavar="me|cs", help="fmu: model exchange (me, default) or co-simulation (cs)")
    export.add_argument("--step", metavar="H", help="fmu, cs: the longest RK4 substep of a communication step, in "
                                                    "seconds (default 1e-3)")
    export.set_defaults(run=_cmd_export)
