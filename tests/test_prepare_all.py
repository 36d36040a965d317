"""robodyn.prepare: the shared kernels' tasks, shared out over processes."""

from __future__ import annotations

import pytest

from robodyn.base.errors import UnknownNameError
from robodyn.integrate.prepare import PREPARED_METHODS
from robodyn.prepare import TASKS, prepare_all, share


def test_every_integrator_variant_is_a_task() -> None:
    assert set(PREPARED_METHODS) <= {task.name for task in TASKS}


@pytest.mark.parametrize("parts", [1, 2, 3, 8])
def test_the_shares_hold_every_task_once_and_balance(parts: int) -> None:
    shares = share(parts)
    assert len(shares) == parts
    assert sorted(name for part in shares for name in part) == sorted(task.name for task in TASKS)
    cost = {task.name: task.cost for task in TASKS}
    loads = [sum(cost[name] for name in part) for part in shares]
    # longest-first to the least loaded: no share exceeds the best possible by more than the largest task
    assert max(loads) <= sum(loads) / parts + max(cost.values())


def test_unknown_tasks_are_named() -> None:
    with pytest.raises(UnknownNameError, match="no preparation task named nope: the tasks are radau"):
        prepare_all(["nope"])


def test_a_task_runs_and_reports_its_time() -> None:
    done = prepare_all(["rk4"], jobs=2)
    assert [name for name, _ in done] == ["rk4"] and done[0][1] >= 0.0
