"""robodyn.integrate.prepare: every compiled kernel variant made ready, and a report of what each did."""

from __future__ import annotations

import subprocess
import sys

from robodyn.integrate.methods.registry import REGISTRY
from robodyn.integrate.prepare import PREPARED_METHODS, prepare_kernels


def test_one_method_of_each_compiled_family_is_prepared() -> None:
    families = {REGISTRY[name].family for name in PREPARED_METHODS}
    assert families == {"fixed", "adaptive", "implicit"}
    assert {"dopri5", "dop853"} <= set(PREPARED_METHODS)  # the two explicit adaptive entries (rk, dop853)


def test_a_second_preparation_loads_everything_from_the_cache() -> None:
    prepare_kernels()  # whatever this process or machine had not compiled yet
    again = prepare_kernels()
    assert [p.method for p in again] == list(PREPARED_METHODS)
    assert all(p.how in ("loaded", "in memory") and p.seconds < 60 for p in again), [p.text() for p in again]


def test_the_module_prints_one_line_per_kernel() -> None:
    done = subprocess.run([sys.executable, "-m", "robodyn.integrate.prepare"], capture_output=True, text=True,
                          timeout=600, check=True)
    lines = done.stdout.splitlines()
    assert len(lines) == len(PREPARED_METHODS) and all(line.startswith("robodyn kernels: ") for line in lines)
    assert all(" loaded from the cache in " in line or " compiled in " in line for line in lines)
