"""The portfolio task: its accounting against hand computations, the pool, bad weights, resume."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from bars import random_bars

from core.errors import ConfigError
from frameworks.base import TradingFramework
from frameworks.baselines.portfolio_rules import (
    BuyAndHoldEqual,
    EqualWeight,
    InverseVolatility,
    MomentumTopK,
)
from harness.decision_checks import CASH
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from harness.tasks.portfolio import PortfolioConfig, PortfolioSimulator, PortfolioTask
from market.data import MarketData
from market.decision import Action, Decision, DecisionContext
from market.view import MarketView


def flat_bars(opens, closes) -> pd.DataFrame:
    index = pd.DatetimeIndex(pd.bdate_range("2024-01-01", periods=len(opens)), name="date")
    return pd.DataFrame({"open": opens, "high": np.maximum(opens, closes), "low": np.minimum(opens, closes),
                         "close": closes, "volume": 1.0}, index=index)


def two_assets(fee_bps=10.0, slippage_bps=0.0, **config) -> PortfolioSimulator:
    bars = {"A": flat_bars([10.0, 10.0, 12.0], [10.0, 11.0, 12.0]),
            "B": flat_bars([20.0, 20.0, 18.0], [20.0, 19.0, 18.0])}
    return PortfolioSimulator(bars, bars["A"].index, PortfolioConfig(initial_cash=1000.0, fee_bps=fee_bps,
                                                                     slippage_bps=slippage_bps, **config))


def test_a_rebalance_from_cash_pays_the_fee_out_of_the_invested_equity():
    """From cash only, w = (1/2, 1/2), fee f, no slippage: E' = E/(1+f) and each holds E'/2 at the open."""
    simulator = two_assets(fee_bps=10.0)
    simulator.submit(Decision(weights={"A": 0.5, "B": 0.5, CASH: 0.0}))
    after = 1000.0 / 1.001
    state = simulator.portfolio
    assert state.positions["A"] == pytest.approx(after / 2 / 10.0)
    assert state.positions["B"] == pytest.approx(after / 2 / 20.0)
    assert state.cash == pytest.approx(0.0, abs=1e-9)
    fees = simulator.result().trades["fee"].sum()
    assert fees == pytest.approx(1000.0 - after)


def test_a_two_asset_rebalance_with_fees_and_slippage_matches_the_hand_computation():
    """Second rebalance, A sold down to 1/4 and B bought up to 3/4 at opens (12, 18):
    E' = (E − κ_sell·h_A + κ_buy·h_B) / (1 − κ_sell/4 + 3κ_buy/4), κ_buy = s + f(1+s), κ_sell = s + f(1−s)."""
    f, s = 10 / 1e4, 50 / 1e4
    simulator = two_assets(fee_bps=10.0, slippage_bps=50.0)
    simulator.submit(Decision(weights={"A": 0.5, "B": 0.5, CASH: 0.0}))
    before = simulator.portfolio
    simulator.submit(Decision(weights={"A": 0.25, "B": 0.75, CASH: 0.0}))
    h_a, h_b = before.positions["A"] * 12.0, before.positions["B"] * 18.0
    equity = before.cash + h_a + h_b
    k_buy, k_sell = s + f * (1 + s), s + f * (1 - s)
    after = (equity - k_sell * h_a + k_buy * h_b) / (1 - k_sell / 4 + 3 * k_buy / 4)
    assert 0.25 * after < h_a and 0.75 * after > h_b  # the sides assumed by the formula
    state = simulator.portfolio
    assert state.positions["A"] == pytest.approx(0.25 * after / 12.0)
    assert state.positions["B"] == pytest.approx(0.75 * after / 18.0)
    assert state.cash == pytest.approx(0.0, abs=1e-9)
    trades = simulator.result().trades
    last = trades[trades["date"] == trades["date"].max()].set_index("instrument")
    assert last.loc["A", "side"] == "SELL" and last.loc["A", "price"] == pytest.approx(12.0 * (1 - s))
    assert last.loc["B", "side"] == "BUY" and last.loc["B", "price"] == pytest.approx(18.0 * (1 + s))
    equity_table = simulator.result().equity
    assert equity_table["turnover"].iloc[-1] == pytest.approx((abs(0.25 * after - h_a) + abs(0.75 * after - h_b)) / equity)


def test_hold_keeps_the_holdings_and_cash_weight_stays_in_cash():
    simulator = two_assets(fee_bps=0.0)
    simulator.submit(Decision(weights={"A": 0.3, CASH: 0.7}))
    simulator.submit(Decision(action=Action.HOLD))
    result = simulator.result()
    assert result.equity["cash"].tolist() == pytest.approx([1000.0, 700.0, 700.0])
    assert result.positions.query("instrument == 'A'")["quantity"].tolist() == pytest.approx([0.0, 30.0, 30.0])
    assert result.equity["hhi"].iloc[1:].tolist() == [1.0, 1.0]  # one instrument held
    assert math.isnan(result.equity["hhi"].iloc[0])  # nothing held yet


def test_hhi_is_the_concentration_of_the_holdings_at_the_close():
    """Equal weights at the opens (10, 20): 50 A and 25 B; at the closes (11, 19) worth 550 and 475."""
    simulator = two_assets(fee_bps=0.0)
    simulator.submit(Decision(weights={"A": 0.5, "B": 0.5}))
    assert simulator.result().equity["hhi"].iloc[1] == pytest.approx((550**2 + 475**2) / 1025**2)


UNIVERSE = ["AAA", "BBB", "CCC"]
MARKET = MarketData(bars={t: random_bars(80, seed=i) for i, t in enumerate(UNIVERSE)})
START, END = MARKET.bars["AAA"].index[60], MARKET.bars["AAA"].index[79]


def run(frameworks: dict[str, TradingFramework], path, batch_size: int = 256, **config):
    task = PortfolioTask(PortfolioConfig(**config))
    spec = RunSpec(tickers=UNIVERSE, seeds=[0], start=START, end=END, batch_size=batch_size, task=task)
    warnings: list[str] = []
    with Journal(path, warn=warnings.append) as journal:
        runner = EpisodeRunner(MARKET, spec, journal, progress=False, warn=warnings.append)
        result = runner.run([FrameworkEntry(name, f, config_hash=name) for name, f in frameworks.items()])
    return result, warnings


class Answers(TradingFramework):
    """Returns the weights it is given on every bar."""

    tasks = ("portfolio",)

    def __init__(self, weights):
        self.weights = weights

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        return [Decision(weights=self.weights) for _ in batch]


@pytest.mark.slow
@pytest.mark.parametrize(("weights", "says"), [
    ({"AAA": 0.5, "BBB": 0.2}, "weights sum to 0.7"),
    ({"AAA": float("nan"), CASH: 1.0}, "not a finite number"),
    ({"ZZZ": 1.0}, "'ZZZ', which is not in the universe"),
    ({"AAA": -0.5, CASH: 1.5}, "allow_short is false"),
])
def test_bad_weights_are_a_recorded_failure_and_the_fallback_holds(tmp_path, weights, says):
    result, _ = run({"bad": Answers(weights)}, tmp_path / "journal.sqlite")
    assert result.failed == len(result.decisions) > 0
    failure = result.decisions[0].failure
    assert failure.kind.value == "invalid" and says in failure.message and "bad UNIVERSE" in failure.message
    assert all(e.decision.action is Action.HOLD and e.decision.trace.fallback for e in result.decisions)
    equity = next(iter(result.episodes.values())).equity
    assert (equity["equity"] == 100_000.0).all()  # nothing was ever bought


@pytest.mark.slow
def test_a_gross_weight_beyond_the_cap_is_refused(tmp_path):
    result, _ = run({"levered": Answers({"AAA": 1.5, "BBB": 0.5, CASH: -1.0})}, tmp_path / "journal.sqlite",
                    max_gross=1.5)
    assert result.failed > 0 and "gross weight 2 exceeds task.max_gross 1.5" in result.decisions[0].failure.message


@pytest.mark.slow
def test_a_masked_pool_refuses_weights_outside_it_until_the_instrument_joins(tmp_path):
    """Pool {START: [AAA], day 10: [AAA, BBB]}: equal weights on AAA and BBB fail (fallback HOLD) before day 10, then fill."""
    days = MARKET.trading_days("AAA", START, END)
    pool = {str(START.date()): ["AAA"], str(days[10].date()): ["AAA", "BBB"]}
    result, _ = run({"both": Answers({"AAA": 0.5, "BBB": 0.5, CASH: 0.0})}, tmp_path / "journal.sqlite", pool=pool,
                    fee_bps=0.0)
    failed = [e.date for e in result.decisions if e.failure is not None]
    assert failed == list(days[:10])
    assert "outside the pool" in result.decisions[0].failure.message
    positions = next(iter(result.episodes.values())).positions
    held = positions[positions["quantity"] != 0]
    assert held["date"].min() == days[11]  # the decision of day 10 fills at day 11's open
    # hand computation of the first fill: E = 100000 at day 11's opens, no fee: q = E/2 / open
    opens = {t: MARKET.bars[t].loc[days[11], "open"] for t in ("AAA", "BBB")}
    first = held[held["date"] == days[11]].set_index("instrument")["quantity"]
    assert first.to_dict() == pytest.approx({t: 50_000.0 / opens[t] for t in opens})


def test_a_pool_naming_an_unknown_instrument_is_one_config_line():
    task = PortfolioTask(PortfolioConfig(pool={"2021-01-04": ["AAA", "QQQ"]}))
    with pytest.raises(ConfigError, match=r"^task.pool.2021-01-04: unknown instrument 'QQQ'; the universe holds AAA, BBB, CCC$"):
        task.episodes(MARKET, UNIVERSE, START, END)


def test_the_weight_rules_decide_the_same_in_one_batch_as_one_bar_at_a_time():
    days = MARKET.trading_days("AAA", START, END)
    contexts = [DecisionContext(ticker="U", date=d, view=MarketView(MARKET, d), seed=0, universe=tuple(UNIVERSE))
                for d in days]
    for rule in (EqualWeight(), InverseVolatility(lookback=20), MomentumTopK(lookback=20, k=2)):
        together = rule.decide(contexts)
        alone = [rule.decide([c])[0] for c in contexts]
        assert [d.weights for d in together] == [d.weights for d in alone]
        assert all(abs(sum(d.weights.values()) - 1) < 1e-9 for d in together)


def test_momentum_holds_the_top_k_by_trailing_return():
    day = END
    close = pd.DataFrame({t: MARKET.bars[t]["close"].loc[:day] for t in UNIVERSE})
    trailing = (close.iloc[-1] / close.iloc[-21] - 1).sort_values(ascending=False)
    context = DecisionContext(ticker="U", date=day, view=MarketView(MARKET, day), seed=0, universe=tuple(UNIVERSE))
    weights = MomentumTopK(lookback=20, k=2).decide([context])[0].weights
    assert {n for n, w in weights.items() if n != CASH and w > 0} == set(trailing.index[:2])


class Killed(Exception):
    """Stands in for the process being killed: nothing after it is journaled."""


class DiesAfter(TradingFramework):
    """Wraps a framework; raises a BaseException (not a recorded failure) once `calls` batches are decided."""

    def __init__(self, inner: TradingFramework, calls: int):
        self.inner, self.calls = inner, calls
        self.stateful, self.needs_portfolio, self.tasks = inner.stateful, inner.needs_portfolio, inner.tasks

    def decide(self, batch):
        if self.calls == 0:
            raise KeyboardInterrupt
        self.calls -= 1
        return self.inner.decide(batch)


@pytest.mark.slow
@pytest.mark.parametrize("make", [EqualWeight, BuyAndHoldEqual, lambda: MomentumTopK(lookback=10, k=2)])
def test_a_killed_portfolio_run_resumes_to_identical_results(tmp_path, make):
    whole, _ = run({"rule": make()}, tmp_path / "whole.sqlite", batch_size=4)
    with pytest.raises(KeyboardInterrupt):
        run({"rule": DiesAfter(make(), calls=3)}, tmp_path / "killed.sqlite", batch_size=4)
    resumed, _ = run({"rule": make()}, tmp_path / "killed.sqlite", batch_size=4)
    assert resumed.reused > 0 and resumed.made > 0
    key = next(iter(whole.episodes))
    pd.testing.assert_frame_equal(resumed.episodes[key].equity, whole.episodes[key].equity)
    pd.testing.assert_frame_equal(resumed.episodes[key].positions, whole.episodes[key].positions)
    pd.testing.assert_frame_equal(resumed.episodes[key].trades, whole.episodes[key].trades)


def test_the_episode_is_the_universe_over_its_common_bars():
    (episode,) = PortfolioTask().episodes(MARKET, UNIVERSE, START, END)
    assert (episode.name, episode.instruments) == ("UNIVERSE", tuple(UNIVERSE))
    assert episode.times.equals(MARKET.trading_days("AAA", START, END))
