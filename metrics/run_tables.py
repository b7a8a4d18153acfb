"""The report's tables, built from a loaded run: main (paper layout), activity, efficiency, regime, seeds.

Point values come from ``metrics.csv`` (averaged over seeds); CIs come from the stationary
bootstrap of the episodes' daily returns (:mod:`metrics.bootstrap`), resampling days jointly
across every ticker and seed of a cell. Cells are formatted strings (see :mod:`metrics.tables`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from market.runner import EPISODE_KEYS
from metrics import regime, trading
from metrics.bootstrap import average_metric_cis
from metrics.episodes import AVERAGE_TICKER
from metrics.paired import holm, mean_difference_test
from metrics.rundir import Run, portfolio_returns
from metrics.seeds import aggregate_seeds
from metrics.tables import format_ci, format_columns, format_value


def seed_means(run: Run) -> pd.DataFrame:
    """``metrics.csv`` averaged over seeds, indexed by (framework, ticker) (ticker ``AVG`` included)."""
    numeric = run.metrics.drop(columns=["seed"]).select_dtypes("number").columns
    return run.metrics.groupby(["framework", "ticker"], sort=False)[list(numeric)].mean()


def average_means(run: Run) -> pd.DataFrame:
    """The ``ticker=AVG`` rows of ``metrics.csv`` averaged over seeds, indexed by framework."""
    return seed_means(run).xs(AVERAGE_TICKER, level="ticker")


def significance_marker(p_value: float) -> str:
    """``**`` for p < 0.01, ``*`` for p < 0.05, nothing otherwise (p already Holm-adjusted)."""
    if not np.isfinite(p_value):
        return ""
    return "**" if p_value < 0.01 else "*" if p_value < 0.05 else ""


def _ticker_mean_returns(returns: pd.DataFrame, framework: str, ticker: str) -> pd.Series:
    return returns[framework][ticker].mean(axis=1)


def arr_markers(
    run: Run, returns: pd.DataFrame, benchmark: str, reps: int, seed: int
) -> dict[tuple[str, str], str]:
    """Holm-adjusted markers of every (framework, ticker or AVG) ARR cell vs the benchmark.

    Each cell's test is the bootstrap test of the mean daily return difference between the
    framework and the benchmark on that ticker (seed-averaged returns; for AVG the
    equal-weight portfolio of all tickers); the Holm family is every cell of the table.
    """
    if benchmark not in run.frameworks:
        return {}
    portfolio = portfolio_returns(returns)
    cells, p_values = [], []
    for framework in run.frameworks:
        if framework == benchmark:
            continue
        for ticker in [*run.tickers, AVERAGE_TICKER]:
            if ticker == AVERAGE_TICKER:
                ours, theirs = portfolio[framework], portfolio[benchmark]
            else:
                ours = _ticker_mean_returns(returns, framework, ticker)
                theirs = _ticker_mean_returns(returns, benchmark, ticker)
            cells.append((framework, ticker))
            p_values.append(mean_difference_test(ours.to_numpy(), theirs.to_numpy(), reps, seed)[1])
    return {cell: significance_marker(p) for cell, p in zip(cells, holm(p_values))}


def main_table(run: Run, returns: pd.DataFrame, benchmark: str, reps: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Rows = frameworks; columns = ARR % per ticker, Avg ARR %, SR, MDD %; each ``value [95 % CI]marker``."""
    means = seed_means(run)
    markers = arr_markers(run, returns, benchmark, reps, seed)
    periods = run.periods_per_year
    rows = {}
    for framework in run.frameworks:
        row = {}
        for ticker in run.tickers:
            ci = average_metric_cis(returns[framework][[ticker]], periods, reps, seed)["ARR"]
            marker = markers.get((framework, ticker), "")
            value = means.loc[(framework, ticker), "ARR"]
            row[f"{ticker} ARR %"] = format_ci(value, *ci, scale=100, digits=1, marker=marker)
        cis = average_metric_cis(returns[framework], periods, reps, seed)
        average = means.loc[(framework, AVERAGE_TICKER)]
        row["Avg ARR %"] = format_ci(average["ARR"], *cis["ARR"], scale=100, digits=1,
                                     marker=markers.get((framework, AVERAGE_TICKER), ""))
        row["SR"] = format_ci(average["SR"], *cis["SR"], digits=3)
        row["MDD %"] = format_ci(average["MDD"], *cis["MDD"], scale=100, digits=1)
        rows[framework] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("framework")


def _episode_activity(run: Run) -> pd.DataFrame:
    """Win rates, turnover and exposure of every episode, indexed by (framework, ticker, seed)."""
    trades = {key: group.sort_values("date", kind="stable") for key, group in run.trades.groupby(list(EPISODE_KEYS))}
    empty = run.trades.iloc[0:0]
    rows = {}
    for key, episode in run.equity.groupby(list(EPISODE_KEYS), sort=False):
        fills = trades.get(key, empty)
        equity = episode["equity"]
        rows[key] = {
            "closed trades": float((fills["side"] == "SELL").sum()),
            "win rate/trade %": trading.win_rate_trades(fills),
            "win rate/day %": trading.win_rate_days(equity.pct_change().to_numpy()),
            "turnover /yr": trading.turnover(fills, equity, run.periods_per_year),
            "exposure %": trading.exposure(episode["position"]),
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(list(EPISODE_KEYS))


ACTIVITY_FORMATS: dict[str, tuple[str, float, int]] = {
    "closed trades": ("closed trades", 1.0, 1), "win rate/trade %": ("win rate/trade %", 100.0, 1),
    "win rate/day %": ("win rate/day %", 100.0, 1), "exposure %": ("exposure %", 100.0, 1),
    "turnover /yr": ("turnover /yr", 1.0, 2),
}
"""Activity column -> (table heading, scale, decimals)."""


def activity_table(run: Run) -> pd.DataFrame:
    """Per framework, the mean over episodes of closed trades, win rates, exposure and turnover."""
    activity = _episode_activity(run).groupby(level="framework", sort=False).mean()
    return format_columns(activity.reindex(pd.Index(run.frameworks, name="framework")), ACTIVITY_FORMATS)


METRIC_FORMATS: dict[str, tuple[str, float, int]] = {
    "ARR": ("ARR %", 100.0, 1), "SR": ("SR", 1.0, 3), "SR_ann": ("SR_ann", 1.0, 2), "MDD": ("MDD %", 100.0, 1),
    "Calmar": ("Calmar", 1.0, 2), "Sortino": ("Sortino", 1.0, 2), "Vol": ("Vol %", 100.0, 1),
    "Trades": ("trades", 1.0, 1),
}
"""metrics.csv column -> (table heading, scale, decimals)."""


def metrics_table(run: Run) -> pd.DataFrame:
    """The ``ticker=AVG`` rows of ``metrics.csv`` averaged over seeds, every metric, formatted."""
    return format_columns(average_means(run).reindex(pd.Index(run.frameworks, name="framework")), METRIC_FORMATS)


def efficiency_numbers(run: Run) -> pd.DataFrame:
    """Per framework: decisions, and per decision LLM calls, prompt/completion tokens, wall s; tokens; Avg ARR."""
    columns = ["llm_calls", "prompt_tokens", "completion_tokens", "wall_s"]
    grouped = run.decisions.groupby("framework", sort=False)
    numbers = grouped[columns].mean()
    numbers.insert(0, "decisions", grouped.size())
    numbers["tokens"] = numbers["prompt_tokens"] + numbers["completion_tokens"]
    numbers["ARR"] = average_means(run)["ARR"]
    return numbers.reindex(run.frameworks)


EFFICIENCY_FORMATS: dict[str, tuple[str, float, int]] = {
    "decisions": ("decisions", 1.0, 0), "llm_calls": ("LLM calls/dec", 1.0, 2),
    "prompt_tokens": ("prompt tok/dec", 1.0, 0), "completion_tokens": ("completion tok/dec", 1.0, 0),
    "wall_s": ("wall ms/dec", 1000.0, 2), "relative_cost": ("rel. cost", 1.0, 2), "ARR": ("Avg ARR %", 100.0, 1),
}
"""efficiency_numbers column -> (table heading, scale, decimals)."""


def efficiency_table(run: Run) -> pd.DataFrame:
    """Cost per decision and ARR; relative cost = tokens per decision / the smallest non-zero one in the run."""
    numbers = efficiency_numbers(run)
    cheapest = numbers.loc[numbers["tokens"] > 0, "tokens"].min()
    numbers["relative_cost"] = numbers["tokens"] / cheapest if np.isfinite(cheapest) else np.nan
    return format_columns(numbers, EFFICIENCY_FORMATS).rename_axis("framework")


def regime_confusions(run: Run) -> dict[str, pd.DataFrame]:
    """Per framework, the regime x decision confusion matrix summed over tickers and seeds."""
    labels = pd.concat(
        {ticker: regime.regime_labels(bars.set_index("date")["close"])
         for ticker, bars in run.prices.groupby("ticker")},
        names=["ticker", "date"],
    )
    decisions = run.decisions.dropna(subset=["action"]).join(labels, on=["ticker", "date"])
    matrices = {}
    for framework in run.frameworks:
        chosen = decisions[decisions["framework"] == framework]
        matrices[framework] = regime.confusion_matrix(chosen["action"], chosen["regime"])
    return matrices


def regime_tables(run: Run) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(confusion matrices stacked by framework, per-framework labelled decisions / accuracy / macro-F1)."""
    matrices = regime_confusions(run)
    stacked = pd.concat(matrices, names=["framework", "regime"]).rename_axis(columns=None)
    scores = pd.DataFrame(
        {
            "labelled decisions": [str(int(m.to_numpy().sum())) for m in matrices.values()],
            "accuracy %": [format_value(regime.regime_accuracy(m), 100, 1) for m in matrices.values()],
            "macro-F1": [format_value(regime.macro_f1(m), digits=3) for m in matrices.values()],
        },
        index=pd.Index(list(matrices), name="framework"),
    )
    return stacked, scores


def seeds_table(run: Run, reps: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Frameworks with several seeds: mean, std, IQM and stratified-bootstrap CIs of ARR and SR (seeds x tickers)."""
    episodes = run.metrics[run.metrics["ticker"] != AVERAGE_TICKER]
    rows = {}
    for framework, group in episodes.groupby("framework", sort=False):
        if group["seed"].nunique() < 2:
            continue
        for metric, scale, digits in (("ARR", 100, 1), ("SR", 1, 3)):
            values = group.pivot(index="seed", columns="ticker", values=metric)
            summary = aggregate_seeds(values, reps, seed)
            rows[(framework, metric)] = {
                "seeds x tickers": f"{values.shape[0]} x {values.shape[1]}",
                "mean [CI]": format_ci(summary["mean"], summary["mean_low"], summary["mean_high"], scale, digits),
                "std": format_value(summary["std"], scale, digits),
                "IQM [CI]": format_ci(summary["iqm"], summary["iqm_low"], summary["iqm_high"], scale, digits),
            }
    if not rows:
        return pd.DataFrame(columns=["seeds x tickers", "mean [CI]", "std", "IQM [CI]"],
                            index=pd.MultiIndex.from_tuples([], names=["framework", "metric"]))
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["framework", "metric"])
