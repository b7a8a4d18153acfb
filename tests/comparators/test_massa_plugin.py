"""The MASSA plugin through the runner on a tiny universe: valid weights, the trace, resume, refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from massa_fixtures import DATES, MARKET, SEEN_UNTIL, UNIVERSE, scaling, write_checkpoint

from comparators.features import bar_features, windows
from comparators.massa.evaluate import evaluate_checkpoint
from comparators.massa.inputs import decision_row, view_bars, window_market
from core.errors import ConfigError
from frameworks.massa import MassaFramework, mean_pairwise_correlation
from harness.decision_checks import CASH
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from harness.tasks.portfolio import PortfolioConfig, PortfolioTask
from market.decision import DecisionContext
from market.portfolio import PortfolioState
from market.view import MarketView

START, END = DATES[170], DATES[199]


def run(framework, path, start=START, end=END, seeds=(0,)):
    spec = RunSpec(tickers=list(UNIVERSE), seeds=list(seeds), start=start, end=end, task=PortfolioTask(PortfolioConfig()))
    with Journal(path) as journal:
        runner = EpisodeRunner(MARKET, spec, journal, progress=False, warn=lambda _: None)
        return runner.run([FrameworkEntry("massa", framework, config_hash="massa")])


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["massa", "no_signal", "random_signal", "central"])
def test_the_plugin_decides_valid_long_only_weights_through_the_runner(tmp_path, variant):
    write_checkpoint(tmp_path / "policy", variant)
    framework = MassaFramework(checkpoints={0: str(tmp_path / "policy")})
    result = run(framework, tmp_path / "journal.sqlite")
    decisions = [entry.decision for entry in result.decisions]
    assert result.failed == 0 and len(decisions) == len(MARKET.trading_days("AAA", START, END))
    for decision in decisions:
        weights = decision.weights
        assert set(weights) == {*UNIVERSE, CASH}
        assert sum(weights.values()) == pytest.approx(1.0) and min(weights.values()) >= -1e-12
        assert len(decision.trace.extra["actions"]) == len(UNIVERSE)
    facts = framework.run_facts()["seeds"]["0"]
    assert facts["decisions"] == len(decisions) and 0.0 <= facts["scaled_share"] <= 1.0


class KilledAfter(MassaFramework):
    """The plugin, stopped (a BaseException, not a recorded failure) when `calls` batches are decided."""

    def __init__(self, checkpoints, calls: int):
        super().__init__(checkpoints)
        self.calls = calls

    def decide(self, batch):
        if self.calls == 0:
            raise KeyboardInterrupt
        self.calls -= 1
        return super().decide(batch)


@pytest.mark.slow
def test_a_killed_run_resumes_to_the_same_equity(tmp_path):
    write_checkpoint(tmp_path / "policy", "massa")
    path = str(tmp_path / "policy")
    whole = run(MassaFramework({0: path}), tmp_path / "whole.sqlite")
    with pytest.raises(KeyboardInterrupt):
        run(KilledAfter({0: path}, calls=12), tmp_path / "killed.sqlite")
    resumed_framework = MassaFramework({0: path})
    resumed = run(resumed_framework, tmp_path / "killed.sqlite")
    assert resumed.reused > 0 and resumed.made > 0
    key = next(iter(whole.episodes))
    pd.testing.assert_frame_equal(resumed.episodes[key].equity, whole.episodes[key].equity)
    pd.testing.assert_frame_equal(resumed.episodes[key].positions, whole.episodes[key].positions)
    assert resumed_framework.run_facts()["seeds"]["0"]["decisions"] == len(resumed.decisions)


def refusal(framework: MassaFramework, context_date: pd.Timestamp, seed: int = 0) -> str:
    """The ConfigError line `decide` raises for one context (the runner records it as a failed decision)."""
    view = MarketView(MARKET, context_date)
    portfolio = PortfolioState(cash=1.0, positions=dict.fromkeys(UNIVERSE, 0.0), marks=dict.fromkeys(UNIVERSE, 1.0))
    context = DecisionContext(ticker="UNIVERSE", date=context_date, view=view, seed=seed, portfolio=portfolio,
                              universe=UNIVERSE)
    with pytest.raises(ConfigError) as error:
        framework.decide([context])
    return str(error.value)


@pytest.mark.slow
def test_a_decision_the_checkpoint_saw_in_training_is_refused(tmp_path):
    write_checkpoint(tmp_path / "policy", "massa")
    framework = MassaFramework({0: str(tmp_path / "policy")})
    assert "not after the last bar the checkpoint" in refusal(framework, SEEN_UNTIL)
    result = run(framework, tmp_path / "journal.sqlite", start=DATES[115], end=DATES[130])
    refused = [e for e in result.decisions if e.date <= SEEN_UNTIL]
    assert refused and result.failed == len(refused)


def test_a_seed_without_a_checkpoint_or_another_universe_is_refused(tmp_path):
    write_checkpoint(tmp_path / "policy", "massa")
    framework = MassaFramework({0: str(tmp_path / "policy")})
    assert "no checkpoint for seed 1" in refusal(framework, END, seed=1)
    with pytest.raises(ConfigError, match="gross cap must be > 0"):
        MassaFramework({0: str(tmp_path / "policy")}, max_gross=0.0)


def test_a_decision_row_from_the_trailing_bars_equals_the_row_of_the_whole_history():
    fitted = scaling(2)
    date = DATES[150]
    whole = window_market(MarketView(MARKET, date), UNIVERSE, DATES[140], date, fitted)
    windows, context = decision_row(MarketView(MARKET, date), UNIVERSE, fitted)
    np.testing.assert_allclose(windows, whole.windows[-1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(context, whole.context[-1], rtol=1e-6, atol=1e-6)


def test_the_asset_windows_are_each_assets_standardised_windows_bit_for_bit():
    """The one vectorised pass over the universe gives what a pass per asset gives."""
    fitted = scaling(3)
    bars = view_bars(MarketView(MARKET, DATES[150]), UNIVERSE)
    each = [windows(fitted.features.transform(bar_features(frame)), 3) for frame in bars.values()]
    np.testing.assert_array_equal(fitted.asset_windows(bars), np.stack([w.reshape(len(w), -1) for w in each], axis=1))


def test_the_action_correlation_is_the_mean_off_diagonal_pearson_correlation():
    base = np.linspace(-1, 1, 10)
    actions = np.column_stack([base, 2 * base, -base, np.zeros(10)])  # the constant agent is left out
    assert mean_pairwise_correlation(actions) == pytest.approx((1 - 1 - 1) / 3)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["massa", "random_signal"])
def test_the_evaluation_module_reproduces_the_runners_equity(tmp_path, variant):
    """comparators.massa.evaluate (whole-window features, no journal) and the runner give the same episode."""
    write_checkpoint(tmp_path / "policy", variant)
    result = run(MassaFramework({0: str(tmp_path / "policy")}), tmp_path / "journal.sqlite")
    market = window_market(MarketView(MARKET, END), UNIVERSE, START, END, scaling(2))
    row, returns = evaluate_checkpoint(tmp_path / "policy", market, PortfolioConfig(), seed=0)
    equity = next(iter(result.episodes.values())).equity["equity"]
    np.testing.assert_allclose(returns.to_numpy(), equity.pct_change().dropna().to_numpy(), rtol=1e-6, atol=1e-9)
    assert row["TR"] == pytest.approx(equity.iloc[-1] / equity.iloc[0] - 1.0, rel=1e-6)
