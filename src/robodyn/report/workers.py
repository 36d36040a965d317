"""Where the report's independent parts run: here, or in forked worker processes (one per core for the CLI).

Each operating point's section (its figures take most of a report's time) and the typeset equations do not
depend on each other, so :class:`Workers` runs them in a pool of forked processes that inherit the model: a task
is a module-level function of the model and picklable arguments, and its result (HTML and JSON records) comes
back pickled. Forking copies the process as it is, so only a process that runs no threads of its own may ask for
more than one worker (the CLI); the default runs every task here, in order.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from robodyn.model.protocol import ModelContract


__all__ = ["Workers"]

_MODEL: dict[str, ModelContract] = {}  # the model forked workers read: set just before the pool forks


class _Done:
    """A task run here: its result at once."""

    def __init__(self, value: Any):
        self.value = value

    def get(self) -> Any:
        return self.value


def _call(task: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    return task(_MODEL["model"], *args)


class Workers:
    """``with Workers(model, n) as workers: handle = workers.submit(task, *args) ... handle.get()``.

    ``task(model, *args)`` runs in one of ``n`` forked processes (or here, in order, when ``n`` is 1 or the
    platform cannot fork); ``get()`` returns its result or raises its exception.
    """

    def __init__(self, model: ModelContract, count: int):
        self.model = model
        self.count = max(1, int(count))
        self.pool: Any = None

    def __enter__(self) -> Workers:
        if self.count > 1 and "fork" in multiprocessing.get_all_start_methods():
            _MODEL["model"] = self.model
            self.pool = multiprocessing.get_context("fork").Pool(self.count)
        return self

    def submit(self, task: Callable[..., Any], *args: Any) -> Any:
        if self.pool is None:
            return _Done(task(self.model, *args))
        return self.pool.apply_async(_call, (task, args))

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.pool is not None:
            if kind is None:
                self.pool.close()
            else:
                self.pool.terminate()
            self.pool.join()
            _MODEL.clear()
