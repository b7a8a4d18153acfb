"""Head-to-head pairs, the DSR over a sweep's configurations, the verdict paragraph and short windows."""

import dataclasses
import json
import shutil

import numpy as np
import pandas as pd
import pytest

from harness.run_directory import load_run
from metrics import report
from metrics.episodes import episode_metrics
from metrics.head_to_head import default_pairs, head_to_head, paired_decisions
from metrics.paired import mean_difference_test
from metrics.returns import daily_returns, portfolio_returns
from metrics.run_tables import labelled_decisions
from metrics.sharpe_inference import deflated_sharpe_ratio, probabilistic_sharpe_ratio
from metrics.significance import significance
from metrics.sweep import configuration_sharpes
from metrics.verdict import verdict


def _constructed(run, edge: float):
    """The run's daily returns with momentum = buy_and_hold + ``edge`` + small noise on every ticker."""
    returns = daily_returns(run)
    noise = np.random.default_rng(0)
    for ticker in run.tickers:
        benchmark = returns[("buy_and_hold", ticker, 0)]
        returns[("momentum", ticker, 0)] = benchmark + edge + noise.normal(0, 0.002, len(benchmark))
    return returns


def test_head_to_head_pair_on_two_constructed_series(synthetic_run):
    run = load_run(synthetic_run)
    returns = _constructed(run, edge=0.004)
    rows = head_to_head(run, returns, [("momentum", "buy_and_hold"), ("always_hold", "always_hold")])
    pair = rows.loc[("momentum", "buy_and_hold")]
    portfolio = portfolio_returns(returns)
    expected = mean_difference_test(portfolio["momentum"].to_numpy(), portfolio["buy_and_hold"].to_numpy())
    assert pair["dmean"] == pytest.approx(0.004, abs=5e-4) and pair["dmean"] == pytest.approx(expected.estimate)
    assert pair["dmean_low"] < 0.004 < pair["dmean_high"] and pair["p_mean_holm"] < 0.01
    same = rows.loc[("always_hold", "always_hold")]
    assert same["p_mean"] == 1.0 and same["agree"] == same["decisions"] == 3 * 60
    # agreement and McNemar's table from the decisions themselves
    decisions = labelled_decisions(run)
    a = decisions[decisions["framework"] == "momentum"].set_index(["ticker", "date"])
    b = decisions[decisions["framework"] == "buy_and_hold"].set_index(["ticker", "date"])
    right = a["regime"].map({"bullish": "BUY", "bearish": "SELL", "sideways": "HOLD"})
    a_right, b_right = a["action"] == right, b["action"] == right
    assert pair["agree"] == (a["action"] == b["action"]).sum() and pair["decisions"] == len(a)
    assert pair["a_only"] == (a_right & ~b_right).sum() and pair["b_only"] == (~a_right & b_right).sum()
    assert 0.0 <= pair["p_mcnemar"] <= 1.0


def test_default_pairs_are_the_llm_frameworks_and_seeds_pair_when_they_can(synthetic_run):
    run = load_run(synthetic_run)
    assert default_pairs(run) == []  # coin_flip is the only framework with LLM calls
    decisions = run.decisions.copy()
    decisions.loc[decisions["framework"] == "momentum", "llm_calls"] = 2
    assert default_pairs(dataclasses.replace(run, decisions=decisions)) == [("momentum", "coin_flip")]
    # over the seeds both ran: one seed against three pairs seed 0 only; the same seeds pair seed by seed
    momentum_vs_coin = paired_decisions(run.decisions, "momentum", "coin_flip")
    assert len(momentum_vs_coin) == 3 * 60 and set(momentum_vs_coin["seed"]) == {0}
    assert len(paired_decisions(run.decisions, "coin_flip", "coin_flip")) == 3 * 3 * 60
    later_seeds = run.decisions[(run.decisions["framework"] != "coin_flip") | (run.decisions["seed"] > 0)]
    assert len(paired_decisions(later_seeds, "momentum", "coin_flip")) == 3 * 60  # no common seed: first seeds
    with pytest.raises(ValueError, match="not in the run: nope"):
        head_to_head(run, daily_returns(run), [("momentum", "nope")])


def _sweep_member(run, name: str, momentum_from: str, momentum_hash: str):
    """A copy of ``run`` whose momentum curves are ``momentum_from``'s, under config hash ``momentum_hash``."""
    equity = run.equity.copy()
    source = equity[(equity["framework"] == momentum_from) & (equity["seed"] == 0)]
    equity.loc[equity["framework"] == "momentum", "equity"] = source["equity"].to_numpy()
    hashes = {framework: "same" for framework in run.frameworks} | {"momentum": momentum_hash}
    return dataclasses.replace(run, path=run.path / name, equity=equity, info=run.info | {"frameworks": hashes})


def test_dsr_deflates_over_the_configurations_a_sweep_tried(synthetic_run):
    run = _sweep_member(load_run(synthetic_run), ".", "momentum", "m0")
    sweep = [_sweep_member(run, "1", "coin_flip", "m1"), _sweep_member(run, "2", "buy_and_hold", "m2"),
             _sweep_member(run, "3", "buy_and_hold", "m2")]  # a repeated configuration counts once
    trials = configuration_sharpes(run, sweep)
    assert len(trials["momentum"]) == 3 and len(trials["buy_and_hold"]) == 1
    result = significance(run, daily_returns(run), reps=100, trial_sharpes=trials)
    momentum = portfolio_returns(daily_returns(run))["momentum"].to_numpy()
    assert result.portfolio.loc["momentum", "configurations"] == 3
    expected = deflated_sharpe_ratio(momentum, trials["momentum"], 3)
    assert result.portfolio.loc["momentum", "DSR"] == pytest.approx(expected)
    assert result.portfolio.loc["momentum", "DSR"] < probabilistic_sharpe_ratio(momentum)
    assert result.portfolio.loc["buy_and_hold", "DSR"] == result.portfolio.loc["buy_and_hold", "PSR"]


def test_verdict_is_computed_from_the_tests(synthetic_run):
    run = load_run(synthetic_run)
    result = significance(run, _constructed(run, edge=0.004), reps=200)
    text = verdict(run, result, pd.DataFrame())
    holm = result.comparisons.xs("buy_and_hold", level="against")["p_mean_holm"]
    assert holm["momentum"] < 0.05 and "Against buy_and_hold, momentum (+" in text
    mde = result.comparisons["mde_mean"].median() * 1e4
    assert f"about {mde:.1f} bp/day" in text and f"T = {result.days} days" in text
    members = int(result.portfolio["included"].sum())
    assert (f"keeps only {result.portfolio.index[result.portfolio['included']][0]}" in text) == (members == 1)
    assert "Caveats: one 59-day window" in text and "3 tickers and 3 seeds" in text
    plain = significance(run, daily_returns(run), reps=200)
    rows = plain.comparisons.xs("buy_and_hold", level="against")
    significant = list(rows.index[rows["p_mean_holm"] < 0.05])
    text = verdict(run, plain, pd.DataFrame())
    assert ("no mean daily return differs" in text) == (not significant)
    assert all(f"{name} (" in text for name in significant)


@pytest.mark.slow
def test_summary_opens_with_the_verdict_and_labels_what_was_tested(synthetic_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(synthetic_run, run_dir)
    assert report.main([str(run_dir), "--reps", "100", "--pair", "momentum", "coin_flip", "--min-count", "200"]) == 0
    summary = (run_dir / "summary.md").read_text()
    assert summary.splitlines()[2].startswith("**Verdict.** ")
    main = (run_dir / "tables" / "main.md").read_text()
    assert "means over tickers" in main and "TR %" in main and "mean ARR %" in main
    assert "equal-weight daily portfolio" in (run_dir / "tables" / "portfolio.md").read_text()
    assert "annualised Sharpe ratio" in (run_dir / "tables" / "paper.md").read_text()
    head = (run_dir / "tables" / "head_to_head.md").read_text()
    assert "| momentum | coin_flip |" in head and "(n=180)" in head  # 3 tickers x 60 days of seed 0
    activity = (run_dir / "tables" / "activity.md").read_text()
    rates = [cell for line in activity.splitlines()[4:] for cell in line.split(" | ")[3:6]]
    assert rates and all("(n=" in cell for cell in rates)
    assert all(cell.startswith("-- ") for cell in rates if int(cell.split("n=")[1].rstrip(")| ")) < 200)


@pytest.mark.slow
@pytest.mark.parametrize("dates", [2, 3])
def test_report_degrades_gracefully_on_a_window_of_a_few_days(synthetic_run, tmp_path, dates):
    run_dir = tmp_path / "run"
    shutil.copytree(synthetic_run, run_dir)
    equity = pd.read_parquet(run_dir / "equity.parquet")
    last = sorted(equity["date"].unique())[dates - 1]
    equity = equity[equity["date"] <= last]
    trades = pd.read_csv(run_dir / "trades.csv", parse_dates=["date"])
    trades = trades[trades["date"] <= last]
    decisions = pd.read_parquet(run_dir / "decisions.parquet")
    decisions[decisions["date"] <= last].to_parquet(run_dir / "decisions.parquet")
    equity.to_parquet(run_dir / "equity.parquet")
    trades.to_csv(run_dir / "trades.csv", index=False)
    episode_metrics(equity, trades, 252.0).to_csv(run_dir / "metrics.csv", index=False)
    summary = report.write_report(run_dir, reps=50).read_text()
    assert f"one {dates - 1}-day window" in summary
    assert ("Too few days" in summary) == (dates == 2)
    assert json.loads((run_dir / "run.json").read_text())["suite"] == "synthetic"
