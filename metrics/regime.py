"""The AlphaQuanter regime label and the accuracy of BUY/SELL/HOLD decisions against it.

For a decision on day t (decided at the close of t, filled at the open of t+1) the label
looks at the close prices p of the following bars:

    r_t = sum_{h=1..H} w_h (p_{t+h+1} / p_{t+1} - 1),   w_h = eta^h / sum_{i=1..H} eta^i

with H = 7, eta = 0.8; the regime is *bullish* if r_t > theta, *bearish* if r_t < -theta,
else *sideways*, theta = 1.5 %. p is the close price. A day without the full horizon (fewer
than H + 1 bars after it) gets no label (NaN) and is left out of the scores.

Decisions map to regimes as BUY <-> bullish, SELL <-> bearish, HOLD <-> sideways; the
confusion matrix has regimes as rows and decisions as columns. Accuracy = share of labelled
decisions on the diagonal; macro-F1 = the mean over the classes that occur (in the labels or
the decisions) of F1 = 2 * precision * recall / (precision + recall), 0 when both are 0.
"""

from __future__ import annotations

import math

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


def confusion_matrix(actions: pd.Series, regimes: pd.Series) -> pd.DataFrame:
    """Counts of (regime row, action column) over the dates where both exist, aligned on the index."""
    both = pd.concat({"regime": regimes, "action": actions}, axis=1, join="inner").dropna()
    matrix = pd.crosstab(both["regime"], both["action"])
    return matrix.reindex(index=list(REGIMES), columns=list(ACTIONS), fill_value=0).astype(int)


def regime_hits(matrix: pd.DataFrame) -> int:
    """Labelled decisions whose action matches the regime (the diagonal)."""
    return sum(int(matrix.loc[regime, action]) for regime, action in ACTION_OF_REGIME.items())


def regime_accuracy(matrix: pd.DataFrame) -> float:
    """Share of labelled decisions whose action matches the regime; NaN for no labelled decision."""
    total = int(matrix.to_numpy().sum())
    return regime_hits(matrix) / total if total else math.nan


def macro_f1(matrix: pd.DataFrame) -> float:
    """Mean F1 over the classes that occur as a regime or as a decision; NaN for an empty matrix."""
    scores = []
    for regime, action in ACTION_OF_REGIME.items():
        true_positive = int(matrix.loc[regime, action])
        actual = int(matrix.loc[regime].sum())
        predicted = int(matrix[action].sum())
        if actual == 0 and predicted == 0:
            continue
        scores.append(2.0 * true_positive / (actual + predicted))
    return float(np.mean(scores)) if scores else math.nan
