"""A framework frees what it keeps to decide faster once it has decided every episode
(`TradingFramework.release_memory`), before the next framework runs; a plugin without the
method runs as before."""

from __future__ import annotations

from harness_runs import DAYS

from frameworks.base import TradingFramework
from market.decision import Action, Decision


class Recording(TradingFramework):
    """HOLD every day; appends to a shared log when it decides and when it releases its memory."""

    def __init__(self, name: str, log: list[str]):
        self.name, self.log = name, log

    def decide(self, batch):
        self.log.append(f"{self.name} decides {len(batch)}")
        return [Decision(action=Action.HOLD) for _ in batch]

    def release_memory(self):
        self.log.append(f"{self.name} releases")


class WithoutRelease:
    """A plugin that is not a TradingFramework and has no release_memory."""

    stateful = needs_portfolio = stochastic = False

    def decide(self, batch):
        return [Decision(action=Action.BUY) for _ in batch]


def test_each_framework_releases_its_memory_once_after_its_last_decision(journaled):
    log: list[str] = []
    result = journaled({"first": Recording("first", log), "plain": WithoutRelease(), "second": Recording("second", log)})
    assert log == [f"first decides {len(DAYS)}", "first releases", f"second decides {len(DAYS)}", "second releases"]
    assert result.failed == 0 and result.made == 3 * len(DAYS)
