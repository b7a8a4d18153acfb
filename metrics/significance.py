"""The statistics of a run on each framework's equal-weight portfolio of its episodes.

Per framework, its daily portfolio return is the mean over its tickers and seeds
(:func:`metrics.returns.portfolio_returns`); every test here is on that series, not on the
per-ticker values the paper's tables average.

* portfolio: days, mean daily return, total return TR, SR_day and SR_ann of the portfolio;
  PSR = P(true SR_day > 0); DSR = the PSR deflated for the configurations of that framework
  a sweep tried (:mod:`metrics.sweep`; with one configuration DSR = PSR); the Model
  Confidence Set p-value and membership at level ``mcs_size`` (10 %).
* comparisons, against the benchmark (``buy_and_hold`` by default) and against the best
  framework (highest mean daily portfolio return — the quantity the tests compare; no second
  block when it is the benchmark): the mean daily return difference with its 95 % CI,
  p-value and minimum detectable effect (:func:`metrics.paired.mean_difference_test`), and
  the Sharpe-ratio difference test (:func:`metrics.paired.sharpe_difference_test`). Holm's
  correction runs over each block's family.
* seed comparisons: a framework run with several seeds, each seed's own portfolio against the
  benchmark, Holm over that framework's seeds — the like-for-like test against a single-run
  baseline.

Hansen's SPA of all frameworks against the benchmark gives one p-value for the whole set.
SPA and MCS need ``MIN_BOOTSTRAP_DAYS`` days; on shorter windows they are left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.run_directory import Run
from metrics.model_selection import model_confidence_set, spa_pvalues
from metrics.paired import holm, mean_difference_test, sharpe_difference_test
from metrics.performance import sharpe_ratio, total_return
from metrics.returns import portfolio_returns, seed_portfolio_returns
from metrics.sharpe_inference import deflated_sharpe_ratio, probabilistic_sharpe_ratio

MIN_BOOTSTRAP_DAYS = 10
"""Fewest days on which SPA and the MCS are run (their block bootstrap needs some length)."""


@dataclass(frozen=True)
class Significance:
    """The numbers of the portfolio, comparison and seed tables, unformatted, and the SPA p-values."""

    portfolio: pd.DataFrame
    comparisons: pd.DataFrame
    seed_comparisons: pd.DataFrame
    spa: dict[str, float] | None
    best: str
    benchmark: str
    days: int
    """Bars in the portfolio series (days on daily data)."""
    bar: str = "day"
    """What one of those bars is called in prose and headings ("day" or "bar", `Run.bar_noun`)."""


def paired_row(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Mean-difference and Sharpe-difference tests of a vs b as one row of numbers (Holm columns added later)."""
    mean = mean_difference_test(a, b)
    sharpe = sharpe_difference_test(a, b)
    low, high = mean.ci()
    return {
        "days": float(np.sum(~(np.isnan(a) | np.isnan(b)))), "dmean": mean.estimate, "dmean_low": low,
        "dmean_high": high, "dmean_se": mean.standard_error, "df": float(mean.df), "p_mean": mean.pvalue,
        "mde_mean": mean.minimum_detectable_effect(), "dsharpe": sharpe.estimate, "p_sharpe": sharpe.pvalue,
        "mde_sharpe": sharpe.minimum_detectable_effect(),
    }


def with_holm(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with ``p_mean_holm`` and ``p_sharpe_holm``: Holm over all of its rows (one family each)."""
    rows = rows.copy()
    for test in ("mean", "sharpe"):
        rows[f"p_{test}_holm"] = holm(rows[f"p_{test}"].tolist()) if len(rows) else []
    return rows


def _against(portfolio: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Every other column of ``portfolio`` tested against ``reference``, Holm over them."""
    rows = {
        framework: paired_row(portfolio[framework].to_numpy(), portfolio[reference].to_numpy())
        for framework in portfolio.columns if framework != reference
    }
    frame = pd.DataFrame.from_dict(rows, orient="index")
    return with_holm(frame).rename_axis("framework")


def best_framework(portfolio: pd.DataFrame) -> str:
    """The framework with the highest mean daily portfolio return (the first one on a tie)."""
    return str(portfolio.mean().idxmax())


def portfolio_numbers(
    portfolio: pd.DataFrame, trial_sharpes: dict[str, np.ndarray], periods_per_year: float
) -> pd.DataFrame:
    """Per framework: days, mean, TR, SR_day, SR_ann, PSR, and DSR over its ``trial_sharpes`` (N = their number)."""
    rows = {}
    for framework in portfolio.columns:
        r = portfolio[framework].dropna().to_numpy()
        trials = trial_sharpes.get(framework, np.array([sharpe_ratio(r)]))
        sr = sharpe_ratio(r)
        rows[framework] = {
            "days": float(len(r)), "mean": float(np.mean(r)) if len(r) else math.nan, "TR": total_return(r),
            "SR_day": sr, "SR_ann": sr * math.sqrt(periods_per_year), "PSR": probabilistic_sharpe_ratio(r),
            "DSR": deflated_sharpe_ratio(r, trials, max(len(trials), 1)), "configurations": float(max(len(trials), 1)),
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("framework")


def seed_comparisons(returns: pd.DataFrame, benchmark: str) -> pd.DataFrame:
    """Each seed's portfolio of every framework with several seeds vs the benchmark; Holm within a framework."""
    if benchmark not in returns.columns.get_level_values("framework"):
        return pd.DataFrame()
    by_seed = seed_portfolio_returns(returns)
    reference = portfolio_returns(returns)[benchmark].to_numpy()
    blocks = {}
    for framework in dict.fromkeys(by_seed.columns.get_level_values("framework")):
        seeds = by_seed[framework]
        if framework == benchmark or seeds.shape[1] < 2:
            continue
        rows = {seed: {"TR": total_return(seeds[seed].to_numpy()), "SR_day": sharpe_ratio(seeds[seed].to_numpy()),
                       **paired_row(seeds[seed].to_numpy(), reference)} for seed in seeds.columns}
        blocks[framework] = with_holm(pd.DataFrame.from_dict(rows, orient="index"))
    return pd.concat(blocks, names=["framework", "seed"]) if blocks else pd.DataFrame()


def significance(
    run: Run, returns: pd.DataFrame, benchmark: str = "buy_and_hold", reps: int = 1000, seed: int = 0,
    mcs_size: float = 0.10, trial_sharpes: dict[str, np.ndarray] | None = None,
) -> Significance:
    """Run every test; comparisons against an absent benchmark, SPA and MCS on short windows are left out."""
    portfolio = portfolio_returns(returns)[run.frameworks]
    days = int(portfolio.dropna(how="all").shape[0])
    best = best_framework(portfolio)
    numbers = portfolio_numbers(portfolio, trial_sharpes or {}, run.periods_per_year)
    long_enough = days >= MIN_BOOTSTRAP_DAYS
    if len(run.frameworks) > 1 and long_enough:
        numbers = numbers.join(model_confidence_set(portfolio, mcs_size, reps, seed))
    blocks, spa = {}, None
    if benchmark in run.frameworks and len(run.frameworks) > 1:
        blocks[benchmark] = _against(portfolio, benchmark)
        if long_enough:
            spa = spa_pvalues(portfolio[benchmark], portfolio.drop(columns=[benchmark]), reps, seed)
    if best != benchmark and len(run.frameworks) > 1:
        blocks[best] = _against(portfolio, best)
    comparisons = pd.concat(blocks, names=["against", "framework"]) if blocks else pd.DataFrame()
    return Significance(
        portfolio=numbers, comparisons=comparisons, seed_comparisons=seed_comparisons(returns, benchmark),
        spa=spa, best=best, benchmark=benchmark, days=days, bar=run.bar_noun,
    )
