"""``python -m robodyn.cli``: the same command line as the ``robodyn`` script (:func:`robodyn.cli.main.main`)."""

import sys

from robodyn.cli.main import main

sys.exit(main())
