"""`SignalRule`: a stateless rule that maps a ticker's bar history to one action per bar.

The rule's `signals(bars)` must be causal — its value on bar t may depend only on bars ≤ t.
The fan-out then needs one indicator pass per ticker: it is computed on the view of the
latest decision date in the batch (which holds no data after that date) and read off for every
earlier date. A test checks that this gives the same decisions as deciding one date at a time.
Indicators come from stockstats, through the tools' `stockstats_frame`.
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np
import pandas as pd

from frameworks.base import TradingFramework
from market.decision import Action, Decision, DecisionContext


def warmed_up(bars: pd.DataFrame, window: int) -> pd.Series:
    """True from the `window`-th bar on: where an indicator over `window` bars has a full window."""
    return pd.Series(np.arange(len(bars)) >= window - 1, index=bars.index)


def crossed_above(fast: pd.Series, slow: pd.Series) -> pd.Series:
    """True on bars where `fast` moves from ≤ `slow` to > `slow`."""
    above = fast > slow
    return above & ~above.shift(1, fill_value=True)


class SignalRule(TradingFramework):
    """Base for deterministic, causal indicator rules."""

    @abstractmethod
    def signals(self, bars: pd.DataFrame) -> pd.Series:
        """One `Action` per bar of `bars`, causal (bar t uses bars ≤ t only)."""

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        latest: dict[str, DecisionContext] = {}
        for ctx in batch:
            if ctx.ticker not in latest or ctx.date > latest[ctx.ticker].date:
                latest[ctx.ticker] = ctx
        signals = {t: self.signals(ctx.view.bars(t)) for t, ctx in latest.items()}
        return [Decision(action=signals[ctx.ticker].get(ctx.date, Action.HOLD)) for ctx in batch]
