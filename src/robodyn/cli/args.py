"""Options shared by the ``robodyn`` commands: the model argument, ``--param``, ``--at``, ``--json``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

import robodyn
from robodyn.errors import InputError
from robodyn.model.names import parse_assignments

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract

__all__ = ["add_json", "add_model", "add_point", "assignments", "load_model"]


def assignments(texts: Sequence[str] | None, option: str) -> dict[str, float]:
    """``NAME=VALUE,...`` texts of a repeatable option as one mapping (a name given twice is bad input)."""
    values: dict[str, float] = {}
    for text in texts or ():
        for name, value in parse_assignments(text, where=option).items():
            if name in values:
                raise InputError(f"{option}: {name!r} is given twice")
            values[name] = value
    return values


def load_model(args: argparse.Namespace, *, numeric: bool = False) -> ModelContract:
    """Load MODEL and apply ``--param`` overrides (checked against the model's parameters).

    ``numeric``: for a command that only evaluates the model (``simulate``), a model file or catalog model
    comes from the parsed-model cache when it is warm (:func:`robodyn.model.files.cached.load_cached`: no sympy).
    """
    base = getattr(args, "base", None)
    if base is not None:  # a URDF robot's root joined to the world by a moving joint
        if not str(args.model).lower().endswith(".urdf"):
            raise InputError(f"--base applies to a URDF robot; {args.model!r} is not one: write 'base: {base}' in a "
                             "chain file")
        model = robodyn.load(args.model, base=base)
    elif numeric:
        from robodyn.model.files.cached import load_cached

        model = load_cached(args.model)
    else:
        model = robodyn.load(args.model)
    return model.with_parameters(assignments(args.param, "--param"))


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


def add_point(parser: argparse.ArgumentParser, description: str) -> None:
    parser.add_argument("--at", action="append", metavar="NAME=VALUE,...", help=description)


def add_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL",
                        help="a YAML model file, a URDF robot or a catalog name (joint, pendulum, ...)")
    parser.add_argument("--base", choices=("fixed", "floating", "planar"),
                        help="a URDF robot's root joined to the world: floating (free-flyer) or planar "
                             "(default: the file's root joint, else fixed)")
    parser.add_argument("--param", action="append", metavar="NAME=VALUE,...",
                        help="override parameters, e.g. --param m=2,l=0.5 (values accept pi and arithmetic)")
