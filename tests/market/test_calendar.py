"""The calendar: periods per year, bar closes (visibility cutoffs) and expected bars per session."""

from __future__ import annotations

import pandas as pd
import pytest

from market.calendar import Calendar
from market.data import MarketData
from market.sources.embedded import load_embedded
from market.view import MarketView

MINUTE = pd.Timedelta(minutes=1)


@pytest.mark.parametrize(("calendar", "periods"), [
    (Calendar(), 252.0),
    (Calendar(session="24/7"), 365.0),
    (Calendar(MINUTE, "24/7"), 365 * 24 * 60),
    (Calendar(pd.Timedelta(minutes=15), "24/7"), 365 * 24 * 4),
    (Calendar(MINUTE, "exchange"), 252 * 6.5 * 60),
    (Calendar(pd.Timedelta(days=7)), 36.0),
])
def test_periods_per_year_follow_the_session_and_the_bar_length(calendar, periods):
    assert calendar.periods_per_year == pytest.approx(periods)


def test_a_daily_bar_closes_at_the_decision_time_and_an_intraday_bar_at_its_stamp():
    day = pd.Timestamp("2024-03-01")
    assert Calendar().bar_close(day) == day + pd.Timedelta(hours=16)
    assert Calendar(MINUTE, "24/7").bar_close(day) == day  # a minute bar stamped 00:00 closes at 00:00
    assert Calendar(MINUTE, "24/7").bar_close(day + pd.Timedelta(hours=9, minutes=31)) == day + pd.Timedelta(hours=9, minutes=31)


def test_a_midnight_minute_bar_does_not_see_that_days_later_news():
    """The leak fixed: a cutoff of date + 16:00 on a bar stamped 00:00 would show 09:00 news at midnight."""
    stamps = pd.DatetimeIndex(pd.Timestamp("2024-03-01") + MINUTE * pd.RangeIndex(-5, 5), name="date")
    bars = pd.DataFrame({"open": 1.0, "high": 1.0, "low": 1.0, "close": 1.0, "volume": 1.0}, index=stamps)
    news = pd.DataFrame({"ticker": "X", "available_at": [pd.Timestamp("2024-02-29 23:58"), pd.Timestamp("2024-03-01 09:00")],
                         "headline": ["before", "later that day"]})
    data = MarketData(bars={"X": bars}, records={"news": news}, calendar=Calendar(MINUTE, "24/7"))
    view = MarketView(data, pd.Timestamp("2024-03-01 00:00"))
    assert view.cutoff == pd.Timestamp("2024-03-01 00:00")
    assert view.records("news", "X")["headline"].tolist() == ["before"]


def test_expected_bars_count_business_days_or_bars_of_the_session():
    start, end = pd.Timestamp("2024-03-01"), pd.Timestamp("2024-03-08")
    assert Calendar().expected_bars(start, end) == 6
    assert Calendar(session="24/7").expected_bars(start, end) == 8
    assert Calendar(pd.Timedelta(hours=1), "24/7").expected_bars(start, start + pd.Timedelta(hours=5)) == 6
    assert Calendar().expected_bars(end, start) == 0


def test_infer_reads_the_bar_length():
    minutes = pd.date_range("2024-01-01", periods=50, freq="min")
    assert Calendar.infer(minutes, "24/7") == Calendar(MINUTE, "24/7")
    assert Calendar.infer(pd.bdate_range("2024-01-01", periods=20)).daily


def test_the_embedded_bitcoin_has_15_minute_bars_stamped_at_their_close_on_a_24_7_calendar():
    data = load_embedded(["BTC_15M"])
    index = data.frame("BTC_15M").index
    assert data.calendar == Calendar(pd.Timedelta(minutes=15), "24/7") and data.periods_per_year == 35_040
    assert index.is_monotonic_increasing and index.is_unique
    assert (index.as_unit("ns").asi8 % pd.Timedelta(minutes=15).value == 0).all()
    assert index[0] == pd.Timestamp("2021-09-27 14:00")  # the file's first bar opens 13:45 UTC (14:45+01:00)
