"""The report's tables, built from a loaded run: main, activity, metrics, efficiency, regime, seeds.

Point values come from ``metrics.csv`` (averaged over seeds); CIs come from the stationary
bootstrap of the episodes' daily returns (:mod:`metrics.bootstrap`), resampling days jointly
across every ticker and seed of a cell. A "mean" column is the plain mean over tickers of the
per-ticker values (the paper's "average"), not a value of the equal-weight portfolio the tests
use (that one is in the portfolio table). Cells are formatted strings (see :mod:`metrics.tables`);
a rate prints with its count and is suppressed below ``min_count``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.run_directory import Run
from harness.schema import EPISODE_KEYS
from market.regime import regime_labels
from metrics import regime, trading
from metrics.bootstrap import average_metric_cis
from metrics.episodes import AVERAGE_TICKER
from metrics.paired import holm, mean_difference_test
from metrics.returns import portfolio_returns
from metrics.seeds import aggregate_seeds
from metrics.tables import format_ci, format_columns, format_rate, format_value

MIN_COUNT = 5
"""Default fewest cases behind a printed rate (win rates, accuracies, agreement)."""


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


def return_markers(run: Run, returns: pd.DataFrame, benchmark: str) -> dict[tuple[str, str], str]:
    """Holm-adjusted markers of every (framework, ticker or AVG) cell vs the benchmark.

    Each cell's test is the paired test of the mean daily return difference between the
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
            p_values.append(mean_difference_test(ours.to_numpy(), theirs.to_numpy()).pvalue)
    return {cell: significance_marker(p) for cell, p in zip(cells, holm(p_values))}


def seed_spread(run: Run, framework: str, metric: str = "TR", scale: float = 100.0) -> str:
    """``min .. max (n seeds)`` of the mean-over-tickers ``metric`` of each seed; ``1 seed`` for one."""
    averages = run.metrics.query("framework == @framework and ticker == @AVERAGE_TICKER")[metric]
    if len(averages) < 2:
        return "1 seed"
    digits = 1 if scale == 100.0 else 2
    low, high = format_value(averages.min(), scale, digits), format_value(averages.max(), scale, digits)
    return f"{low} .. {high} ({len(averages)} seeds)"


def main_table(run: Run, returns: pd.DataFrame, benchmark: str, reps: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Rows = frameworks; per-ticker TR %, then means over tickers of TR %, ARR %, SR_ann, MDD % with CIs, seed range.

    Each cell is ``value [95 % CI]marker``; the marker is the Holm-adjusted test of the mean daily
    return against the benchmark on that ticker (on the equal-weight portfolio for the mean TR).
    """
    means = seed_means(run)
    markers = return_markers(run, returns, benchmark)
    periods = run.periods_per_year
    rows = {}
    for framework in run.frameworks:
        row = {}
        for ticker in run.tickers:
            ci = average_metric_cis(returns[framework][[ticker]], periods, reps, seed)["TR"]
            row[f"{ticker} TR %"] = format_ci(means.loc[(framework, ticker), "TR"], *ci, scale=100,
                                              marker=markers.get((framework, ticker), ""))
        cis = average_metric_cis(returns[framework], periods, reps, seed)
        average = means.loc[(framework, AVERAGE_TICKER)]
        row["mean TR %"] = format_ci(average["TR"], *cis["TR"], scale=100,
                                     marker=markers.get((framework, AVERAGE_TICKER), ""))
        row["mean ARR %"] = format_ci(average["ARR"], *cis["ARR"], scale=100)
        row["mean SR_ann"] = format_ci(average["SR_ann"], *cis["SR_ann"])
        row["mean MDD %"] = format_ci(average["MDD"], *cis["MDD"], scale=100)
        row["seed range of mean TR %"] = seed_spread(run, framework)
        rows[framework] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("framework")


def _episode_activity(run: Run) -> pd.DataFrame:
    """Counts behind the activity rates of every episode, and its turnover, indexed by (framework, ticker, seed)."""
    trades = {key: group.sort_values("date", kind="stable") for key, group in run.trades.groupby(list(EPISODE_KEYS))}
    empty = run.trades.iloc[0:0]
    rows = {}
    for key, episode in run.equity.groupby(list(EPISODE_KEYS), sort=False):
        fills = trades.get(key, empty)
        equity = episode["equity"]
        wins, closed = trading.winning_trades(fills)
        up, moved = trading.up_days(equity.pct_change().to_numpy())
        held, periods = trading.periods_held(episode["position"])
        rows[key] = {"wins": wins, "closed": closed, "up": up, "moved": moved, "held": held, "periods": periods,
                     "turnover": trading.turnover(fills, equity, run.periods_per_year)}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(list(EPISODE_KEYS))


def activity_table(run: Run, min_count: int = MIN_COUNT) -> pd.DataFrame:
    """Per framework, pooled over its episodes: closed trades, win rates and exposure with their counts, turnover."""
    episodes = _episode_activity(run)
    totals = episodes.groupby(level="framework", sort=False).sum().reindex(run.frameworks)
    turnover = episodes["turnover"].groupby(level="framework", sort=False).mean().reindex(run.frameworks)
    bar = run.bar_noun
    return pd.DataFrame(
        {
            "episodes": episodes.groupby(level="framework", sort=False).size().reindex(run.frameworks).map(str),
            "closed trades": totals["closed"].map(lambda v: f"{v:.0f}"),
            "win rate/trade %": [format_rate(r.wins, r.closed, min_count) for r in totals.itertuples()],
            f"win rate/{bar} %": [format_rate(r.up, r.moved, min_count) for r in totals.itertuples()],
            f"exposure % of {bar}s": [format_rate(r.held, r.periods, min_count) for r in totals.itertuples()],
            "turnover /yr": turnover.map(lambda v: format_value(v, digits=2)),
        },
        index=pd.Index(run.frameworks, name="framework"),
    )


METRIC_FORMATS: dict[str, tuple[str, float, int]] = {
    "TR": ("mean TR %", 100.0, 1), "ARR": ("mean ARR %", 100.0, 1), "SR_day": ("mean SR_day", 1.0, 3),
    "SR_ann": ("mean SR_ann", 1.0, 2), "MDD": ("mean MDD %", 100.0, 1), "Calmar": ("mean Calmar", 1.0, 2),
    "Sortino": ("mean Sortino", 1.0, 2), "Vol": ("mean Vol %", 100.0, 1), "Trades": ("mean trades", 1.0, 1),
    "Turnover": ("mean turnover /yr", 1.0, 2), "HHI": ("mean HHI", 1.0, 3),
    "Liquidations": ("mean liquidations", 1.0, 1), "Funding": ("mean funding paid %", 100.0, 2),
    "MaxLeverage": ("mean max leverage", 1.0, 2),
}
"""metrics.csv column -> (table heading, scale, decimals); the task metrics (metrics.episodes) appear
only in runs of the tasks that record them."""


def metrics_table(run: Run) -> pd.DataFrame:
    """The ``ticker=AVG`` rows of ``metrics.csv`` (means over tickers) averaged over seeds, every metric, formatted."""
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


def labelled_decisions(run: Run) -> pd.DataFrame:
    """Decisions with an action, each with the regime label of its (ticker, date) (NaN without a full horizon)."""
    labels = pd.concat(
        {ticker: regime_labels(bars.set_index("date")["close"])
         for ticker, bars in run.prices.groupby("ticker")},
        names=["ticker", "date"],
    )
    return run.decisions.dropna(subset=["action"]).join(labels, on=["ticker", "date"])


def regime_confusions(run: Run) -> dict[str, pd.DataFrame]:
    """Per framework, the regime x decision confusion matrix summed over tickers and seeds."""
    decisions = labelled_decisions(run)
    matrices = {}
    for framework in run.frameworks:
        chosen = decisions[decisions["framework"] == framework]
        matrices[framework] = regime.confusion_matrix(chosen["action"], chosen["regime"])
    return matrices


def regime_tables(run: Run, min_count: int = MIN_COUNT) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(confusion matrices stacked by framework, per-framework accuracy with its count and macro-F1)."""
    matrices = regime_confusions(run)
    stacked = pd.concat(matrices, names=["framework", "regime"]).rename_axis(columns=None)
    totals = [int(m.to_numpy().sum()) for m in matrices.values()]
    scores = pd.DataFrame(
        {
            "accuracy %": [format_rate(regime.regime_hits(m), n, min_count) for m, n in zip(matrices.values(), totals)],
            "macro-F1": [format_value(regime.macro_f1(m) if n >= min_count else np.nan, digits=3)
                         for m, n in zip(matrices.values(), totals)],
        },
        index=pd.Index(list(matrices), name="framework"),
    )
    return stacked, scores


def seeds_table(run: Run, reps: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Frameworks with several seeds: mean, std, IQM and stratified-bootstrap CIs of TR and SR_ann (seeds x tickers)."""
    episodes = run.metrics[run.metrics["ticker"] != AVERAGE_TICKER]
    rows = {}
    for framework, group in episodes.groupby("framework", sort=False):
        if group["seed"].nunique() < 2:
            continue
        for metric, label, scale in (("TR", "TR %", 100), ("SR_ann", "SR_ann", 1)):
            values = group.pivot(index="seed", columns="ticker", values=metric)
            summary = aggregate_seeds(values, reps, seed)
            rows[(framework, label)] = {
                "seeds x tickers": f"{values.shape[0]} x {values.shape[1]}",
                "mean [CI]": format_ci(summary["mean"], summary["mean_low"], summary["mean_high"], scale),
                "std": format_value(summary["std"], scale, 2),
                "IQM [CI]": format_ci(summary["iqm"], summary["iqm_low"], summary["iqm_high"], scale),
            }
    if not rows:
        return pd.DataFrame(columns=["seeds x tickers", "mean [CI]", "std", "IQM [CI]"],
                            index=pd.MultiIndex.from_tuples([], names=["framework", "metric"]))
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["framework", "metric"])
