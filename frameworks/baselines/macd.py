"""MACD crossover: BUY when the MACD line crosses above its signal line, SELL when it
crosses below, HOLD otherwise. MACD = EMA_fast(close) − EMA_slow(close), signal =
EMA_signal(MACD); defaults (12, 26, 9). Warm-up: the slow EMA's, then the signal EMA's
(`recursive_warmup`), plus the previous bar of the crossing — 163 bars for the defaults."""

from __future__ import annotations

import pandas as pd

from frameworks.baselines.signal_rule import SignalRule, crossed_above, recursive_warmup
from market.decision import Action
from tools.indicators import stockstats_frame


class MACDCross(SignalRule):
    def __init__(self, fast: int = 12, slow: int = 26, signal: int = 9):
        self.fast, self.slow, self.signal = fast, slow, signal

    @property
    def warmup_bars(self) -> int:
        slowest = 2.0 / (max(self.fast, self.slow) + 1)
        return recursive_warmup(slowest) + recursive_warmup(2.0 / (self.signal + 1)) + 1

    def raw_signals(self, bars: pd.DataFrame) -> pd.Series:
        stats = stockstats_frame(bars)
        params = f"{self.fast},{self.slow},{self.signal}"
        macd, line = stats[f"macd_{params}"], stats[f"macds_{params}"]
        actions = pd.Series(Action.HOLD, index=bars.index, dtype=object)
        actions[crossed_above(macd, line)] = Action.BUY
        actions[crossed_above(line, macd)] = Action.SELL
        return actions
