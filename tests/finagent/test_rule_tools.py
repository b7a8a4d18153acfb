"""The rule tools' track records: long-only positions from signals, and their return, Sharpe and drawdown."""

from __future__ import annotations

import math

import numpy as np
import pytest

from finagent.rule_tools import long_only_positions, record, rule_signals
from market.decision import Action
from market.view import MarketView


def test_a_position_is_held_from_a_buy_until_the_next_sell():
    signals = [Action.HOLD, Action.BUY, Action.HOLD, Action.SELL, Action.HOLD, Action.BUY]
    assert long_only_positions(signals).tolist() == [0, 1, 1, 0, 0, 1]


def test_the_record_of_daily_returns():
    values = record(np.array([0.1, -0.1, 0.05]))
    assert values["return"] == pytest.approx(1.1 * 0.9 * 1.05 - 1)
    assert values["max_drawdown"] == pytest.approx(0.1)
    daily = np.array([0.1, -0.1, 0.05])
    assert values["sharpe"] == pytest.approx(daily.mean() / daily.std(ddof=1) * math.sqrt(252))


def test_the_signals_text_names_every_rule_and_reads_no_later_bar(market):
    day = market.trading_days("ALFA", "2020-06-01", "2020-06-05")[2]
    text = rule_signals(MarketView(market, day), "ALFA", 60)
    assert len(text.splitlines()) == 5 and "Stochastic oscillator + Bollinger bands: today " in text
    market.bars["ALFA"].loc[market.bars["ALFA"].index > day, ["open", "high", "low", "close"]] *= 2
    assert rule_signals(MarketView(market, day), "ALFA", 60) == text
