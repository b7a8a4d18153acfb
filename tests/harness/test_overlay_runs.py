"""The risk overlay in the runner: point-in-time, exact after a kill and a resume, journal keys, warnings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bars import random_bars
from hypothesis import given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf
from support_frameworks import ExposureTargeter

from core.errors import ConfigError
from frameworks.baselines.buy_and_hold import BuyAndHold
from frameworks.baselines.random_policy import RandomPolicy
from frameworks.baselines.sma_cross import SMACross
from frameworks.registry import build_frameworks
from harness.execution import ExecutionConfig, Simulator
from harness.journal import Journal
from harness.overlay import OverlayBook, OverlayConfig, baseline_decisions
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from market.data import MarketData
from market.decision import Action, Decision

BARS = random_bars(120, seed=3)
DAYS = BARS.index
EVERY_PART = {"sizing": {"enabled": True}, "loss_stop": {"enabled": True, "max_loss": 0.02},
              "cool_down": {"enabled": True, "wrong_streak": 2, "days": 3},
              "cold_start": {"enabled": True, "days": 20, "baseline": {"_target_": "frameworks.baselines.sma_cross.SMACross"}},
              "drift": {"enabled": True, "window": 10, "max_hold_share": 0.5}}
"""Every part on, with thresholds that make each fire on these bars."""
GATES = ["loss_stop", "cool_down", "cold_start", "drift", "day_loss", "wrong_streak", "hold_share"]
"""Record columns decided at the decision day's close (the executed size also reads the next bar's fill)."""
SPEC = RunSpec(tickers=["AAA"], seeds=[0, 1], start=DAYS[40], end=DAYS[99], batch_size=16)


def fixed_decisions(n: int, seed: int = 0) -> list[Decision]:
    """A framework whose decisions do not depend on the data (the overlay is what is under test)."""
    rng = np.random.default_rng(seed)
    return [Decision(action=Action(a)) for a in rng.choice(["BUY", "SELL", "HOLD"], n, p=[0.4, 0.2, 0.4])]


def overlay_run(bars: pd.DataFrame, start: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(records, equity) of the overlay over `bars` from index `start`, the baseline deciding on the view of `bars`."""
    config = OverlayConfig.model_validate(EVERY_PART)
    days = list(bars.index[start:])
    execution = ExecutionConfig()
    baseline = baseline_decisions(SMACross(fast=3, slow=8), MarketData(bars={"AAA": bars}), "AAA", days[:20], 0, execution)
    book = OverlayBook(Simulator(bars.iloc[start:], execution), config, baseline)
    for decision in fixed_decisions(len(days)):
        book.submit(decision)
    return pd.DataFrame(book.records), book.result().equity


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(asof_i=st.integers(41, 119), seed=st.integers(0, 10_000), delete=st.booleans())
def test_data_after_a_day_changes_no_overlay_decision_up_to_that_day(asof_i, seed, delete):
    asof = DAYS[asof_i]
    before, equity_before = overlay_run(BARS, 40)
    future = BARS.index > asof
    if delete:
        perturbed = BARS.loc[~future]
    else:
        perturbed = BARS.copy()
        factors = np.random.default_rng(seed).uniform(0.5, 2.0, (future.sum(), 1))
        perturbed.loc[future, ["open", "high", "low", "close"]] *= factors
    after, equity_after = overlay_run(perturbed, 40)

    earlier = before["date"] < asof
    pd.testing.assert_frame_equal(before[earlier], after[after["date"] < asof])
    same_day = before["date"] == asof
    pd.testing.assert_frame_equal(before.loc[same_day, GATES].reset_index(drop=True),
                                  after.loc[after["date"] == asof, GATES].reset_index(drop=True))
    pd.testing.assert_frame_equal(equity_before.loc[:asof], equity_after.loc[:asof])


def test_every_part_fires_on_the_test_bars():
    records, _ = overlay_run(BARS, 40)
    assert all(records[part].any() for part in ["sizing", "loss_stop", "cool_down", "cold_start", "drift"])


class Killed(BaseException):
    """Stands for SIGKILL: not an Exception, so the runner's failure isolation does not catch it."""


class DiesAfter:
    """Wraps a framework; `decide` raises `Killed` on its `calls`-th call."""

    def __init__(self, framework, calls: int):
        self.framework, self.calls = framework, calls
        self.stateful, self.needs_portfolio = framework.stateful, framework.needs_portfolio
        self.stochastic = framework.stochastic

    def decide(self, batch):
        self.calls -= 1
        if self.calls <= 0:
            raise Killed
        return self.framework.decide(batch)


def run_into(path, frameworks: dict, overlay: dict = EVERY_PART, baseline=None):
    with Journal(path) as journal:
        runner = EpisodeRunner(MarketData(bars={"AAA": BARS}), SPEC, journal, progress=False, warn=lambda line: None,
                               overlay=OverlayConfig.model_validate(overlay), baseline=baseline or SMACross())
        return runner.run([FrameworkEntry(name, framework, config_hash=name) for name, framework in frameworks.items()])


def outcome(result) -> tuple[dict, pd.DataFrame]:
    equity = {key: episode.equity for key, episode in result.episodes.items()}
    return equity, pd.DataFrame(result.overlay_records)


@pytest.mark.slow
@pytest.mark.parametrize("make, calls", [(lambda: RandomPolicy(), 5), (lambda: ExposureTargeter(), 25)],
                         ids=["stateless", "stateful"])
def test_a_killed_run_with_an_overlay_resumes_to_identical_results(tmp_path, make, calls):
    whole = outcome(run_into(tmp_path / "whole.sqlite", {"f": make()}))
    with pytest.raises(Killed):
        run_into(tmp_path / "killed.sqlite", {"f": DiesAfter(make(), calls)})
    resumed_result = run_into(tmp_path / "killed.sqlite", {"f": make()})
    assert resumed_result.reused > 0 and resumed_result.made > 0
    resumed = outcome(resumed_result)
    assert whole[0].keys() == resumed[0].keys()
    for key in whole[0]:
        pd.testing.assert_frame_equal(whole[0][key], resumed[0][key])
    pd.testing.assert_frame_equal(whole[1], resumed[1])


@pytest.mark.slow
def test_a_stateless_framework_reuses_its_decisions_under_another_overlay_with_the_fresh_results(tmp_path):
    other = {**EVERY_PART, "loss_stop": {"enabled": True, "max_loss": 0.01}, "cold_start": {"enabled": False}}
    run_into(tmp_path / "journal.sqlite", {"f": RandomPolicy()})
    reused = run_into(tmp_path / "journal.sqlite", {"f": RandomPolicy()}, overlay=other)
    fresh = run_into(tmp_path / "fresh.sqlite", {"f": RandomPolicy()}, overlay=other)
    assert reused.made == 0 and reused.reused == fresh.made
    pd.testing.assert_frame_equal(outcome(reused)[1], outcome(fresh)[1])
    for key, episode in fresh.episodes.items():
        pd.testing.assert_frame_equal(reused.episodes[key].equity, episode.equity)


def test_the_overlay_enters_the_config_hash_of_stateful_frameworks_only():
    configs = OmegaConf.create({"rand": {"_target_": "frameworks.baselines.random_policy.RandomPolicy"},
                                "exp": {"_target_": "support_frameworks.ExposureTargeter"}})
    execution = OmegaConf.create(ExecutionConfig().model_dump())

    def hashes(overlay):
        return {e.name: e.config_hash for e in build_frameworks(configs, {}, execution, overlay)}

    plain = hashes(None)
    walkthrough = hashes(OmegaConf.create(EVERY_PART))
    tighter = hashes(OmegaConf.create({**EVERY_PART, "loss_stop": {"enabled": True, "max_loss": 0.01}}))
    assert walkthrough["rand"] == plain["rand"] == tighter["rand"]
    assert len({plain["exp"], walkthrough["exp"], tighter["exp"]}) == 3


@pytest.mark.slow
def test_drift_is_one_warning_line_per_framework_that_drifted(tmp_path):
    warnings: list[str] = []
    with Journal(tmp_path / "journal.sqlite") as journal:
        runner = EpisodeRunner(MarketData(bars={"AAA": BARS}), SPEC, journal, progress=False, warn=warnings.append,
                               overlay=OverlayConfig.model_validate({"drift": EVERY_PART["drift"]}))
        runner.run([FrameworkEntry("buys", BuyAndHold(), "b"), FrameworkEntry("sma", SMACross(fast=3, slow=8), "s")])
    assert warnings == [line for line in warnings if line.startswith("overlay drift: sma: HOLD above 50% of the last 10")]
    assert len(warnings) == 1


@pytest.mark.slow
def test_a_cold_start_needs_a_stateless_baseline(tmp_path):
    cold = {"cold_start": {"enabled": True}}
    with Journal(tmp_path / "journal.sqlite") as journal, pytest.raises(ConfigError, match="baseline is not set"):
        EpisodeRunner(MarketData(bars={"AAA": BARS}), SPEC, journal, overlay=OverlayConfig.model_validate(cold))
    with pytest.raises(ConfigError, match="ExposureTargeter is stateful"):
        run_into(tmp_path / "other.sqlite", {"f": BuyAndHold()}, overlay=cold, baseline=ExposureTargeter())
