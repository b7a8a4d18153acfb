"""Embedded macro records: honest release times for daily closes and monthly CPI."""

from __future__ import annotations

import pandas as pd
import pytest

from market.sources.embedded_macro import embedded_macro


@pytest.fixture(scope="module")
def macro():
    return embedded_macro()


def test_series_and_schema(macro):
    assert set(macro["series"]) == {"sp500", "nasdaq", "vix", "wti", "core_cpi", "aaa_yield", "baa_yield"}
    assert set(macro["ticker"]) == {""}
    assert macro["available_at"].is_monotonic_increasing


def test_daily_closes_are_public_at_the_close(macro):
    daily = macro.loc[macro["series"].isin(["sp500", "vix"])]
    assert (daily["available_at"] - daily["period"] == pd.Timedelta(hours=16)).all()
    sp = macro.loc[macro["series"] == "sp500"].set_index("period")["value"]
    assert sp.loc["2018-12-31"] == pytest.approx(2506.85, abs=0.01)


def test_monthly_cpi_is_released_weeks_after_its_month(macro):
    cpi = macro.loc[macro["series"] == "core_cpi"]
    assert (cpi["period"].dt.day == 1).all()
    month_end = cpi["period"] + pd.offsets.MonthEnd(0)
    lag = cpi["available_at"] - month_end
    assert lag.min() >= pd.Timedelta(days=19) and lag.max() <= pd.Timedelta(days=21)
    november = cpi.loc[cpi["period"] == "2018-11-01"].iloc[0]
    assert november["available_at"] == pd.Timestamp("2018-12-20 08:30")
