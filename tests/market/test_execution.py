"""The execution simulator against hand-computed fills, fees and timing."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from bars import random_bars

from harness.execution import ExecutionConfig, Simulator, simulate
from market.decision import Action, Decision


def actions(*codes: str) -> list[Decision]:
    return [Decision(action=Action(c)) for c in codes]


def bars_from(opens, closes) -> pd.DataFrame:
    index = pd.DatetimeIndex(pd.bdate_range("2024-01-01", periods=len(opens)), name="date")
    return pd.DataFrame({"open": opens, "high": [max(o, c) for o, c in zip(opens, closes)],
                         "low": [min(o, c) for o, c in zip(opens, closes)], "close": closes,
                         "volume": 1.0}, index=index)


def test_buy_fills_at_next_open_with_kappa_and_fee():
    bars = bars_from([10, 20, 30], [11, 21, 31])
    result = simulate(bars, actions("BUY", "HOLD", "HOLD"), ExecutionConfig(initial_cash=1000))
    shares = math.floor(0.9 * 1000 / 20)  # decided on day 0, filled at day 1's open
    cash = 1000 - shares * 20 * 1.001
    assert result.equity["position"].tolist() == [0, shares, shares]
    assert result.equity["equity"].tolist() == pytest.approx([1000, cash + shares * 21, cash + shares * 31])
    assert result.trades[["side", "shares", "price"]].values.tolist() == [["BUY", shares, 20.0]]
    assert result.trades["fee"].iloc[0] == pytest.approx(shares * 20 * 0.001)


def test_sell_closes_everything_and_last_decision_is_not_filled():
    bars = bars_from([10, 10, 12, 12], [10, 10, 12, 12])
    result = simulate(bars, actions("BUY", "SELL", "HOLD", "BUY"), ExecutionConfig(initial_cash=1000, fee_bps=0))
    assert result.equity["position"].tolist() == [0, 90, 0, 0]
    assert result.equity["cash"].iloc[-1] == pytest.approx(1000 - 900 + 90 * 12)
    assert len(result.trades) == 2  # the final BUY, decided on the last bar, is never filled


def test_next_close_fills_at_the_following_close_with_slippage():
    bars = bars_from([10, 20], [11, 25])
    config = ExecutionConfig(initial_cash=1000, fill="next_close", fee_bps=0, slippage_bps=100)
    result = simulate(bars, actions("BUY", "HOLD"), config)
    price = 25 * 1.01
    assert result.trades["price"].iloc[0] == pytest.approx(price)
    assert result.equity["position"].iloc[-1] == math.floor(900 / price)


def test_sell_without_position_and_repeated_buys_follow_paper_rules():
    bars = bars_from([10] * 5, [10] * 5)
    result = simulate(bars, actions("SELL", "BUY", "BUY", "HOLD", "HOLD"), ExecutionConfig(initial_cash=1000, fee_bps=0))
    assert result.equity["position"].tolist() == [0, 0, 90, 99, 99]  # 90 then floor(0.9*100/10)=9 more


def test_target_mode_goes_short_within_leverage_cap():
    bars = bars_from([10, 10, 10], [10, 10, 10])
    config = ExecutionConfig(initial_cash=1000, mode="target", allow_short=True, max_leverage=1.5, fee_bps=0)
    result = simulate(bars, [Decision(target=-3.0), Decision(target=0.5), Decision(target=0.0)], config)
    assert result.equity["position"].tolist() == [0, -150, 50]
    assert result.equity["equity"].tolist() == pytest.approx([1000, 1000, 1000])


def test_target_mode_sizes_at_the_slipped_price_with_the_fee():
    """A target of 1 sizes at the slipped price, floor(1000 / 10.1) = 99 shares, capped at what cash pays with
    the fee, floor(1000 / (10.1·1.001)) = 98: cash stays non-negative (sizing at the unslipped 10 bought 100
    and overdrew cash)."""
    bars = bars_from([10, 10], [10, 10])
    config = ExecutionConfig(initial_cash=1000, mode="target", fee_bps=10, slippage_bps=100)
    result = simulate(bars, [Decision(target=1.0), Decision(target=1.0)], config)
    assert result.equity["position"].tolist() == [0, 98]
    assert result.equity["cash"].iloc[-1] == pytest.approx(1000 - 98 * 10.1 * 1.001)
    assert result.equity["cash"].iloc[-1] >= 0


def test_target_mode_below_one_pays_the_fee_from_the_cash_left():
    """A target of 0.95 at a fill of 100 buys floor(0.95·10000/100) = 95 shares; the fee comes out of the 5 % left."""
    bars = bars_from([100, 100], [100, 100])
    result = simulate(bars, [Decision(target=0.95), Decision(target=0.95)],
                      ExecutionConfig(initial_cash=10_000, mode="target", fee_bps=10))
    assert result.equity["position"].tolist() == [0, 95]
    assert result.equity["cash"].iloc[-1] == pytest.approx(10_000 - 9_500 - 9.5)


def test_target_mode_without_shorts_floors_at_flat():
    bars = bars_from([10, 10], [10, 10])
    config = ExecutionConfig(initial_cash=1000, mode="target", fee_bps=0)
    result = simulate(bars, [Decision(target=-1.0), Decision(target=0.0)], config)
    assert result.equity["position"].tolist() == [0, 0]


def test_series_of_actions_defaults_missing_dates_to_hold():
    bars = random_bars(10)
    series = pd.Series({bars.index[0]: Action.BUY})
    result = simulate(bars, series)
    assert len(result.trades) == 1 and (result.equity["position"].iloc[1:] > 0).all()


def test_simulator_refuses_decisions_after_the_last_bar():
    simulator = Simulator(random_bars(2))
    simulator.submit(Decision(action=Action.HOLD))
    simulator.submit(Decision(action=Action.HOLD))
    with pytest.raises(RuntimeError, match="episode is over"):
        simulator.submit(Decision(action=Action.HOLD))
