"""FinRL-style agents: trained on the training window only, one cached policy per seed, reproducible."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from bars import random_bars
from cli_helpers import ROOT
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from core.errors import ConfigError
from frameworks.rl import finrl
from frameworks.rl.finrl import FinRLAgent
from harness.execution import ExecutionConfig
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from market.data import MarketData
from market.decision import DecisionContext
from market.portfolio import PortfolioState
from market.view import MarketView

TICKERS = ["AAA", "BBB"]
BARS = {ticker: random_bars(220, seed=seed) for seed, ticker in enumerate(TICKERS)}
DATES = BARS["AAA"].index
TRAIN = {"start": DATES[0], "end": DATES[139]}
TEST_START, TEST_END = DATES[150], DATES[179]


def market(test_scale: float = 1.0) -> MarketData:
    """The market, with every price after the training window multiplied by `test_scale`."""
    bars = {}
    for ticker, frame in BARS.items():
        frame = frame.copy()
        frame.loc[frame.index > TRAIN["end"], ["open", "high", "low", "close"]] *= test_scale
        bars[ticker] = frame
    return MarketData(bars=bars)


def agent(cache_dir, algorithm: str = "a2c", timesteps: int = 100) -> FinRLAgent:
    return FinRLAgent(algorithm=algorithm, tickers=TICKERS, train=TRAIN, timesteps=timesteps, window=5,
                      cache_dir=str(cache_dir))


def context(data: MarketData, date, seed: int = 0) -> DecisionContext:
    return DecisionContext(ticker="AAA", date=date, view=MarketView(data, date), seed=seed,
                           portfolio=PortfolioState.single("AAA", cash=1e5, shares=0.0, close=1.0))


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["a2c", "ppo"])
def test_runs_in_the_runner_with_one_policy_per_seed(tmp_path, algorithm):
    trader = agent(tmp_path / "policies", algorithm, timesteps=64)
    spec = RunSpec(tickers=TICKERS, seeds=[0, 1], start=TEST_START, end=TEST_END)
    with Journal(tmp_path / "journal.sqlite") as journal:
        result = EpisodeRunner(market(), spec, journal, progress=False).run([FrameworkEntry("rl", trader, "h")])
    assert result.failed == 0
    assert len(result.episodes) == 4 and result.made == 4 * 30
    facts = trader.training_facts()
    assert sorted(facts) == [0, 1] and facts[0]["key"] != facts[1]["key"]
    assert all(f["timesteps"] >= 64 and f["train_wall_s"] > 0 and f["train_cpu_s"] > 0 for f in facts.values())
    used = {(e.seed, e.decision.trace.extra["policy"]) for e in result.decisions}
    assert used == {(seed, f["key"]) for seed, f in facts.items()}


def test_refuses_a_decision_inside_the_training_window(tmp_path):
    with pytest.raises(ConfigError, match="not after the training window"):
        agent(tmp_path).decide([context(market(), TRAIN["end"])])


def test_training_reads_nothing_after_the_training_window(tmp_path):
    trained = agent(tmp_path / "a")
    trained.decide([context(market(), TEST_START)])
    shifted = agent(tmp_path / "b")
    shifted.decide([context(market(test_scale=1.7), TEST_END)])
    assert trained.training_facts()[0]["data"] == shifted.training_facts()[0]["data"]
    assert trained.training_facts()[0]["key"] == shifted.training_facts()[0]["key"]


def parameters(trader: FinRLAgent, seed: int) -> dict[str, torch.Tensor]:
    return trader._policies[seed][0].policy.state_dict()


@pytest.mark.slow
def test_same_seed_same_policy_and_a_cached_policy_is_not_retrained(tmp_path, monkeypatch):
    first, second = agent(tmp_path / "one"), agent(tmp_path / "two")
    contexts = [context(market(), date, seed=3) for date in DATES[150:160]]
    decisions = [d.action for d in first.decide(contexts)]
    assert [d.action for d in second.decide(contexts)] == decisions
    for name, tensor in parameters(first, 3).items():
        torch.testing.assert_close(parameters(second, 3)[name], tensor, rtol=0, atol=0)

    def no_training(*args, **kwargs):
        raise AssertionError("a cached policy was trained again")

    monkeypatch.setattr(finrl, "train_policy", no_training)
    cached = agent(tmp_path / "one")
    assert [d.action for d in cached.decide(contexts)] == decisions
    assert cached.training_facts()[3]["key"] == first.training_facts()[3]["key"]


def test_config_takes_the_runs_tickers_training_window_and_execution_rules():
    overrides = ["+suite=smoke", "+framework@frameworks.finrl_ppo=finrl_ppo", "execution.fee_bps=5"]
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    trader = instantiate(cfg.frameworks.finrl_ppo)
    assert trader.tickers == list(cfg.tickers) and trader.settings.algorithm == "ppo"
    assert trader.train.start == pd.Timestamp(cfg.split.train.start)
    assert trader.train.end == pd.Timestamp(cfg.split.train.end)
    assert trader.settings.execution == ExecutionConfig(fee_bps=5)
