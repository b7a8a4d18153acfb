"""The paper's regime label (market/regime.py) and the decision-vs-regime scores of metrics/regime.py."""

import math

import numpy as np
import pandas as pd
import pytest

from market import regime as regime_label
from metrics import regime


def test_weights_are_normalised_powers_of_eta():
    w = regime_label.horizon_weights(7, 0.8)
    assert w.sum() == pytest.approx(1.0)
    assert w[0] == pytest.approx(0.8 / sum(0.8**i for i in range(1, 8)))
    assert np.all(np.diff(w) < 0)


def test_score_matches_the_formula_and_needs_a_full_horizon():
    rng = np.random.default_rng(0)
    close = pd.Series(100 * np.cumprod(1 + rng.normal(0, 0.02, 30)),
                      index=pd.bdate_range("2025-01-01", periods=30))
    score = regime_label.regime_scores(close)
    w = regime_label.horizon_weights()
    p = close.to_numpy()
    t = 5
    expected = sum(w[h - 1] * (p[t + h + 1] / p[t + 1] - 1) for h in range(1, 8))
    assert score.iloc[t] == pytest.approx(expected)
    assert score.iloc[:22].notna().all() and score.iloc[22:].isna().all()


@pytest.mark.parametrize("step, label", [(0.01, "bullish"), (-0.01, "bearish"), (0.001, "sideways")])
def test_labels_follow_the_threshold(step, label):
    close = pd.Series(100 * (1 + step) ** np.arange(20))
    labels = regime_label.regime_labels(close)
    assert (labels.iloc[:12] == label).all()
    assert labels.iloc[12:].isna().all()


def test_confusion_accuracy_and_macro_f1():
    dates = pd.RangeIndex(7)
    regimes = pd.Series(["bullish", "bullish", "bearish", "sideways", "sideways", "bearish", np.nan], index=dates)
    actions = pd.Series(["BUY", "HOLD", "SELL", "HOLD", "BUY", "BUY", "BUY"], index=dates)
    matrix = regime.confusion_matrix(actions, regimes)
    assert matrix.loc["bullish"].tolist() == [1, 0, 1]
    assert matrix.loc["bearish"].tolist() == [1, 1, 0]
    assert matrix.loc["sideways"].tolist() == [1, 0, 1]
    assert regime.regime_accuracy(matrix) == pytest.approx(3 / 6)
    # F1: bullish 2*1/(2+3), bearish 2*1/(2+1), sideways 2*1/(2+2)
    assert regime.macro_f1(matrix) == pytest.approx(np.mean([0.4, 2 / 3, 0.5]))


def test_classes_absent_from_both_sides_do_not_count_in_macro_f1():
    regimes = pd.Series(["bullish", "bullish"])
    matrix = regime.confusion_matrix(pd.Series(["BUY", "BUY"]), regimes)
    assert regime.macro_f1(matrix) == 1.0
    assert regime.regime_accuracy(matrix) == 1.0
    empty = regime.confusion_matrix(pd.Series([], dtype=object), pd.Series([], dtype=object))
    assert math.isnan(regime.regime_accuracy(empty)) and math.isnan(regime.macro_f1(empty))
