"""Z-score mean reversion (long-only): z_t = (close_t − SMA_w) / std_w over `window` bars
(stockstats' `close_<w>_z`). BUY when z < −entry (price stretched below its mean), SELL when
z ≥ exit (reverted to the mean, or stretched above it), HOLD otherwise; defaults window = 20,
entry = 1, exit = 0. Warm-up: one window."""

from __future__ import annotations

import pandas as pd

from frameworks.baselines.signal_rule import SignalRule
from market.decision import Action
from tools.indicators import stockstats_frame


class ZScoreMeanReversion(SignalRule):
    def __init__(self, window: int = 20, entry: float = 1.0, exit: float = 0.0):
        self.window, self.entry, self.exit = window, entry, exit

    @property
    def warmup_bars(self) -> int:
        return self.window

    def raw_signals(self, bars: pd.DataFrame) -> pd.Series:
        z = stockstats_frame(bars)[f"close_{self.window}_z"]
        actions = pd.Series(Action.HOLD, index=bars.index, dtype=object)
        actions[z < -self.entry] = Action.BUY
        actions[z >= self.exit] = Action.SELL
        return actions
