"""What the ``robodyn`` command is, beneath its parser and its commands: its name (:data:`PROG`), how it ends on
an error (:func:`fail`) and which module adds which subcommands (:data:`COMMANDS`). robodyn.cli.main re-exports
them; robodyn.cli.parser and the commands' modules read them from here.
"""

from __future__ import annotations

import sys
from typing import Final, NoReturn

__all__ = ["COMMANDS", "PROG", "fail"]

PROG = "robodyn"


def fail(message: str, code: int) -> NoReturn:
    """End the command with ``message`` as one line on stderr and exit code ``code`` (2 bad input, 1 numerical)."""
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    raise SystemExit(code)


#: The subcommands each module of ``robodyn.cli`` adds (its ``add_commands``), in the order ``--help`` lists them: a
#: command line names its command, so only that module is imported and asked (tests check this table).
COMMANDS: Final = (
    ("report", ("demo", "analyze")),
    ("simulate", ("simulate",)),
    ("models", ("show", "classify", "modes", "existence", "equilibrium", "linearize", "validity", "convert",
                "verify")),
    ("kinematics", ("fk", "ik", "animate")),
    ("constraints", ("assemble",)),
    ("export", ("export",)),
    ("identify", ("identify",)),
    ("sweep", ("sweep",)),
    ("optimize", ("optimize",)),
    ("track", ("track",)),
    ("view", ("view",)),
)
