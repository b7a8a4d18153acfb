"""Indicators from stockstats agree with their textbook formulas and respect warm-up."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from market.synthetic import generate_market
from tools.indicators import INDICATOR_NAMES, INDICATORS, chaikin_money_flow, indicator_table


@pytest.fixture(scope="module")
def bars():
    return generate_market(tickers=["AAA"], days=120, seed=2).frame("AAA")


def test_table_columns_and_warm_up(bars):
    table = indicator_table(bars, list(INDICATOR_NAMES))
    expected = [column for name in INDICATOR_NAMES for column in INDICATORS[name][0]]
    assert list(table.columns) == expected
    for name in INDICATOR_NAMES:
        columns, warmup = INDICATORS[name]
        for column in columns:
            assert table[column].iloc[: warmup - 1].isna().all(), column
            assert table[column].iloc[warmup - 1:].notna().all(), column


def test_moving_averages_and_bands_match_pandas(bars):
    table = indicator_table(bars, ["sma20", "ema10", "vwma20", "bbands"])
    close = bars["close"]
    np.testing.assert_allclose(table["sma20"].iloc[19:], close.rolling(20).mean().iloc[19:])
    np.testing.assert_allclose(table["ema10"].iloc[-1], close.ewm(span=10, adjust=False).mean().iloc[-1], rtol=1e-3)
    typical = (bars["high"] + bars["low"] + close) / 3
    vwma = (typical * bars["volume"]).rolling(20).sum() / bars["volume"].rolling(20).sum()
    np.testing.assert_allclose(table["vwma20"].iloc[19:], vwma.iloc[19:])
    std = close.rolling(20).std()
    np.testing.assert_allclose(table["bb_upper"].iloc[19:], (close.rolling(20).mean() + 2 * std).iloc[19:])


def test_oscillators_stay_in_range(bars):
    table = indicator_table(bars, ["rsi14", "stoch", "cmf"]).dropna()
    assert table["rsi14"].between(0, 100).all()
    assert table[["stoch_k", "stoch_d"]].stack().between(0, 100).all()
    assert table["cmf20"].between(-1, 1).all()


def test_stochastic_is_smoothed_raw_k(bars):
    table = indicator_table(bars, ["stoch"])
    raw = 100 * (bars["close"] - bars["low"].rolling(14).min()) / (
        bars["high"].rolling(14).max() - bars["low"].rolling(14).min())
    k = raw.rolling(3).mean()
    np.testing.assert_allclose(table["stoch_k"].iloc[20:], k.iloc[20:])
    np.testing.assert_allclose(table["stoch_d"].iloc[20:], k.rolling(3).mean().iloc[20:])


def test_chaikin_money_flow_by_hand():
    bars = pd.DataFrame({"high": [10.0, 12.0, 11.0], "low": [8.0, 10.0, 11.0], "close": [10.0, 11.5, 11.0],
                         "volume": [100.0, 200.0, 50.0]})
    # MFV: 100·((10 − 8) − (10 − 10))/2 = 100; 200·((11.5 − 10) − (12 − 11.5))/2 = 100; high == low → 0
    assert chaikin_money_flow(bars, window=2).iloc[1] == pytest.approx(200 / 300)
    assert chaikin_money_flow(bars, window=3).iloc[2] == pytest.approx(200 / 350)
    assert np.isnan(chaikin_money_flow(bars, window=3).iloc[1])
