"""Market-condition labels: Butterworth slope, volatility, train-split quantile bins."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.signal import butter, filtfilt

from comparators.market_conditions import (MarketConditions, QuantileBins, butterworth_slope, chunk_statistics,
                                           rolling_slope, rolling_volatility)
from core.errors import ConfigError


def _closes(n: int, drift: float, vol: float, seed: int = 0) -> pd.Series:
    rng = np.random.default_rng(seed)
    index = pd.date_range("2024-01-01", periods=n, freq="min")
    return pd.Series(100.0 * np.exp(np.cumsum(drift + vol * rng.standard_normal(n))), index=index)


def test_slope_follows_the_drift_sign_and_size():
    up, down = _closes(500, 1e-3, 1e-4), _closes(500, -2e-3, 1e-4)
    assert butterworth_slope(up.to_numpy()) == pytest.approx(1e-3, rel=0.1)
    assert butterworth_slope(down.to_numpy()) == pytest.approx(-2e-3, rel=0.1)


def test_rolling_slope_equals_filtering_each_window_and_is_causal():
    close = _closes(400, 0.0, 2e-3, seed=3)
    window = 60
    fast = rolling_slope(close, window)
    b, a = butter(1, 0.05, btype="low")
    for t in (window - 1, 150, 399):
        y = filtfilt(b, a, np.log(close.to_numpy()[t - window + 1:t + 1]))
        assert fast.iloc[t] == pytest.approx(np.polyfit(np.arange(window), y, 1)[0], rel=1e-8, abs=1e-12)
    assert fast.iloc[:window - 1].isna().all()
    changed = close.copy()
    changed.iloc[300:] *= 1.5
    assert np.allclose(rolling_slope(changed, window).iloc[:300], fast.iloc[:300], equal_nan=True)


def test_rolling_volatility_matches_the_std_of_window_returns():
    close = _closes(200, 0.0, 3e-3, seed=1)
    vol = rolling_volatility(close, 50)
    returns = close.to_numpy()[101:151] / close.to_numpy()[100:150] - 1.0
    assert vol.iloc[150] == pytest.approx(np.std(returns, ddof=1))


def test_bins_use_training_quantiles_and_mark_tails():
    train = np.arange(100, dtype=float)
    bins = QuantileBins.fit(train, inner=(0.35, 0.65), tail=0.05)
    assert bins.label(np.array([-1e9, 34.0, 35.0, 64.0, 65.0, 1e9])).tolist() == [0, 0, 1, 1, 2, 2]
    assert bins.core(np.array([1.0, 50.0, 98.0])).tolist() == [False, True, False]
    assert QuantileBins.fit(train, inner=(0.5,)).labels == 2
    with pytest.raises(ConfigError, match="inner quantiles"):
        QuantileBins.fit(train, inner=(0.7, 0.3))


def test_chunks_are_labelled_by_train_bins_only():
    parts = [_closes(240, d, v, seed=i) for i, (d, v) in enumerate([(1e-3, 1e-3), (-1e-3, 1e-3), (0.0, 5e-3)] * 4)]
    close = pd.Series(np.concatenate([p.to_numpy() / p.iloc[0] for p in parts]),
                      index=pd.date_range("2024-01-01", periods=240 * 12, freq="min"))
    chunks = chunk_statistics(close, 240)
    assert len(chunks) == 12 and chunks["first"].tolist() == list(range(0, 2880, 240))
    train, test = chunks.iloc[:9], chunks.iloc[9:]
    conditions = MarketConditions.fit(train)
    labelled = conditions.label(train)
    assert labelled.loc[labelled["slope"] == labelled["slope"].max(), "trend"].item() == 2
    assert labelled.loc[labelled["slope"] == labelled["slope"].min(), "trend"].item() == 0
    assert labelled.loc[labelled["volatility"].idxmax(), "vol"] == 2
    shifted = test.assign(slope=test["slope"] + 1.0)
    assert (conditions.label(shifted)["trend"] == 2).all()
    assert MarketConditions.fit(train).trend == conditions.trend
