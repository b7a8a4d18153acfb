"""Point-in-time observation features of the FinRL-style agents.

An observation for a decision at the close of bar t is `market_features` row t followed by the
portfolio's exposure at that close. Every market feature is scale-free (a ratio to the close
of bar t, a 0..1 oscillator or a flow share), so one policy serves every ticker:

| feature                      | value on bar t                                                 |
|------------------------------|----------------------------------------------------------------|
| open/high/low/close_lag<k>   | price of bar t−k / close_t − 1, k = 0 .. window−1               |
| volume_lag<k>                | volume_{t−k} / mean(volume over the window) − 1                |
| sma20 ema10 vwma20 bb_mid bb_upper bb_lower | level / close_t − 1                            |
| rsi14 stoch_k stoch_d        | oscillator / 100                                               |
| cci21                        | CCI / 100                                                      |
| atr14 macd macd_signal macd_hist | value / close_t                                            |
| cmf20                        | Chaikin money flow (−1 .. 1)                                   |
| obv_flow20                   | (OBV_t − OBV_{t−20}) / Σ volume over 20 bars (OBV's level depends on where the data starts) |
| exposure                     | shares·close_t / equity_t at the close (0 flat .. 1 fully long)|

Indicators are those of the agents' tool (`tools.indicators`). A value that is not yet
defined (warm-up, a lag before the first bar) is 0. The cash share is 1 − exposure (long-only),
so it is not a separate feature.

Every row depends only on bars ≤ t, but exponential averages depend on where the history
starts; so training and trading compute rows over history that starts at the same `anchor`
bar (`HISTORY_BARS` before the training window), and the row of a date is the same number
whichever later date it is computed on.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from market.portfolio import PortfolioState
from tools.indicators import HISTORY_BARS, INDICATOR_NAMES, indicator_table

PRICE_LEVELS = ("sma20", "ema10", "vwma20", "bb_mid", "bb_upper", "bb_lower")
OSCILLATORS = ("rsi14", "stoch_k", "stoch_d")
PRICE_SCALED = ("atr14", "macd", "macd_signal", "macd_hist")
OBV_FLOW_BARS = 20


def ohlcv_window(bars: pd.DataFrame, window: int) -> pd.DataFrame:
    """The last `window` bars of OHLCV on each row, normalised by that row's close and mean volume."""
    close = bars["close"]
    mean_volume = bars["volume"].rolling(window, min_periods=1).mean()
    columns = {}
    for lag in range(window):
        shifted = bars.shift(lag)
        for price in ("open", "high", "low", "close"):
            columns[f"{price}_lag{lag}"] = shifted[price] / close - 1.0
        columns[f"volume_lag{lag}"] = shifted["volume"] / mean_volume - 1.0
    return pd.DataFrame(columns, index=bars.index)


def indicator_features(bars: pd.DataFrame) -> pd.DataFrame:
    """The tool set's indicators on each row, made scale-free (see the module table)."""
    table = indicator_table(bars, list(INDICATOR_NAMES))
    close = bars["close"]
    out = pd.DataFrame(index=bars.index)
    for column in PRICE_LEVELS:
        out[column] = table[column] / close - 1.0
    for column in OSCILLATORS:
        out[column] = table[column] / 100.0
    out["cci21"] = table["cci21"] / 100.0
    for column in PRICE_SCALED:
        out[column] = table[column] / close
    out["cmf20"] = table["cmf20"]
    volume_sum = bars["volume"].rolling(OBV_FLOW_BARS).sum().replace(0.0, np.nan)
    out["obv_flow20"] = table["obv"].diff(OBV_FLOW_BARS) / volume_sum
    return out


def market_features(bars: pd.DataFrame, window: int) -> pd.DataFrame:
    """Every market feature of every row of `bars` (causal: row t uses bars ≤ t), 0 where undefined."""
    frame = pd.concat([ohlcv_window(bars, window), indicator_features(bars)], axis=1)
    return frame.replace([np.inf, -np.inf], np.nan).fillna(0.0).astype(np.float32)


def feature_anchor(index: pd.DatetimeIndex, train_start: pd.Timestamp) -> pd.Timestamp:
    """The first bar of feature history: `HISTORY_BARS` bars before `train_start`, or the first bar."""
    position = index.searchsorted(train_start)
    return index[max(position - HISTORY_BARS, 0)]


def observation(market_row: np.ndarray, portfolio: PortfolioState) -> np.ndarray:
    """The observation vector: market features of the decision bar, then the exposure."""
    return np.append(market_row, np.float32(portfolio.exposure)).astype(np.float32)
