"""A kernel module with the arguments every call shares (:class:`KernelSetup`): robodyn.integrate.kernels.run makes
it, the runners there and robodyn.integrate.kernels.fused call through it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from robodyn.integrate.events import ResolvedEvents
    from robodyn.model.protocol import ModelContract

__all__ = ["KernelSetup"]


@dataclass(frozen=True)
class KernelSetup:
    """A kernel module with the arguments every call shares."""

    module: Any  # a kernel module, or robodyn.integrate.kernels.native.NativeKernels standing for one
    path: str  # "compiled" or "interpreted"
    fns: np.ndarray  # (4,) int64: the addresses of the model's rhs, event_fn, jac and chart (0: none)
    inp: tuple[Any, ...]
    events: ResolvedEvents
    model: ModelContract
    compile_seconds: float
    cached: bool = False  # the model's compiled functions came from the on-disk cache (nothing compiled)
