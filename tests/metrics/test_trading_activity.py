"""Trade counts, win rates, turnover and exposure of metrics/trading.py on hand-worked episodes."""

import math

import numpy as np
import pandas as pd
import pytest

from metrics import trading


def _trades(rows):
    frame = pd.DataFrame(rows, columns=["side", "shares", "price", "fee"])
    frame["notional"] = frame["shares"] * frame["price"]
    return frame


def test_closed_trade_pnl_uses_average_cost_with_fees():
    trades = _trades([("BUY", 10, 100.0, 1.0), ("BUY", 10, 110.0, 1.0), ("SELL", 20, 120.0, 2.0),
                      ("BUY", 5, 100.0, 0.0), ("SELL", 5, 90.0, 0.0)])
    # average cost (1000 + 1 + 1100 + 1) / 20 = 105.1; 20 * (120 - 105.1) - 2 = 296
    assert trading.closed_trade_pnl(trades) == pytest.approx([296.0, -50.0])
    assert trading.win_rate_trades(trades) == 0.5
    assert trading.trade_count(trades) == 5


def test_fees_can_turn_a_price_gain_into_a_loss():
    trades = _trades([("BUY", 1, 100.0, 0.5), ("SELL", 1, 100.8, 0.5)])
    assert trading.closed_trade_pnl(trades) == pytest.approx([-0.2])
    assert trading.win_rate_trades(trades) == 0.0


def test_win_rate_trades_is_nan_without_a_closed_trade():
    assert math.isnan(trading.win_rate_trades(_trades([("BUY", 1, 100.0, 0.1)])))


def test_bad_side_names_the_value():
    with pytest.raises(ValueError, match="'HOLD'"):
        trading.closed_trade_pnl(_trades([("HOLD", 1, 100.0, 0.0)]))


def test_win_rate_days_counts_only_days_equity_moved():
    assert trading.win_rate_days(np.array([0.0, 0.01, -0.01, 0.02, np.nan])) == pytest.approx(2 / 3)
    assert math.isnan(trading.win_rate_days(np.zeros(5)))


def test_turnover_is_half_the_traded_notional_over_mean_equity_per_year():
    equity = pd.Series(np.full(253, 100.0))
    trades = _trades([("BUY", 0.9, 100.0, 0.0), ("SELL", 0.9, 100.0, 0.0)])
    assert trading.turnover(trades, equity, 252.0) == pytest.approx(0.9)
    assert trading.turnover(trades, equity.iloc[:127], 252.0) == pytest.approx(1.8)
    assert trading.turnover(_trades([]), equity) == 0.0


def test_exposure_counts_periods_started_with_a_position():
    assert trading.exposure(pd.Series([0, 10, 10, 0, 0])) == 0.5
    assert trading.exposure(pd.Series([0.0, 0.0])) == 0.0
    assert math.isnan(trading.exposure(pd.Series([0.0])))
