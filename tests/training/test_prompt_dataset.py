"""The training prompts: one per labelled (ticker, day) of the window, days without a horizon left out."""

from __future__ import annotations

import pandas as pd
import pytest

from market.splits import Window
from single_agent.rewards import regime_label
from training.prompt_dataset import balanced_regimes, labelled_days, prompt_dataset


@pytest.mark.slow
def test_every_labelled_day_once_and_no_day_without_a_horizon(market, tickers, compact, compact_reward):
    window = Window(start="2018-03-01", end="2018-12-31")          # past the end of the 120-day market
    days = labelled_days(market, tickers, window, compact_reward)
    for ticker in tickers:
        close = market.frame(ticker)["close"]
        traded = close.loc[window.start:window.end].index
        mine = days[days["ticker"] == ticker]
        assert len(mine) == len(traded) - (compact_reward.horizon + 1)      # the last H + 1 bars have no label
        assert mine["date"].max() == traded[-(compact_reward.horizon + 2)]
        assert all(regime_label(close, d, compact_reward) == r for d, r in zip(mine["date"], mine["regime"]))
    rows = prompt_dataset(days.head(3), compact)
    assert rows.column_names == ["prompt", "ticker", "date", "regime"]
    first = rows[0]
    assert first["prompt"][-1]["role"] == "user" and first["ticker"] in first["prompt"][-1]["content"]
    assert first["date"] == f"{pd.Timestamp(days.iloc[0]['date']):%Y-%m-%d}" and first["date"] in first["prompt"][-1]["content"]


def test_balanced_regimes_keep_the_rarest_count_of_each_in_order(market, tickers, compact_reward):
    days = labelled_days(market, tickers, Window(start="2018-01-15", end="2018-05-31"), compact_reward)
    balanced = balanced_regimes(days, seed=0)
    counts = balanced["regime"].value_counts()
    assert set(counts) == {days["regime"].value_counts().min()} and set(counts.index) == set(days["regime"])
    assert balanced.merge(days, how="left", indicator=True)["_merge"].eq("both").all()
    assert list(balanced.index) == sorted(balanced.index)
    positions = [days.index[(days["ticker"] == t) & (days["date"] == d)][0] for t, d in zip(balanced["ticker"], balanced["date"])]
    assert positions == sorted(positions)
    assert balanced.equals(balanced_regimes(days, seed=0)) and not balanced.equals(balanced_regimes(days, seed=1))
