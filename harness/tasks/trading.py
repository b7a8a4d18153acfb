"""The trading task: one instrument per episode, BUY/SELL/HOLD (the paper's rules) or a target
exposure. Its accounting is `harness.execution` (the AlphaQuanter simulator); this module tells
the runner how to drive it."""

from __future__ import annotations

import pandas as pd

from harness.execution import ExecutionConfig, Simulator
from harness.tasks.base import Episode, Task
from market.data import MarketData
from market.decision import Action, Decision, Trace


class TradingTask(Task):
    """Episodes: one per ticker, over its bars in the window. Fallback: HOLD, or flat in target mode."""

    name = "trading"

    def __init__(self, config: ExecutionConfig | None = None):
        super().__init__(config or ExecutionConfig())

    def episodes(self, data: MarketData, names: list[str], start: pd.Timestamp, end: pd.Timestamp) -> list[Episode]:
        return [Episode(name, (name,), data.trading_days(name, start, end)) for name in names]

    def simulator(self, data: MarketData, episode: Episode) -> Simulator:
        return Simulator(data.frame(episode.name).loc[episode.times], self.config, episode.name)

    def fallback(self, error: str) -> Decision:
        if self.config.mode == "discrete":
            return Decision(action=Action.HOLD, trace=Trace(error=error, fallback=True))
        return Decision(target=0.0, trace=Trace(error=error, fallback=True))
