"""The AlphaQuanter regime label of a decision day, from the close prices after it.

For a decision on day t (decided at the close of t, filled at the open of t+1) the label
looks at the close prices p of the following bars:

    r_t = sum_{h=1..H} w_h (p_{t+h+1} / p_{t+1} - 1),   w_h = eta^h / sum_{i=1..H} eta^i

with H = 7, eta = 0.8; the regime is *bullish* if r_t > theta, *bearish* if r_t < -theta,
else *sideways*, theta = 1.5 %. p is the close price. A day without the full horizon (fewer
than H + 1 bars after it) gets no label (NaN). Each regime has the action that suits it:
BUY <-> bullish, SELL <-> bearish, HOLD <-> sideways.

The label is read by the single agent's reward and by the report's scores (`metrics.regime`);
it looks into the future by design, so no framework ever sees it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

REGIMES: tuple[str, ...] = ("bullish", "bearish", "sideways")
ACTION_OF_REGIME: dict[str, str] = {"bullish": "BUY", "bearish": "SELL", "sideways": "HOLD"}
ACTIONS: tuple[str, ...] = tuple(ACTION_OF_REGIME.values())


def horizon_weights(horizon: int = 7, eta: float = 0.8) -> np.ndarray:
    """w_h = eta^h / sum_{i=1..H} eta^i for h = 1..H (they sum to 1)."""
    powers = eta ** np.arange(1, horizon + 1, dtype=float)
    return powers / powers.sum()


def regime_scores(close: pd.Series, horizon: int = 7, eta: float = 0.8) -> pd.Series:
    """r_t = sum_h w_h (p_{t+h+1} / p_{t+1} - 1) for each bar of ``close`` (date order); NaN without a full horizon."""
    entry = close.shift(-1)
    weights = horizon_weights(horizon, eta)
    score = sum(w * (close.shift(-(h + 1)) / entry - 1.0) for h, w in enumerate(weights, start=1))
    return score.rename("regime_score")


def regime_labels(
    close: pd.Series, horizon: int = 7, eta: float = 0.8, theta: float = 0.015
) -> pd.Series:
    """bullish if r_t > theta, bearish if r_t < -theta, sideways otherwise; NaN (no label) without a full horizon."""
    score = regime_scores(close, horizon, eta)
    labels = np.where(score > theta, "bullish", np.where(score < -theta, "bearish", "sideways"))
    return pd.Series(labels, index=close.index, dtype=object).where(score.notna()).rename("regime")
