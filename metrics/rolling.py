"""Rolling windows re-simulated from journaled decisions: the AlphaQuanter paper's Table 12.

Windows are [s_k, s_k + `months` − 1 day] with s_k = start + k · `step_days` days, k = 0, 1, ...,
as long as the window ends on or before `end`: 3-month windows stepped 7 days through the test
period by default. In each window every episode (framework, ticker, seed) is re-simulated by
`harness.execution.simulate` from the initial cash, with the decisions journaled for the
window's bars — no model is run again — and scored by `metrics_row` (ARR annualised over the
window's bars, SR per bar and annualised, MDD within the window, ...). `rolling_table`
averages each metric over windows (the paper's "averages over windows"), and adds a
`ticker=AVG` row per framework and seed: the mean over tickers, as in `metrics.csv`.

A decision that depends only on its point-in-time view (every stateless framework) is the
same in a window as in the full run, so a re-simulated window equals a run on that window.
A stateful framework (one shown its portfolio, such as the FinRL agents) decided with the
portfolio of the full run; its windows replay the same decisions from a fresh portfolio.

Inputs are the run directory's tables: decisions in the `decisions.parquet` layout
(`harness.run_directory.decision_row` of each `JournalEntry`: date, framework, ticker, seed, action,
target) and bars in the `prices.parquet` layout (date, ticker, open, close, ...).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from core.errors import DataError
from harness.execution import EpisodeResult, ExecutionConfig, simulate
from harness.schema import EPISODE_KEYS
from market.decision import Action, Decision
from market.splits import Window
from metrics.episodes import AVERAGE_TICKER
from metrics.performance import METRIC_KEYS, average_row, metrics_row

WINDOW_MONTHS = 3
STEP_DAYS = 7
WINDOW_KEYS: tuple[str, ...] = ("window_start", "window_end")


def rolling_windows(start: str | pd.Timestamp, end: str | pd.Timestamp, months: int = WINDOW_MONTHS,
                    step_days: int = STEP_DAYS, days: int | None = None) -> list[Window]:
    """Windows [s, s + months − 1 day], s = start + k·step_days, that end on or before `end`;
    with `days`, windows [s, s + days − 1 day] instead (for test windows shorter than a few months)."""
    start, end = pd.Timestamp(start), pd.Timestamp(end)
    length = pd.Timedelta(days=days) if days else pd.DateOffset(months=months)
    windows = []
    first = start
    while (last := first + length - pd.Timedelta(days=1)) <= end:
        windows.append(Window(start=first, end=last))
        first += pd.Timedelta(days=step_days)
    if not windows:
        raise ValueError(f"{start.date()} .. {end.date()} is shorter than one "
                         f"{f'{days}-day' if days else f'{months}-month'} window")
    return windows


def bars_by_ticker(prices: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The `prices.parquet` long table as one date-indexed bar frame per ticker."""
    return {ticker: frame.drop(columns="ticker").set_index("date").sort_index()
            for ticker, frame in prices.groupby("ticker")}


def journaled_decision(row: Mapping) -> Decision:
    """The executable part of a decision row: its action, or its target when it has no action."""
    action = row["action"]
    if isinstance(action, str):
        return Decision(action=Action(action))
    target = row.get("target")
    if target is None or (isinstance(target, float) and math.isnan(target)):
        raise DataError(f"decision of {row['framework']} on {row['ticker']} {row['date']} has neither action nor target")
    return Decision(target=float(target))


def replay_window(bars: pd.DataFrame, decisions: pd.Series, window: Window,
                  execution: ExecutionConfig) -> EpisodeResult:
    """Simulate the bars of `window` with `decisions` (a Series of `Decision`s by date) from the initial cash."""
    days = bars.loc[window.start:window.end]
    if days.empty:
        raise DataError(f"no bars between {window.start.date()} and {window.end.date()}")
    missing = days.index.difference(decisions.index)
    if len(missing):
        raise DataError(f"no journaled decision for {len(missing)} bar(s) of the window from "
                        f"{window.start.date()}, first {missing[0].date()}")
    return simulate(days, list(decisions.loc[days.index]), execution)


def window_metrics(decisions: pd.DataFrame, bars: Mapping[str, pd.DataFrame], windows: list[Window],
                   execution: ExecutionConfig, periods_per_year: float = 252.0) -> pd.DataFrame:
    """One row per episode × window: framework, ticker, seed, window_start, window_end, then `METRIC_KEYS`."""
    rows = []
    for (framework, ticker, seed), episode in decisions.groupby(list(EPISODE_KEYS), sort=False):
        if ticker not in bars:
            raise DataError(f"no bars of {ticker} to re-simulate {framework}")
        by_date = pd.Series([journaled_decision(row) for row in episode.to_dict("records")],
                            index=pd.DatetimeIndex(episode["date"]))
        for window in windows:
            try:
                result = replay_window(bars[ticker], by_date, window, execution)
            except DataError as error:
                raise DataError(f"{framework} {ticker} seed {seed}: {error}") from None
            row = metrics_row(result.equity["equity"], len(result.trades), periods_per_year)
            rows.append({"framework": framework, "ticker": ticker, "seed": seed,
                         "window_start": window.start, "window_end": window.end, **row})
    return pd.DataFrame(rows, columns=[*EPISODE_KEYS, *WINDOW_KEYS, *METRIC_KEYS])


def rolling_table(per_window: pd.DataFrame) -> pd.DataFrame:
    """Each metric averaged over windows per episode, plus a `ticker=AVG` row (mean over tickers) per framework × seed.

    Columns: framework, ticker, seed, `METRIC_KEYS`, windows (how many were averaged), in the
    layout of `metrics.csv` so that its tables apply unchanged.
    """
    keys = list(EPISODE_KEYS)
    grouped = per_window.groupby(keys, sort=False)
    means = grouped[list(METRIC_KEYS)].mean().join(grouped.size().rename("windows")).reset_index()
    rows = []
    for (framework, seed), group in means.groupby(["framework", "seed"], sort=False):
        rows.extend(group.to_dict("records"))
        average = average_row(group[[*METRIC_KEYS, "windows"]].to_dict("records"))
        rows.append({"framework": framework, "ticker": AVERAGE_TICKER, "seed": seed, **average})
    return pd.DataFrame(rows, columns=[*keys, *METRIC_KEYS, "windows"])
