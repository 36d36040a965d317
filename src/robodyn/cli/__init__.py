"""The ``robodyn`` command line: one module per family of commands, each registering its parsers.

- :mod:`robodyn.cli.main` — :func:`main`, the table of commands and their modules (``COMMANDS``), and the error
  handling (one line, exit code 2 or 1);
- :mod:`robodyn.cli.parser` — the argument parser, built for the named command only;
- :mod:`robodyn.cli.args` — options every command shares (the model, ``--param``, ``--json``, a point);
- :mod:`robodyn.cli.models` — show, classify, modes, existence, equilibrium, linearize, validity, convert, verify;
- :mod:`robodyn.cli.simulate` — simulate; :mod:`robodyn.cli.quick` — a warm ``simulate`` repeated from its run
  image, in a process without numpy;
- :mod:`robodyn.cli.kinematics` — fk, ik, animate; :mod:`robodyn.cli.constraints` — assemble;
  :mod:`robodyn.cli.export` — export; :mod:`robodyn.cli.identify` — identify; :mod:`robodyn.cli.report` — demo,
  analyze; :mod:`robodyn.cli.sweep` — sweep; :mod:`robodyn.cli.optimize` — optimize; :mod:`robodyn.cli.track` — track
  (TVLQR along a trajectory file); :mod:`robodyn.cli.view` — view (the model in 3-D, one offline HTML page).

A new command: docs/dev/architecture.md, "How to add".
Shared by the commands: the command table (:mod:`~robodyn.cli.commands`) and what a run prints and writes
(:mod:`~robodyn.cli.run_output`: the summary, the CSV), on the quick path and the full one alike.
"""

from robodyn.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
