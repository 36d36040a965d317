"""Sweeps on a dask.distributed cluster (robodyn.sweep with ``scheduler=`` or ``workers=``): not available yet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from robodyn.errors import InputError

__all__ = ["run_on_cluster"]


def run_on_cluster(plan: Any, todo: list[int], out: Path | None, *, scheduler: Any = None, workers: int | None = None,
                   progress: bool = True) -> list[Any]:
    """Run the chunks ``todo`` of ``plan`` on a cluster; write each part into ``out`` (or return the frames)."""
    raise InputError("sweep: distributed sweeps (scheduler=, workers=) are not available in this version: run "
                     "without them (every core of this machine is used)")
