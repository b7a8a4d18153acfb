"""Moving-average crossover: BUY when SMA_fast(close) crosses above SMA_slow(close), SELL when
it crosses below, HOLD otherwise; defaults fast = 10, slow = 30 bars. Warm-up: slow + 1 bars
(the crossing compares with the previous bar's full window)."""

from __future__ import annotations

import pandas as pd

from frameworks.baselines.signal_rule import SignalRule, crossed_above
from market.decision import Action
from tools.indicators import stockstats_frame


class SMACross(SignalRule):
    def __init__(self, fast: int = 10, slow: int = 30):
        if fast >= slow:
            raise ValueError(f"sma_cross: fast ({fast}) must be shorter than slow ({slow})")
        self.fast, self.slow = fast, slow

    @property
    def warmup_bars(self) -> int:
        return self.slow + 1

    def raw_signals(self, bars: pd.DataFrame) -> pd.Series:
        stats = stockstats_frame(bars)
        fast, slow = stats[f"close_{self.fast}_sma"], stats[f"close_{self.slow}_sma"]
        actions = pd.Series(Action.HOLD, index=bars.index, dtype=object)
        actions[crossed_above(fast, slow)] = Action.BUY
        actions[crossed_above(slow, fast)] = Action.SELL
        return actions
