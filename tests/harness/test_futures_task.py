"""The futures task: funding, margin call and liquidation against hand computations, sizing,
bad targets and bad funding data, resume, and the futures rules."""

from __future__ import annotations

import pandas as pd
import pytest
from test_portfolio_task import DiesAfter

from core.errors import DataError
from frameworks.base import TradingFramework
from frameworks.baselines.futures_rules import ConstantLeverage, TrendFollowing
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from harness.tasks.futures import (
    FuturesConfig,
    FuturesSimulator,
    FuturesTask,
    funding_rates,
)
from market.calendar import Calendar
from market.data import MarketData
from market.decision import Action, Decision, DecisionContext
from market.sources.records import load_records
from market.synthetic.intraday import generate_intraday
from market.view import MarketView

HOUR = pd.Timedelta(hours=1)


def hourly(rows, start="2024-01-01 07:00") -> pd.DataFrame:
    """Bars (open, high, low, close) stamped hourly at their close."""
    index = pd.DatetimeIndex(pd.Timestamp(start) + HOUR * pd.RangeIndex(len(rows)), name="date")
    frame = pd.DataFrame(rows, columns=["open", "high", "low", "close"], index=index, dtype=float)
    return frame.assign(volume=1.0)


def rates(pairs) -> pd.Series:
    return pd.Series([r for _, r in pairs], index=pd.DatetimeIndex([pd.Timestamp(t) for t, _ in pairs]))


def simulate(bars, decisions, funding=(("2024-01-01", 0.0),), **config) -> FuturesSimulator:
    simulator = FuturesSimulator(bars, rates(funding), FuturesConfig(**{"taker_bps": 0.0, **config}), "PERP")
    for decision in decisions:
        simulator.submit(decision)
    return simulator


def test_a_funding_payment_is_position_times_mark_times_rate_at_the_funding_time():
    """Long 1x of 100,000 at 100 = 1,000 contracts; the 08:00 funding at 10 bp: 1000·100·0.001 = 100 paid."""
    bars = hourly([(100, 100, 100, 100)] * 4)  # stamps 07:00 .. 10:00
    long = simulate(bars, [Decision(target=1.0)] + [Decision(action=Action.HOLD)] * 3,
                    funding=[("2024-01-01 00:00", 0.0), ("2024-01-01 08:00", 0.001)])
    equity = long.result().equity
    assert equity["position"].tolist() == [0.0, 1000.0, 1000.0, 1000.0]
    assert equity["funding"].tolist() == [0.0, 100.0, 0.0, 0.0]  # 08:00 is in (07:00, 08:00]; 16:00 not reached
    assert equity["equity"].tolist() == [100_000.0, 99_900.0, 99_900.0, 99_900.0]
    short = simulate(bars, [Decision(target=-1.0)] + [Decision(action=Action.HOLD)] * 3,
                     funding=[("2024-01-01 00:00", 0.0), ("2024-01-01 08:00", 0.001)])
    assert short.result().equity["equity"].iloc[-1] == 100_100.0  # shorts receive a positive rate
    flows = long.result().flows
    assert flows.query("kind == 'funding'")[["date", "amount"]].values.tolist() == [[pd.Timestamp("2024-01-01 08:00"), -100.0]]


def test_a_margin_call_then_a_liquidation_at_the_bars_worst_price():
    """5x long from 100,000 at 100: 5,000 contracts. Bar 1 closes at 95: equity 75,000 < initial margin
    5000·95/5 = 95,000, a margin call. Bar 2's low 81.5: equity there 100,000 − 5000·18.5 = 7,500 < maintenance
    0.02·5000·81.5 = 8,150: liquidated at 81.5, fee 0.5 % of 407,500 = 2,037.5, equity 5,462.5."""
    bars = hourly([(100, 100, 100, 100), (100, 100, 94, 95), (95, 96, 81.5, 83), (83, 84, 82, 84)])
    simulator = simulate(bars, [Decision(target=5.0)] + [Decision(action=Action.HOLD)] * 3,
                         maintenance_margin=0.02, liquidation_bps=50.0)
    result = simulator.result()
    assert result.equity["equity"].tolist() == pytest.approx([100_000.0, 75_000.0, 5_462.5, 5_462.5])
    assert result.equity["position"].tolist() == [0.0, 5000.0, 0.0, 0.0]
    assert result.trades[["side", "shares", "price", "fee"]].values.tolist() == [
        ["BUY", 5000.0, 100.0, 0.0], ["LIQUIDATION", 5000.0, 81.5, 2037.5]]
    assert result.events[["date", "kind"]].values.tolist() == [
        [bars.index[1], "margin_call"], [bars.index[2], "liquidation"]]
    assert result.equity["margin"].iloc[1] == pytest.approx(95_000.0)


def test_no_liquidation_while_the_worst_price_keeps_equity_above_maintenance():
    bars = hourly([(100, 100, 100, 100), (100, 100, 82, 90)])  # equity at 82: 10,000 ≥ 0.02·5000·82 = 8,200
    simulator = simulate(bars, [Decision(target=5.0), Decision(action=Action.HOLD)], maintenance_margin=0.02)
    assert simulator.result().trades["side"].tolist() == ["BUY"]
    assert simulator.result().equity["equity"].iloc[-1] == pytest.approx(50_000.0)


def test_the_target_is_sized_so_that_the_leverage_after_the_fee_is_the_target():
    """From flat, target L with taker fee f and no slippage: N = L·(E − f·N), so N = L·E / (1 + L·f)."""
    bars = hourly([(100, 100, 100, 100), (100, 100, 100, 100)])
    simulator = simulate(bars, [Decision(target=2.0), Decision(action=Action.HOLD)], taker_bps=5.0)
    notional = 2 * 100_000 / (1 + 2 * 5e-4)
    equity = simulator.result().equity
    assert equity["position"].iloc[1] == pytest.approx(notional / 100)
    assert equity["equity"].iloc[1] == pytest.approx(100_000 - 5e-4 * notional)
    assert equity["leverage"].iloc[1] == pytest.approx(2.0)


def test_maker_orders_pay_the_maker_fee():
    bars = hourly([(100, 100, 100, 100), (100, 100, 100, 100)])
    simulator = simulate(bars, [Decision(target=1.0), Decision(action=Action.HOLD)], taker_bps=5.0, maker_bps=2.0,
                         order_type="maker")
    trade = simulator.result().trades.iloc[0]
    assert trade["fee"] == pytest.approx(2e-4 * trade["notional"])


MINUTES = generate_intraday(tickers=["SYN"], bars=3000, seed=3)
START, END = MINUTES.frame("SYN").index[2000], MINUTES.frame("SYN").index[2199]


def run(frameworks, path, batch_size=256, **config):
    spec = RunSpec(tickers=["SYN"], seeds=[0], start=START, end=END, batch_size=batch_size,
                   task=FuturesTask(FuturesConfig(**config)))
    warnings: list[str] = []
    with Journal(path, warn=warnings.append) as journal:
        runner = EpisodeRunner(MINUTES, spec, journal, progress=False, warn=warnings.append)
        return runner.run([FrameworkEntry(n, f, config_hash=n) for n, f in frameworks.items()])


class Says(TradingFramework):
    tasks = ("futures",)

    def __init__(self, decision):
        self.decision = decision

    def decide(self, batch):
        return [self.decision for _ in batch]


@pytest.mark.slow
@pytest.mark.parametrize(("decision", "says"), [
    (Decision(target=6.0), "target 6 is outside [-5, 5]"),
    (Decision(target=float("nan")), "is not a finite number"),
    (Decision(action=Action.BUY), "action BUY in the futures task"),
    (Decision(weights={"SYN": 1.0}), "a weights"),
])
def test_a_bad_target_is_a_recorded_failure_and_the_fallback_holds(tmp_path, decision, says):
    result = run({"bad": Says(decision)}, tmp_path / "journal.sqlite")
    assert result.failed == len(result.decisions) > 0
    assert says in result.decisions[0].failure.message
    assert all(e.decision.action is Action.HOLD for e in result.decisions)


def test_an_intraday_window_of_one_day_holds_every_bar_stamped_that_day():
    day = START.normalize()
    (episode,) = FuturesTask().episodes(MINUTES, ["SYN"], day, day)
    assert len(episode.times) == 24 * 60 and (episode.times.normalize() == day).all()


def test_a_non_finite_funding_rate_in_the_data_is_one_data_error_line():
    funding = MINUTES.records["funding"].copy()
    funding.loc[3, "rate"] = float("inf")
    data = MarketData(bars=MINUTES.bars, records={"funding": funding}, calendar=MINUTES.calendar,
                      origin={"SYN": "minutes.csv"})
    with pytest.raises(DataError, match=r"^minutes.csv: funding rate at 2024-01-02 00:00:00 is not finite$"):
        funding_rates(data, "SYN")


@pytest.mark.parametrize(("rate", "says"), [("inf", "infinite"), ("0.5", "outside"), ("x", "not a number")])
def test_a_bad_funding_file_row_is_one_line_naming_row_and_field(tmp_path, rate, says):
    path = tmp_path / "funding.csv"
    path.write_text(f"ticker,available_at,rate\nBTC,2024-01-01T00:00:00Z,0.0001\nBTC,2024-01-01T08:00:00Z,{rate}\n")
    with pytest.raises(DataError, match=rf"^{path}: row 2: field rate: .*{says}"):
        load_records(path, "funding")


def test_funding_file_times_with_an_offset_are_read_in_utc(tmp_path):
    path = tmp_path / "funding.csv"
    path.write_text("ticker,available_at,rate\nBTC,2024-01-01T09:00:00+01:00,0.0001\n")
    assert load_records(path, "funding")["available_at"].tolist() == [pd.Timestamp("2024-01-01 08:00")]


class Alternates(TradingFramework):
    """Stateful: 2x long when flat, flat when long (it reads its own position)."""

    tasks, stateful, needs_portfolio = ("futures",), True, True

    def decide(self, batch):
        return [Decision(target=0.0 if c.portfolio.positions[c.ticker] else 2.0) for c in batch]


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: TrendFollowing(fast=8, slow=32), lambda: ConstantLeverage(5.0), Alternates])
def test_a_killed_futures_run_resumes_to_identical_results(tmp_path, make):
    whole = run({"rule": make()}, tmp_path / "whole.sqlite", batch_size=16)
    with pytest.raises(KeyboardInterrupt):
        run({"rule": DiesAfter(make(), calls=5)}, tmp_path / "killed.sqlite", batch_size=16)
    resumed = run({"rule": make()}, tmp_path / "killed.sqlite", batch_size=16)
    assert resumed.reused > 0 and resumed.made > 0
    key = next(iter(whole.episodes))
    for part in ("equity", "trades", "positions", "flows", "events"):
        pd.testing.assert_frame_equal(getattr(resumed.episodes[key], part), getattr(whole.episodes[key], part))


def test_trend_following_decides_the_same_in_one_batch_as_one_bar_at_a_time():
    stamps = MINUTES.trading_days("SYN", START, END)
    contexts = [DecisionContext(ticker="SYN", date=d, view=MarketView(MINUTES, d), seed=0) for d in stamps]
    rule = TrendFollowing(fast=8, slow=32, leverage=2.0)
    together = [d.target for d in rule.decide(contexts)]
    assert together == [rule.decide([c])[0].target for c in contexts]
    assert set(together) <= {-2.0, 0.0, 2.0} and len(set(together)) > 1


def test_the_minute_market_is_24_7_with_minute_periods():
    assert MINUTES.calendar == Calendar(pd.Timedelta(minutes=1), "24/7")
    assert MINUTES.periods_per_year == 365 * 24 * 60
