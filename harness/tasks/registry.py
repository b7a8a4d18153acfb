"""Task name -> its `Task` class and config model; `build_task` turns the `task` config group into a task.

The `task` group (configs/task/*.yaml) holds `name` and the task's own fields. The trading
task's fields live in the `execution` group (the paper's rules), as before tasks existed; the
portfolio and futures tasks keep theirs in the task group.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from core.config_keys import typed_config
from core.errors import ConfigError
from harness.execution import ExecutionConfig
from harness.tasks.base import Task
from harness.tasks.futures import FuturesConfig, FuturesTask
from harness.tasks.portfolio import PortfolioConfig, PortfolioTask
from harness.tasks.trading import TradingTask

TASKS: dict[str, tuple[type[Task], type[BaseModel]]] = {
    "trading": (TradingTask, ExecutionConfig),
    "portfolio": (PortfolioTask, PortfolioConfig),
    "futures": (FuturesTask, FuturesConfig),
}
"""Task name -> (task class, config model)."""


def build_task(task: Mapping[str, Any], execution: Mapping[str, Any]) -> Task:
    """The task of the `task` config group; its fields are checked like every config (one line per problem)."""
    values = dict(task)
    name = values.pop("name", None)
    if name not in TASKS:
        raise ConfigError(f"task.name: {name!r}; it must be one of {', '.join(sorted(TASKS))}")
    cls, model = TASKS[name]
    if name == "trading":
        if values:
            raise ConfigError(f"task: unknown key {min(values)!r} (the trading task's rules are in execution.*)")
        return cls(typed_config(model, execution, "execution"))
    return cls(typed_config(model, values, "task"))


def check_frameworks_take(task: Task, frameworks: list) -> None:
    """Refuse a framework that does not take `task` (its `tasks` class attribute), in one line naming it."""
    for entry in frameworks:
        takes = tuple(getattr(entry.framework, "tasks", ("trading",)))
        if task.name not in takes:
            raise ConfigError(f"frameworks.{entry.name}: {type(entry.framework).__name__} takes the task(s) "
                              f"{', '.join(takes)}, not task={task.name}")
