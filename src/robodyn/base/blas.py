"""One BLAS thread for robodyn's many small factorizations.

OpenBLAS runs a factorization of a few hundred rows on every core it has. On a small machine the threads' hand-offs
cost far more than the arithmetic: a Householder QR of 150 x 62 took 0.5-20 ms with the threads of the OpenBLAS
that numpy and scipy ship, against 0.14 ms on one thread (two cores, measured 2026-12-06), and the Panda's
identification of docs/identification.md spent 50 s of its 57 s there. :func:`one_blas_thread` limits BLAS to one
thread while robodyn runs such a loop and gives the user's setting back after it (threadpoolctl; without it, or
with no BLAS found, nothing changes). Starting a limit costs about 15 us; the first one, and the first after modules
were imported (a BLAS library loads with a module: scipy.linalg brings its own), also finds the loaded
libraries (about 3 ms).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["one_blas_thread"]


@functools.lru_cache(maxsize=1)
def _controller(modules: int) -> Any:
    """A controller of the BLAS libraries loaded now. threadpoolctl finds the libraries when the controller is made,
    so one made before scipy.linalg loaded scipy's own OpenBLAS would leave that on its threads: the controller is
    made again when modules were imported since (``modules``: how many; a library loads with a module)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # an environment without it: BLAS keeps its threads
        return None
    return ThreadpoolController()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the ``with`` block with BLAS on one thread (see the module docstring)."""
    controller = _controller(len(sys.modules))
    if controller is None:
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield
