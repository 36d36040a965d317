"""The ``robodyn`` command line: one module per family of commands, each registering its parsers.

- :mod:`robodyn.cli.main` — the parser, :func:`main` and its error handling (one line, exit code 2 or 1);
- :mod:`robodyn.cli.args` — options every command shares (the model, ``--param``, ``--json``, a point);
- :mod:`robodyn.cli.models` — show, classify, simulate, verify, modes, existence, equilibrium, linearize,
  validity, convert;
- :mod:`robodyn.cli.kinematics` — fk, ik, animate; :mod:`robodyn.cli.report` — analyze, demo;
  :mod:`robodyn.cli.sweep` — sweep.
"""

from robodyn.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
