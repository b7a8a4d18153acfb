"""Rule baselines: fan-out gives the same decisions as stepping day by day; seeds are honoured."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from cli_helpers import ROOT
from in_process import run_in_process
from frameworks.base import TradingFramework
from market.decision import Action, DecisionContext
from market.sources.embedded import load_embedded
from market.view import MarketView

DATA = load_embedded(["MSFT", "NVDA"])
DAYS = DATA.trading_days("MSFT", "2019-09-02", "2020-03-31")
BASELINES = ["buy_and_hold", "macd", "sma_cross", "zmr", "kdj_rsi", "stoch_bbands", "random"]


def framework(name: str) -> TradingFramework:
    with initialize_config_dir(config_dir=str(ROOT / "configs" / "framework"), version_base="1.3"):
        return instantiate(compose(config_name=name))


def contexts(ticker: str, seed: int = 0) -> list[DecisionContext]:
    return [DecisionContext(ticker=ticker, date=d, view=MarketView(DATA, d), seed=seed) for d in DAYS]


@pytest.mark.slow
@pytest.mark.parametrize("name", BASELINES)
def test_fan_out_equals_one_date_at_a_time(name):
    rule = framework(name)
    batch = contexts("MSFT") + contexts("NVDA")
    together = [d.action for d in rule.decide(batch)]
    alone = [rule.decide([ctx])[0].action for ctx in batch]
    assert together == alone


@pytest.mark.parametrize("name", ["macd", "sma_cross", "zmr", "kdj_rsi"])
def test_indicator_rules_trade_in_both_directions(name):
    actions = [d.action for d in framework(name).decide(contexts("NVDA") + contexts("MSFT"))]
    assert Action.BUY in actions and Action.SELL in actions


@pytest.mark.parametrize("name", ["macd", "sma_cross", "zmr", "kdj_rsi", "stoch_bbands"])
@pytest.mark.parametrize("ticker", ["MSFT", "NVDA"])
def test_decisions_do_not_depend_on_how_much_history_precedes_the_window(name, ticker):
    """With h bars of history before the window, day i of the window is HOLD while h + i + 1 < the
    rule's warm-up, and from then on the decision it would make with all the history there is."""
    rule = framework(name)
    bars = DATA.frame(ticker)
    first = bars.index.get_loc(DAYS[0])
    window = slice(first, first + len(DAYS))
    everything = rule.signals(bars).iloc[window].to_numpy()
    assert first > 2 * rule.warmup_bars  # the reference itself is warmed up
    for history in (0, 7, rule.warmup_bars // 2, rule.warmup_bars - 1, rule.warmup_bars + 40):
        signals = rule.signals(bars.iloc[first - history:window.stop]).iloc[history:].to_numpy()
        warm = history + np.arange(len(DAYS)) + 1 >= rule.warmup_bars
        assert list(signals[~warm]) == [Action.HOLD] * int((~warm).sum())
        assert list(signals[warm]) == list(everything[warm]), f"{history} bars of history"


def test_random_policy_depends_on_seed_only_through_the_context():
    rule = framework("random")
    first = [d.action for d in rule.decide(contexts("MSFT", seed=0))]
    again = [d.action for d in rule.decide(list(reversed(contexts("MSFT", seed=0))))]
    other = [d.action for d in rule.decide(contexts("MSFT", seed=1))]
    assert first == list(reversed(again))
    assert first != other
    shares = {a: first.count(a) / len(first) for a in Action}
    assert all(0.2 < share < 0.47 for share in shares.values())


def test_invalid_parameters_are_refused_with_the_reason():
    from frameworks.baselines.sma_cross import SMACross
    with pytest.raises(ValueError, match="fast .* must be shorter than slow"):
        SMACross(fast=30, slow=10)


@pytest.mark.slow
def test_two_runs_of_one_class_under_different_names_keep_their_own_decisions(tmp_path):
    run_in_process(tmp_path, "+suite=smoke", "+framework@frameworks.macd_again=macd")
    decisions = pd.read_parquet(tmp_path / "decisions.parquet")
    first = decisions.query("framework == 'macd'")["action"].tolist()
    again = decisions.query("framework == 'macd_again'")["action"].tolist()
    assert len(again) == 2 * 62 and again == first
