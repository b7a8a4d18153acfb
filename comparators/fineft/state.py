"""FineFT's market state on OHLCV bars: the shared bar features plus longer trend and volatility columns.

Per bar t: the comparators' OHLCV features (`comparators.features.bar_features`, windows of at
most 20 bars) and, with log returns r_i = log(c_i / c_{i−1}),

| feature       | value on bar t                                                  |
|---------------|-----------------------------------------------------------------|
| lret_w        | log(c_t / c_{t−w}), w = 60, 240 bars (trend over one and four hours of minutes) |
| lvol_w        | std(r_{t−w+1..t}, ddof=1), w = 60, 240 (volatility)              |
| funding_left  | share of the funding interval left until the next funding time   |

The market conditions that route FineFT's learners are trends and volatility regimes lasting
hours; 20-bar windows alone do not see them. Every row reads only the last `LOOKBACK` bars up to
t, so a decision computes it from a short window of the point-in-time view and gets the number
training computed over the whole history; rows with less history are NaN (0 once standardised
with the training split's statistics, `comparators.features.Standardiser`). The original's state
is limit-order-book features (spreads, depth imbalances, trade flows); no LOB data exists
offline, so OHLCV features stand in for them (docs/fineft.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from comparators.features import FEATURE_NAMES, bar_features

LONG_WINDOWS = (60, 240)
LOOKBACK = max(LONG_WINDOWS) + 1
"""Bars of history one row reads (the longest window and its base bar)."""

STATE_FEATURES = (*FEATURE_NAMES, *(f"lret_{w}" for w in LONG_WINDOWS), *(f"lvol_{w}" for w in LONG_WINDOWS),
                  "funding_left")


def state_table(bars: pd.DataFrame, funding_hours: float) -> pd.DataFrame:
    """The `STATE_FEATURES` columns for every row of `bars` (NaN where history is short)."""
    log_close = np.log(bars["close"].astype(float))
    returns = log_close.diff()
    out = bar_features(bars)
    for w in LONG_WINDOWS:
        out[f"lret_{w}"] = log_close - log_close.shift(w)
    for w in LONG_WINDOWS:
        out[f"lvol_{w}"] = returns.rolling(w).std(ddof=1)
    step = pd.Timedelta(hours=funding_hours).value
    out["funding_left"] = 1.0 - (bars.index.as_unit("ns").asi8 % step) / step
    return out[list(STATE_FEATURES)].astype(np.float64)
