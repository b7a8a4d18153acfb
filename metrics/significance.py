"""The significance table of a run: every framework against the benchmark and against the best.

Per framework, on its equal-weight daily portfolio return over tickers and seeds
(:func:`metrics.rundir.portfolio_returns`):

* vs the benchmark (``buy_and_hold`` by default) and vs the best framework (highest average
  ARR in ``metrics.csv``; no second block when the best is the benchmark): the mean daily
  return difference in basis points with its stationary-bootstrap p-value, and the
  Ledoit-Wolf HAC Sharpe-difference p-value. Holm's correction runs over each column's
  family (all frameworks tested in that column).
* MCS: the Model Confidence Set p-value and membership at level ``mcs_size`` (10 %).
* PSR: P(true per-period SR > 0); DSR: the PSR deflated for the number of configurations the
  suite tried (``run.json`` ``configurations_tried``, else the number of frameworks), with
  the variance of the frameworks' Sharpe ratios as the variance of the trials.

Hansen's SPA of all frameworks against the benchmark gives one p-value for the whole set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics.model_selection import model_confidence_set, spa_pvalues
from metrics.paired import holm, mean_difference_test, sharpe_difference_test
from metrics.performance import sharpe_ratio
from metrics.rundir import Run, portfolio_returns
from metrics.run_tables import average_means
from metrics.sharpe_inference import deflated_sharpe_ratio, probabilistic_sharpe_ratio
from metrics.tables import format_columns


@dataclass(frozen=True)
class Significance:
    """The numbers of the significance table, unformatted, and the SPA p-values."""

    table: pd.DataFrame
    spa: dict[str, float] | None
    best: str
    benchmark: str
    n_trials: int


def best_framework(run: Run) -> str:
    """The framework with the highest seed-averaged average ARR."""
    return str(average_means(run)["ARR"].idxmax())


def _pairwise(portfolio: pd.DataFrame, reference: str, reps: int, seed: int) -> pd.DataFrame:
    rows = {}
    for framework in portfolio.columns:
        if framework == reference:
            continue
        a, b = portfolio[framework].to_numpy(), portfolio[reference].to_numpy()
        difference, p_mean = mean_difference_test(a, b, reps, seed)
        rows[framework] = {"dmean": difference, "p_mean": p_mean, "p_sharpe": sharpe_difference_test(a, b)[1]}
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=["dmean", "p_mean", "p_sharpe"])
    frame["p_mean_holm"] = holm(frame["p_mean"].tolist())
    frame["p_sharpe_holm"] = holm(frame["p_sharpe"].tolist())
    return frame.reindex(portfolio.columns)


def significance(
    run: Run, returns: pd.DataFrame, benchmark: str = "buy_and_hold", reps: int = 1000, seed: int = 0,
    mcs_size: float = 0.10,
) -> Significance:
    """Run every comparison of the table; vs-benchmark columns and SPA are empty when the benchmark is absent."""
    portfolio = portfolio_returns(returns)[run.frameworks]
    best = best_framework(run)
    table = pd.DataFrame(index=pd.Index(run.frameworks, name="framework"))
    spa = None
    if benchmark in run.frameworks:
        table = table.join(_pairwise(portfolio, benchmark, reps, seed).add_suffix("_bench"))
        others = portfolio.drop(columns=[benchmark])
        spa = spa_pvalues(portfolio[benchmark], others, reps, seed) if not others.empty else None
    if best != benchmark:
        table = table.join(_pairwise(portfolio, best, reps, seed).add_suffix("_best"))
    if len(run.frameworks) > 1:
        table = table.join(model_confidence_set(portfolio, mcs_size, reps, seed))
    sharpes = np.array([sharpe_ratio(portfolio[f].to_numpy()) for f in run.frameworks])
    n_trials = int(run.info.get("configurations_tried", len(run.frameworks)))
    table["PSR"] = [probabilistic_sharpe_ratio(portfolio[f].to_numpy()) for f in run.frameworks]
    table["DSR"] = [deflated_sharpe_ratio(portfolio[f].to_numpy(), sharpes, n_trials) for f in run.frameworks]
    return Significance(table=table, spa=spa, best=best, benchmark=benchmark, n_trials=n_trials)


def significance_table(result: Significance) -> pd.DataFrame:
    """The formatted table: differences in bp/day, p-values raw and Holm-adjusted, MCS, PSR, DSR."""
    formats = {}
    for suffix, name in (("bench", result.benchmark), ("best", result.best)):
        formats[f"dmean_{suffix}"] = (f"dmean vs {name} bp/day", 1e4, 2)
        for test in ("mean", "sharpe"):
            formats[f"p_{test}_{suffix}"] = (f"p {test} ({suffix})", 1.0, 3)
            formats[f"p_{test}_holm_{suffix}"] = (f"p {test} Holm ({suffix})", 1.0, 3)
    formats |= {"pvalue": ("MCS p", 1.0, 3), "PSR": ("PSR", 1.0, 3), "DSR": ("DSR", 1.0, 3)}
    table = format_columns(result.table, formats)
    if "included" in result.table:
        in_mcs = result.table["included"].map(lambda v: "yes" if v else "no")
        table.insert(table.columns.get_loc("MCS p") + 1, "in MCS", in_mcs)
    return table
