"""Stochastic oscillator + Bollinger bands (FinAgent's third rule tool): BUY when the close is
below the lower band and %K < oversold, SELL when it is above the upper band and %K > overbought,
HOLD otherwise. %K_t = 100 (close_t − min low over `window` bars) / (max high − min low);
bands = SMA_window(close) ± n_std · std_window(close) (sample std, ddof = 1); defaults window
14, 2 std, 20 / 80 (the FinAgent code's). Warm-up: one window."""

from __future__ import annotations

import pandas as pd

from frameworks.baselines.signal_rule import SignalRule
from market.decision import Action


class StochasticBollinger(SignalRule):
    def __init__(self, window: int = 14, n_std: float = 2.0, oversold: float = 20.0, overbought: float = 80.0):
        self.window, self.n_std, self.oversold, self.overbought = window, n_std, oversold, overbought

    @property
    def warmup_bars(self) -> int:
        return self.window

    def raw_signals(self, bars: pd.DataFrame) -> pd.Series:
        close = bars["close"]
        lowest, highest = bars["low"].rolling(self.window).min(), bars["high"].rolling(self.window).max()
        stochastic = 100.0 * (close - lowest) / (highest - lowest)
        mean, std = close.rolling(self.window).mean(), close.rolling(self.window).std()
        actions = pd.Series(Action.HOLD, index=bars.index, dtype=object)
        actions[(close < mean - self.n_std * std) & (stochastic < self.oversold)] = Action.BUY
        actions[(close > mean + self.n_std * std) & (stochastic > self.overbought)] = Action.SELL
        return actions
