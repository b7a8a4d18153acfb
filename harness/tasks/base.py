"""What a task is to the runner: which episodes a run holds, which decisions they take, and how
those decisions are filled (`docs/tasks.md`).

A task (`trading`, `portfolio`, `futures`; `harness.tasks.registry`) owns

- its config (a pydantic model with a `mode` naming its decision check in
  `harness.decision_checks.TASK_CHECKS`);
- `episodes`: the run's episodes as `Episode`s — a name (a ticker, or a universe), the
  instruments it trades and the bar stamps it decides on;
- `scope_problem`: what the generic check cannot know — a weight on an instrument outside the
  episode's universe or outside the pool of the day;
- `simulator`: a fresh `TaskSimulator` of one episode, which fills each decision at the next
  bar and keeps the accounts (cash, positions, marks, margin) of that task;
- `fallback`: the decision executed in place of a failed one (HOLD by default);
- `pool`: the instruments that may be held at a bar (None: every one of the universe).

Every simulator has the interface of the trading task's `harness.execution.Simulator`:
`done`, `date`, `portfolio`, `submit(decision)` and `result() -> EpisodeResult`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import pandas as pd

from harness.execution import EpisodeResult
from market.data import MarketData
from market.decision import Action, Decision, Trace
from market.portfolio import PortfolioState


@dataclass(frozen=True)
class Episode:
    """One episode's name (a ticker or a universe), its instruments and the bar stamps it decides on."""

    name: str
    instruments: tuple[str, ...]
    times: pd.DatetimeIndex


class TaskSimulator(Protocol):
    """Steps one episode bar by bar; `submit` takes the decision of the current bar."""

    @property
    def done(self) -> bool: ...

    @property
    def date(self) -> pd.Timestamp: ...

    @property
    def portfolio(self) -> PortfolioState: ...

    def submit(self, decision: Decision) -> None: ...

    def result(self) -> EpisodeResult: ...


class Task(ABC):
    """A task: its config, its episodes, its checks, its simulator and its fallback (module docstring)."""

    name: ClassVar[str]
    benchmark: ClassVar[str] = "buy_and_hold"
    """The framework a report's tests compare every other against, unless the run names one (`benchmark`)."""
    multi_instrument: ClassVar[bool] = False
    """True when a decision is about a universe (the context lists it in `universe`)."""

    def __init__(self, config: Any):
        self.config = config

    @abstractmethod
    def episodes(self, data: MarketData, names: list[str], start: pd.Timestamp, end: pd.Timestamp) -> list[Episode]:
        """The run's episodes for the configured `names` (tickers) over [start, end]."""

    @abstractmethod
    def simulator(self, data: MarketData, episode: Episode) -> TaskSimulator:
        """A fresh simulator of `episode`."""

    def scope_problem(self, decision: Decision, episode: Episode, date: pd.Timestamp) -> str | None:
        """Why `decision` (already valid for the task's mode) cannot be executed in `episode` at `date`; None when it can."""
        return None

    def pool(self, episode: Episode, date: pd.Timestamp) -> tuple[str, ...] | None:
        """The instruments that may be held after the decision at `date`; None: all of the episode's."""
        return None

    def fallback(self, error: str) -> Decision:
        """The decision executed in place of a failed one: HOLD (keep the positions as they are)."""
        return Decision(action=Action.HOLD, trace=Trace(error=error, fallback=True))

    def describe(self) -> dict:
        """The task and its config as plain JSON values (run.json)."""
        return {"name": self.name, **self.config.model_dump(mode="json")}
