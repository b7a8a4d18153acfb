"""MarketView is point-in-time: nothing after `asof` can be read, or influence what is read."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bars import random_bars
from hypothesis import given, settings
from hypothesis import strategies as st

from market.data import MarketData
from market.view import MarketView

BARS = random_bars(60)
DATES = BARS.index


def market(bars: pd.DataFrame, news: pd.DataFrame) -> MarketData:
    return MarketData(bars={"AAA": bars}, records={"news": news})


def news_frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    stamps = DATES[rng.integers(0, len(DATES), n)] + pd.to_timedelta(rng.integers(0, 24 * 60, n), unit="min")
    return pd.DataFrame({"ticker": "AAA", "available_at": stamps, "headline": [f"h{i}" for i in range(n)]})


def read_everything(view: MarketView) -> tuple:
    return (view.bars("AAA"), view.bars("AAA", lookback=5), view.last_close("AAA"), view.records("news", "AAA"))


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(asof_i=st.integers(0, len(DATES) - 1), seed=st.integers(0, 10_000), delete=st.booleans())
def test_data_after_asof_changes_nothing_read_through_the_view(asof_i, seed, delete):
    asof = DATES[asof_i]
    news = news_frame()
    before = read_everything(MarketView(market(BARS, news), asof))

    rng = np.random.default_rng(seed)
    future_bar = BARS.index > asof
    future_news = news["available_at"] > asof + pd.Timedelta(hours=16)
    if delete:
        bars2, news2 = BARS.loc[~future_bar], news.loc[~future_news]
    else:
        bars2 = BARS.copy()
        bars2.loc[future_bar, ["open", "high", "low", "close"]] *= rng.uniform(0.5, 2.0, (future_bar.sum(), 1))
        news2 = news.copy()
        news2.loc[future_news, "headline"] = "perturbed"
    after = read_everything(MarketView(market(bars2, news2), asof))

    pd.testing.assert_frame_equal(before[0], after[0])
    pd.testing.assert_frame_equal(before[1], after[1])
    assert before[2] == after[2]
    pd.testing.assert_frame_equal(before[3].reset_index(drop=True), after[3].reset_index(drop=True))


def test_view_returns_only_past_bars_and_records_before_the_close():
    asof = DATES[10]
    news = pd.DataFrame({"ticker": ["AAA", "AAA", "AAA", "AAA"],
                         "available_at": [asof + pd.Timedelta(hours=9), asof + pd.Timedelta(hours=17),
                                          pd.NaT, asof - pd.Timedelta(days=3)],
                         "headline": ["morning", "after close", "undated", "old"]})
    view = MarketView(market(BARS, news), asof)
    assert view.bars("AAA").index.max() == asof
    assert sorted(view.records("news", "AAA")["headline"]) == ["morning", "old"]
    assert view.records("social").empty


def test_view_hands_out_copies():
    view = MarketView(market(BARS, news_frame()), DATES[20])
    bars = view.bars("AAA")
    bars["close"] *= 0
    assert view.last_close("AAA") == BARS["close"].iloc[20]


MINUTES = pd.DatetimeIndex(pd.Timestamp("2024-03-01 23:00") + pd.Timedelta(minutes=1) * pd.RangeIndex(1, 181), name="date")
"""Three hours of 24/7 minute bars stamped at their close, across midnight."""


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(asof_i=st.integers(0, len(MINUTES) - 1), seed=st.integers(0, 10_000), delete=st.booleans())
def test_on_intraday_bars_data_after_the_stamp_changes_nothing_read_through_the_view(asof_i, seed, delete):
    """The same property on minute bars: the cutoff is the bar's stamp, so news one minute later is future data."""
    from market.calendar import Calendar

    rng = np.random.default_rng(seed)
    bars = random_bars(len(MINUTES)).set_axis(MINUTES)
    stamps = MINUTES[rng.integers(0, len(MINUTES), 60)] + pd.to_timedelta(rng.integers(-59, 60, 60), unit="s")
    stamps = stamps.append(pd.DatetimeIndex([MINUTES[0] - pd.Timedelta(hours=1)]))  # one record always visible
    news = pd.DataFrame({"ticker": "AAA", "available_at": stamps, "headline": [f"h{i}" for i in range(61)]})
    calendar = Calendar(pd.Timedelta(minutes=1), "24/7")
    asof = MINUTES[asof_i]
    before = read_everything(MarketView(MarketData(bars={"AAA": bars}, records={"news": news}, calendar=calendar), asof))
    future_bar, future_news = bars.index > asof, news["available_at"] > asof
    if delete:
        bars2, news2 = bars.loc[~future_bar], news.loc[~future_news]
    else:
        bars2, news2 = bars.copy(), news.copy()
        bars2.loc[future_bar, ["open", "high", "low", "close"]] *= 1.7
        news2.loc[future_news, "headline"] = "perturbed"
    after = read_everything(MarketView(MarketData(bars={"AAA": bars2}, records={"news": news2}, calendar=calendar), asof))
    for first, second in zip(before, after):
        if isinstance(first, pd.DataFrame):
            pd.testing.assert_frame_equal(first.reset_index(drop=True), second.reset_index(drop=True))
        else:
            assert first == second
    assert (before[3]["available_at"] <= asof).all()
