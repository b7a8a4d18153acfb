"""Rule baselines of the futures task: constant leverage (flat, always long at 1x, long at the
cap) and trend following.

A rule's target is a leverage: the position's notional over equity (`harness.tasks.futures`).
Trend following reads the perpetual's closes causally (the value at bar t uses closes ≤ t);
fan-out as in `frameworks.baselines.portfolio_rules`: one pass over the closes of the batch's
latest view, read off for every earlier decision (a test checks the two agree).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd

from frameworks.base import TradingFramework
from frameworks.baselines.signal_rule import recursive_warmup
from market.decision import Decision, DecisionContext


class ConstantLeverage(TradingFramework):
    """The same target leverage on every bar: 0 = flat, 1 = always long 1x, 5 = long at the default cap."""

    tasks: ClassVar[tuple[str, ...]] = ("futures",)

    def __init__(self, leverage: float = 1.0):
        self.leverage = float(leverage)

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        return [Decision(target=self.leverage) for _ in batch]


class TrendFollowing(TradingFramework):
    """Long `leverage` while EMA(fast) of the closes is above EMA(slow), short (or flat without
    `short`) while below; flat until the slow EMA has warmed up (its start-up weight < 1e-4)."""

    tasks: ClassVar[tuple[str, ...]] = ("futures",)

    def __init__(self, fast: int = 60, slow: int = 240, leverage: float = 1.0, short: bool = True):
        if not 0 < fast < slow:
            raise ValueError(f"trend following needs 0 < fast < slow, got fast={fast}, slow={slow}")
        self.fast, self.slow, self.leverage, self.short = int(fast), int(slow), float(leverage), bool(short)

    def targets(self, close: pd.Series) -> pd.Series:
        """The causal target leverage per bar of `close`."""
        fast = close.ewm(span=self.fast, adjust=False).mean()
        slow = close.ewm(span=self.slow, adjust=False).mean()
        low = -self.leverage if self.short else 0.0
        target = np.where(fast > slow, self.leverage, np.where(fast < slow, low, 0.0))
        warm = np.arange(len(close)) >= recursive_warmup(2.0 / (self.slow + 1))
        return pd.Series(np.where(warm, target, 0.0), index=close.index)

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        latest: dict[str, DecisionContext] = {}
        for context in batch:
            if context.ticker not in latest or context.date > latest[context.ticker].date:
                latest[context.ticker] = context
        tables = {t: self.targets(c.view.bars(t)["close"]) for t, c in latest.items()}
        rows = {t: table.index.get_indexer([c.date for c in batch if c.ticker == t]) for t, table in tables.items()}
        values = {t: iter(table.to_numpy()[rows[t]].tolist()) for t, table in tables.items()}
        return [Decision(target=next(values[c.ticker])) for c in batch]
