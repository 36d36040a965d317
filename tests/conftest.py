"""Test-suite settings.

Hypothesis: no per-example deadline (the machine is shared and numba compiles on first use, so timings
say nothing), and under CI (``CI`` set, as ``.ci/run`` runs) a derandomized run, so that a submission is
judged on the same examples every time; locally the examples stay random, which keeps finding new cases.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("robodyn", deadline=None)
settings.register_profile("robodyn-ci", deadline=None, derandomize=True)
settings.load_profile("robodyn-ci" if os.environ.get("CI") else "robodyn")
