"""The information content of a synthetic market is what its knobs say.

A rule reading a channel through its tool — BUY when the mean sentiment of the last day's
records is positive, SELL when negative, HOLD without records — is run through the execution
simulator (fill at the next open, 0.1 % fees) and compared with buy-and-hold (BUY every day)
by a one-sided paired t-test on the daily equity-return differences, averaged over tickers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from harness.execution import simulate
from market.decision import Action
from market.synthetic import generate_market
from market.view import MarketView
from tools.text_channels import get_news_data, get_reddit_data

MARKET = generate_market(tickers=["AAA", "BBB", "CCC", "DDD"], days=504, seed=0)


def sentiment_rule(tool, ticker: str) -> pd.Series:
    """The action of every day from the mean sentiment the tool shows for the last day."""
    actions = {}
    for day in MARKET.frame(ticker).index:
        sentiment = tool(MarketView(MARKET, day), ticker, lookback_days=1).summary.get("mean_sentiment", np.nan)
        actions[day] = Action.HOLD if np.isnan(sentiment) else Action.BUY if sentiment > 0 else Action.SELL
    return pd.Series(actions)


def excess_over_buy_and_hold(tool) -> pd.Series:
    """Daily return of the rule minus buy-and-hold, averaged over tickers."""
    differences = []
    for ticker in MARKET.tickers:
        bars = MARKET.frame(ticker)
        rule = simulate(bars, sentiment_rule(tool, ticker)).equity["equity"].pct_change()
        hold = simulate(bars, pd.Series(Action.BUY, index=bars.index)).equity["equity"].pct_change()
        differences.append((rule - hold).dropna())
    return pd.concat(differences, axis=1).mean(axis=1)


@pytest.fixture(scope="module")
def news_excess():
    return excess_over_buy_and_hold(get_news_data)


@pytest.mark.slow
def test_reading_the_informative_channel_beats_buy_and_hold(news_excess):
    test = stats.ttest_1samp(news_excess, 0.0, alternative="greater")
    assert test.pvalue < 0.001
    assert news_excess.mean() * 252 > 0.15  # > 15 % a year above buy-and-hold, after fees


@pytest.mark.slow
def test_reading_an_uninformative_channel_does_not(news_excess):
    social_excess = excess_over_buy_and_hold(get_reddit_data)
    assert stats.ttest_1samp(social_excess, 0.0, alternative="greater").pvalue > 0.1
    assert social_excess.mean() < news_excess.mean() / 3


def test_the_knob_moves_the_information():
    swapped = generate_market(tickers=["AAA"], days=504, seed=0,
                              channels={"news": {"snr": 0.0}, "social": {"snr": 1.0}})
    news, social = swapped.records["news"], swapped.records["social"]
    rank_ic = {}  # rank correlation of a day's mean sentiment with the next open-to-close return
    bars = swapped.frame("AAA")
    tomorrow = (bars["close"] / bars["open"] - 1).shift(-1)
    for name, frame in (("news", news), ("social", social)):
        same_day = frame.loc[frame["available_at"].dt.hour < 16]
        daily = same_day.groupby(same_day["available_at"].dt.normalize())["sentiment"].mean()
        rank_ic[name] = stats.spearmanr(daily, tomorrow.reindex(daily.index), nan_policy="omit").statistic
    assert rank_ic["social"] > 0.15 and abs(rank_ic["news"]) < 0.08, rank_ic
