"""MacroHFT's three state groups, from OHLCV bars (the original reads limit-order-book features).

The original feeds each network two vectors per minute (`data/feature_list/`): `single_features`
(the bar's own order-book and price features) and `trend_features` (their changes over longer
horizons), and the hyper-agent a third, the market context (`slope_360`, `vol_360`). No
order-book data exists offline, so here (a declared deviation, docs/macrohft.md):

| group   | columns                                                       | on bar t (bars ≤ t only) |
|---------|---------------------------------------------------------------|--------------------------|
| single  | `comparators.features.FEATURE_NAMES` (Alpha158 subset: candle shape, returns, moving means and stds, volume ratios) | the shared point-in-time features |
| trend   | ret120, ret480                                                | log(c_t / c_{t−d})       |
|         | slope60, slope240                                             | Butterworth slope of log c over the last d bars (`market_conditions.rolling_slope`), per bar |
|         | vol60, vol240                                                 | std of the last d simple returns |
|         | ema60_240                                                     | EMA60(c)_t / EMA240(c)_t − 1 (exponential means over the whole history) |
| context | slope360, vol360                                              | the original's `slope_360`, `vol_360` (`market_conditions`) |

Each group is standardised with the train split's means and stds (`comparators.features.Standardiser`;
undefined warm-up values become 0, the train mean). Exponential means depend on where history
starts: training and trading both compute from the first bar of the data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from comparators.features import Standardiser, bar_features
from comparators.market_conditions import rolling_slope, rolling_volatility

CONTEXT_WINDOW = 360
"""Bars of the hyper-agent's context statistics (the original's 360 minutes)."""


def trend_features(bars: pd.DataFrame) -> pd.DataFrame:
    """The trend group of the module table, per bar of `bars`."""
    close = bars["close"].astype(float)
    log_close = np.log(close)
    out = {"ret120": log_close.diff(120), "ret480": log_close.diff(480),
           "slope60": rolling_slope(close, 60), "slope240": rolling_slope(close, 240),
           "vol60": rolling_volatility(close, 60), "vol240": rolling_volatility(close, 240),
           "ema60_240": close.ewm(span=60, adjust=False).mean() / close.ewm(span=240, adjust=False).mean() - 1.0}
    return pd.DataFrame(out, index=bars.index)


def context_features(bars: pd.DataFrame) -> pd.DataFrame:
    """The context group: Butterworth slope and volatility over the last `CONTEXT_WINDOW` bars."""
    close = bars["close"].astype(float)
    return pd.DataFrame({"slope360": rolling_slope(close, CONTEXT_WINDOW),
                         "vol360": rolling_volatility(close, CONTEXT_WINDOW)}, index=bars.index)


GROUPS = {"single": bar_features, "trend": trend_features, "context": context_features}


@dataclass(frozen=True)
class StateScaling:
    """One train-split `Standardiser` per group."""

    single: Standardiser
    trend: Standardiser
    context: Standardiser

    @classmethod
    def fit(cls, bars: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp) -> StateScaling:
        """Means and stds of each group over the bars dated in [start, end] (the train split)."""
        return cls(**{name: Standardiser.fit([make(bars)], start, end) for name, make in GROUPS.items()})

    def to_dict(self) -> dict:
        return {name: getattr(self, name).to_dict() for name in GROUPS}

    @classmethod
    def from_dict(cls, values: dict) -> StateScaling:
        return cls(**{name: Standardiser.from_dict(values[name]) for name in GROUPS})

    def states(self, bars: pd.DataFrame) -> dict[str, np.ndarray]:
        """{group: float32 [len(bars), F_group]}: every bar's standardised state."""
        return {name: getattr(self, name).transform(make(bars)) for name, make in GROUPS.items()}
