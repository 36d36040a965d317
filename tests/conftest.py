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


#: A run of at least this many tests under several xdist workers prepares the shared kernels first (below).
PREPARE_FROM_TESTS = 1000


def pytest_collection_modifyitems(session, config, items) -> None:
    """Under pytest-xdist, each worker of a large run compiles its share of robodyn's shared kernels first
    (robodyn.prepare): otherwise both workers reach the same kernels at once and each compiles them (15-45 s a
    kernel on a cold cache). ``ROBODYN_TEST_PREPARE=0`` turns it off."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or count < 2 or len(items) < PREPARE_FROM_TESTS:
        return
    if os.environ.get("ROBODYN_TEST_PREPARE", "1") == "0":
        return
    from robodyn.prepare import prepare_all, share

    mine = share(count)[int(worker[2:]) % count]
    if mine:
        prepare_all(mine, jobs=1)
