"""Technical indicators of the AlphaQuanter tool set, computed with stockstats.

Each indicator maps to stockstats columns (or, for CMF which stockstats lacks, to its
formula over pandas rolling sums) and to the number of bars it needs before its first
meaningful value; earlier values are reported as missing rather than as stockstats'
partial-window numbers.

| name   | columns            | definition                                                     |
|--------|--------------------|----------------------------------------------------------------|
| sma20  | sma20              | mean of the last 20 closes                                     |
| ema10  | ema10              | exponential mean of closes, span 10                            |
| vwma20 | vwma20             | Σ TP·volume / Σ volume over 20 bars, TP = (H + L + C)/3        |
| rsi14  | rsi14              | Wilder RSI over 14 bars, 0..100                                |
| stoch  | stoch_k, stoch_d   | %K = SMA3 of raw %K(14) = 100·(C − L14)/(H14 − L14); %D = SMA3 of %K |
| cci21  | cci21              | (TP − SMA21(TP)) / (0.015 · mean abs dev), TP = (H + L + C)/3  |
| bbands | bb_mid, bb_upper, bb_lower | SMA20 ± 2 standard deviations of the close             |
| atr14  | atr14              | Wilder average true range over 14 bars (price units)           |
| obv    | obv                | cumulative volume signed by the close-to-close change          |
| cmf    | cmf20              | Σ MFV / Σ volume over 20 bars, MFV = volume·((C − L) − (H − C))/(H − L) |
| macd   | macd, macd_signal, macd_hist | EMA12 − EMA26; its EMA9; their difference            |
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import stockstats

# name -> ({output column: stockstats column}, bars needed for the first full value)
INDICATORS: dict[str, tuple[dict[str, str], int]] = {
    "sma20": ({"sma20": "close_20_sma"}, 20),
    "ema10": ({"ema10": "close_10_ema"}, 10),
    "vwma20": ({"vwma20": "vwma_20"}, 20),
    "rsi14": ({"rsi14": "rsi_14"}, 15),
    "stoch": ({"stoch_k": "rsv_14_3_sma", "stoch_d": "rsv_14_3_sma_3_sma"}, 18),
    "cci21": ({"cci21": "cci_21"}, 21),
    "bbands": ({"bb_mid": "boll_20", "bb_upper": "boll_ub_20", "bb_lower": "boll_lb_20"}, 20),
    "atr14": ({"atr14": "atr_14"}, 15),
    "obv": ({"obv": "obv"}, 1),
    "cmf": ({"cmf20": ""}, 20),
    "macd": ({"macd": "macd", "macd_signal": "macds", "macd_hist": "macdh"}, 34),
}
INDICATOR_NAMES = tuple(INDICATORS)

HISTORY_BARS = 250
"""Bars fed to stockstats before the shown rows; exponential averages have converged by then."""


def chaikin_money_flow(bars: pd.DataFrame, window: int = 20) -> pd.Series:
    """CMF = Σ MFV / Σ volume over `window` bars, MFV = volume·((C − L) − (H − C))/(H − L).

    A bar with high == low contributes no money flow.
    """
    span = (bars["high"] - bars["low"]).to_numpy()
    position = ((bars["close"] - bars["low"]) - (bars["high"] - bars["close"])).to_numpy()
    multiplier = np.divide(position, span, out=np.zeros(len(bars)), where=span > 0)
    flow = pd.Series(multiplier * bars["volume"].to_numpy(), index=bars.index)
    return flow.rolling(window).sum() / bars["volume"].rolling(window).sum()


def stockstats_frame(bars: pd.DataFrame) -> stockstats.StockDataFrame:
    """A stockstats frame over a copy of the OHLCV columns of `bars` (indicators by column name)."""
    return stockstats.wrap(bars[["open", "high", "low", "close", "volume"]].copy())


def indicator_table(bars: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """The columns of the indicators `names` for every row of `bars` (NaN before warm-up)."""
    frame = stockstats_frame(bars)
    out = {}
    for name in names:
        columns, warmup = INDICATORS[name]
        for column, source in columns.items():
            values = chaikin_money_flow(bars) if name == "cmf" else frame[source]
            series = pd.Series(np.asarray(values, dtype=float), index=bars.index)
            series.iloc[: warmup - 1] = np.nan
            out[column] = series
    return pd.DataFrame(out, index=bars.index)
