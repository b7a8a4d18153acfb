"""The plugin API: subclass `TradingFramework` and implement `decide`.

A framework maps a batch of `DecisionContext`s (ticker, date, point-in-time `MarketView`,
tools, seed, and — only if it sets `needs_portfolio` — the portfolio) to one `Decision` each.
Class attributes tell the runner how to drive it:

- `stateful = False`: decisions depend only on the context, so the runner may hand over every
  date of every episode at once (fan-out). `True`: the runner steps day by day.
- `needs_portfolio`: show the portfolio at the close of the decision day (stateful only).
- `stochastic`: run every configured seed (a deterministic framework runs the first only).
  A stochastic framework must draw its randomness from the context's seed (and ticker, date),
  never from global state, so that a resumed run reproduces it exactly.

Twenty-line example, a momentum rule (the README's plugin example is this class)::

    class Momentum(TradingFramework):
        def __init__(self, lookback: int = 20):
            self.lookback = lookback

        def decide(self, batch):
            decisions = []
            for ctx in batch:
                closes = ctx.view.bars(ctx.ticker, lookback=self.lookback + 1)["close"]
                if len(closes) <= self.lookback:
                    decisions.append(Decision(action=Action.HOLD))
                elif closes.iloc[-1] > closes.iloc[0]:
                    decisions.append(Decision(action=Action.BUY))
                else:
                    decisions.append(Decision(action=Action.SELL))
            return decisions
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from market.decision import Decision, DecisionContext


class TradingFramework(ABC):
    """Base class of every framework, built-in or plugin."""

    stateful: ClassVar[bool] = False
    needs_portfolio: ClassVar[bool] = False
    stochastic: ClassVar[bool] = False

    @abstractmethod
    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        """One decision per context, in the same order."""
