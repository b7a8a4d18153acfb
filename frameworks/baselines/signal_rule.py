"""`SignalRule`: a stateless rule that maps a ticker's bar history to one action per bar.

The rule's `raw_signals(bars)` must be causal — its value on bar t may depend only on bars ≤ t.
`signals(bars)` masks its first `warmup_bars` − 1 bars as HOLD: before then an indicator has no
full window or still remembers how the history began, so the decision would depend on how much
history precedes the window. Moving windows need their length (plus one bar when a crossing
compares with the previous bar); recursive averages (EMA, Wilder) need the bars after which the
weight they still give to their start-up, (1 − α)^n, is below `STARTUP_TOLERANCE`.

The fan-out then needs one indicator pass per ticker: it is computed on the view of the
latest decision date in the batch (which holds no data after that date) and read off for every
earlier date. A test checks that this gives the same decisions as deciding one date at a time.
Indicators come from stockstats, through the tools' `stockstats_frame`.
"""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np
import pandas as pd

from frameworks.base import TradingFramework
from frameworks.baselines.shared_decisions import shared_decisions
from market.decision import Action, Decision, DecisionContext

STARTUP_TOLERANCE = 1e-4
"""Largest weight a warmed-up recursive average may still give to the bars before the history began."""


def warmed_up(bars: pd.DataFrame, window: int) -> pd.Series:
    """True from the `window`-th bar on: where an indicator over `window` bars has a full window."""
    return pd.Series(np.arange(len(bars)) >= window - 1, index=bars.index)


def recursive_warmup(alpha: float, tolerance: float = STARTUP_TOLERANCE) -> int:
    """Bars n after which a recursive average y_t = α x_t + (1 − α) y_{t−1} weighs its start by < tolerance:
    n = ⌈ln(tolerance) / ln(1 − α)⌉ (EMA of span s: α = 2 / (s + 1); Wilder's of window w: α = 1 / w)."""
    return math.ceil(math.log(tolerance) / math.log(1.0 - alpha))


def crossed_above(fast: pd.Series, slow: pd.Series) -> pd.Series:
    """True on bars where `fast` moves from ≤ `slow` to > `slow`."""
    above = fast > slow
    return above & ~above.shift(1, fill_value=True)


class SignalRule(TradingFramework):
    """Base for deterministic, causal indicator rules."""

    @property
    @abstractmethod
    def warmup_bars(self) -> int:
        """Bars of history the rule needs before its signal is meaningful and history-independent."""

    @abstractmethod
    def raw_signals(self, bars: pd.DataFrame) -> pd.Series:
        """One `Action` per bar of `bars`, causal (bar t uses bars ≤ t only), warm-up not masked."""

    def signals(self, bars: pd.DataFrame) -> pd.Series:
        """`raw_signals` with HOLD on every bar before the warm-up is complete."""
        actions = self.raw_signals(bars).copy()
        actions[~warmed_up(bars, self.warmup_bars)] = Action.HOLD
        return actions

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        """One indicator pass per ticker, on the view of its latest date in the batch, read off
        for every context of that ticker at once (`Index.get_indexer`; a date without a bar is HOLD)."""
        latest: dict[str, DecisionContext] = {}
        members: dict[str, list[int]] = {}
        for i, ctx in enumerate(batch):
            members.setdefault(ctx.ticker, []).append(i)
            if ctx.ticker not in latest or ctx.date > latest[ctx.ticker].date:
                latest[ctx.ticker] = ctx
        actions: list[Action] = [Action.HOLD] * len(batch)
        for ticker, ctx in latest.items():
            signals = self.signals(ctx.view.bars(ticker))
            values = signals.to_numpy()
            rows = members[ticker]
            for i, position in zip(rows, signals.index.get_indexer([batch[i].date for i in rows])):
                if position >= 0:
                    actions[i] = values[position]
        return shared_decisions(actions)
