"""The accuracy of BUY/SELL/HOLD decisions against the AlphaQuanter regime label (`market.regime`).

Decisions map to regimes as BUY <-> bullish, SELL <-> bearish, HOLD <-> sideways; days
without a label are left out of the scores. The confusion matrix has regimes as rows and
decisions as columns. Accuracy = share of labelled
decisions on the diagonal; macro-F1 = the mean over the classes that occur (in the labels or
the decisions) of F1 = 2 * precision * recall / (precision + recall), 0 when both are 0.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from market.regime import ACTION_OF_REGIME, ACTIONS, REGIMES


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
