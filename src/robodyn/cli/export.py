"""``robodyn export MODEL --lang c --out DIR``: the model's functions as standalone C99 (robodyn.export_c)."""

from __future__ import annotations

import argparse
from typing import Any

from robodyn.base.errors import InputError
from robodyn.cli.args import add_model, load_model

__all__ = ["add_commands"]

LANGUAGES = ("c",)


def _cmd_export(args: argparse.Namespace) -> int:
    from robodyn.export.c import export_c

    if args.lang not in LANGUAGES:
        raise InputError(f"--lang {args.lang!r}: the languages are {', '.join(LANGUAGES)}")
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


def add_commands(commands: Any) -> None:
    """Add ``export`` to the ``robodyn`` subcommands."""
    export = commands.add_parser("export", help="write the model's functions as standalone C99 (a header, a source, a "
                                                "Makefile and a CMakeLists.txt)")
    add_model(export)
    export.add_argument("--lang", default="c", help="the language (c)")
    export.add_argument("--out", required=True, metavar="DIR", help="the folder to write (created when missing)")
    export.add_argument("--functions", metavar="f,linearize,...",
                        help="a subset of f, h, linearize, mass, rnea, aba, com, fk, step_rk4, step_dopri5 (default: "
                             "all the model has)")
    export.add_argument("--frames", metavar="F1,F2,...",
                        help="the frames whose P_fk_<frame> to write (default: every frame; implies fk)")
    export.add_argument("--prefix", metavar="P", help="the C names' prefix (default: the model's name)")
    export.set_defaults(run=_cmd_export)
