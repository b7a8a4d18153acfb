"""KDJ + RSI oversold/overbought: BUY when J < j_low and RSI < rsi_low (both oversold), SELL
when J > j_high and RSI > rsi_high (both overbought), HOLD otherwise. KDJ over `kdj_window`
bars (K, D smoothed 2/3–1/3, J = 3K − 2D), RSI over `rsi_window` bars; defaults 9, 14,
J 20/80, RSI 40/60."""

from __future__ import annotations

import pandas as pd

from frameworks.baselines.signal_rule import SignalRule, warmed_up
from market.decision import Action
from tools.indicators import stockstats_frame


class KDJRSI(SignalRule):
    def __init__(self, kdj_window: int = 9, rsi_window: int = 14, j_low: float = 20.0,
                 j_high: float = 80.0, rsi_low: float = 40.0, rsi_high: float = 60.0):
        self.kdj_window, self.rsi_window = kdj_window, rsi_window
        self.j_low, self.j_high, self.rsi_low, self.rsi_high = j_low, j_high, rsi_low, rsi_high

    def signals(self, bars: pd.DataFrame) -> pd.Series:
        stats = stockstats_frame(bars)
        j, rsi = stats[f"kdjj_{self.kdj_window}"], stats[f"rsi_{self.rsi_window}"]
        warm = warmed_up(bars, max(self.kdj_window, self.rsi_window) + 1)
        actions = pd.Series(Action.HOLD, index=bars.index, dtype=object)
        actions[(j < self.j_low) & (rsi < self.rsi_low) & warm] = Action.BUY
        actions[(j > self.j_high) & (rsi > self.rsi_high) & warm] = Action.SELL
        return actions
