"""Frameworks used by the tests to drive the runner into its corners."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from frameworks.base import TradingFramework
from frameworks.baselines.random_policy import RandomPolicy
from market.decision import Action, Decision


class SlowRandom(RandomPolicy):
    """The random policy, `delay_s` seconds per decision (room to kill a run mid-way)."""

    def __init__(self, delay_s: float = 0.02, **kwargs):
        super().__init__(**kwargs)
        self.delay_s = delay_s

    def decide(self, batch):
        time.sleep(self.delay_s * len(batch))
        return super().decide(batch)


class FailsOnMondays(TradingFramework):
    """BUY, except that it raises for any batch holding a Monday."""

    def decide(self, batch):
        if any(ctx.date.dayofweek == 0 for ctx in batch):
            raise RuntimeError("no decisions on Mondays")
        return [Decision(action=Action.BUY) for _ in batch]


class ExposureTargeter(TradingFramework):
    """Stateful: alternates between fully long and flat, using the portfolio it is shown."""

    stateful = True
    needs_portfolio = True

    def __init__(self):
        self.seen_exposures: list[float] = []

    def decide(self, batch):
        decisions = []
        for ctx in batch:
            assert ctx.portfolio is not None
            self.seen_exposures.append(ctx.portfolio.exposure)
            decisions.append(Decision(action=Action.SELL if ctx.portfolio.shares > 0 else Action.BUY))
        return decisions


class PromptedRule(TradingFramework):
    """The action written in a prompt file, every day; its fingerprint hashes the file, so an
    edited prompt under an unchanged config is a changed input."""

    def __init__(self, prompt: str):
        self.prompt = Path(prompt)

    def fingerprint(self) -> str:
        return hashlib.sha256(self.prompt.read_bytes()).hexdigest()

    def decide(self, batch):
        action = Action(self.prompt.read_text().strip())
        return [Decision(action=action) for _ in batch]
