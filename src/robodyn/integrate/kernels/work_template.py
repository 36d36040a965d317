"""The adaptive kernel's work arrays: their shapes and allocation, in plain Python.

A template like ``kernel_template.py``, executed after it and ``implicit_template.py`` in the same module
(:mod:`robodyn.integrate.kernels.module`): ``_adaptive_core`` carves its work arrays from the ones made here
(implicit ones first, ``_implicit_work``), so that the kernel itself allocates nothing and can run as
exported machine code without numba's runtime (robodyn.integrate.kernels.native lays the same shapes out
in one block). Only Python calls these functions; numba never compiles them.
"""

# ``implicit_work_shape`` is defined by implicit_template.py in the same module namespace:
# ruff: noqa: F821
# mypy: disable-error-code="name-defined"

import numpy as np


def work_shapes(n, m, method, dop853, implicit, n_events):
    """The ``(shape, dtype)`` of the work arrays of ``_adaptive_core`` for n states, m inputs and n_events events
    (plain Python: the kernel carves the same arrays from them, implicit ones first): a vector w, a matrix W
    (rows, n), the complex Wc (n + 1, n) and the int64 Wi (2, n) (no rows for the explicit methods)."""
    c, dense = method[2], method[4]
    rows = c.size + 2 + dense.shape[0] + (0 if dop853 is None else 3)
    size = 4 * n + 2 * m + 5 * n_events
    extra = (n + 1, 2) if implicit is not None else (0, 0)
    if implicit is not None:
        more_rows, more = implicit_work_shape(n, m)
        rows, size = rows + more_rows, size + more
    return (((size,), np.float64), ((rows, n), np.float64), ((extra[0], n), np.complex128),
            ((extra[1], n), np.int64))


def work_arrays(n, m, method, dop853, implicit, n_events):
    """Fresh work arrays of ``_adaptive_core`` (see work_shapes)."""
    return _allocate(work_shapes(n, m, method, dop853, implicit, n_events))


def _allocate(specs):
    """Fresh arrays of the ``(shape, dtype)`` pairs ``specs``."""
    return tuple(np.empty(shape, dtype) for shape, dtype in specs)
