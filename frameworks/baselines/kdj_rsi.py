"""KDJ + RSI oversold/overbought: BUY when J < j_low and RSI < rsi_low (both oversold), SELL
when J > j_high and RSI > rsi_high (both overbought), HOLD otherwise. KDJ over `kdj_window`
bars (K, D smoothed 2/3–1/3, J = 3K − 2D), RSI over `rsi_window` bars; defaults 9, 14,
J 20/80, RSI 40/60. Warm-up: the longer of Wilder's RSI average (after the first price change)
and the KDJ window followed by its two 1/3 smoothings (`recursive_warmup`)."""

from __future__ import annotations

import pandas as pd

from frameworks.baselines.signal_rule import SignalRule, recursive_warmup
from market.decision import Action
from tools.indicators import stockstats_frame

KD_SMOOTHING = 1.0 / 3.0
"""stockstats' K = 2/3 K_prev + 1/3 RSV and D = 2/3 D_prev + 1/3 K."""


class KDJRSI(SignalRule):
    def __init__(self, kdj_window: int = 9, rsi_window: int = 14, j_low: float = 20.0,
                 j_high: float = 80.0, rsi_low: float = 40.0, rsi_high: float = 60.0):
        self.kdj_window, self.rsi_window = kdj_window, rsi_window
        self.j_low, self.j_high, self.rsi_low, self.rsi_high = j_low, j_high, rsi_low, rsi_high

    @property
    def warmup_bars(self) -> int:
        rsi = 1 + recursive_warmup(1.0 / self.rsi_window)
        kdj = self.kdj_window + 2 * recursive_warmup(KD_SMOOTHING)
        return max(rsi, kdj)

    def raw_signals(self, bars: pd.DataFrame) -> pd.Series:
        stats = stockstats_frame(bars)
        j, rsi = stats[f"kdjj_{self.kdj_window}"], stats[f"rsi_{self.rsi_window}"]
        actions = pd.Series(Action.HOLD, index=bars.index, dtype=object)
        actions[(j < self.j_low) & (rsi < self.rsi_low)] = Action.BUY
        actions[(j > self.j_high) & (rsi > self.rsi_high)] = Action.SELL
        return actions
