"""The per-episode metrics table of a run (`metrics.csv`)."""

from __future__ import annotations

import pandas as pd

from harness.schema import EPISODE_KEYS
from metrics.performance import METRIC_KEYS, average_row, metrics_row

AVERAGE_TICKER = "AVG"


def episode_metrics(equity: pd.DataFrame, trades: pd.DataFrame, periods_per_year: float) -> pd.DataFrame:
    """One row per framework × ticker × seed, plus a `ticker=AVG` row per framework × seed.

    `equity` and `trades` are in the long formats of equity.parquet and trades.csv.
    Row order: frameworks and seeds as first seen, tickers sorted, AVG last.
    """
    fills = trades.groupby(list(EPISODE_KEYS)).size()
    rows = []
    for (framework, seed), group in equity.groupby(["framework", "seed"], sort=False):
        per_ticker = []
        for ticker, curve in group.groupby("ticker"):
            n_fills = int(fills.get((framework, ticker, seed), 0))
            row = metrics_row(curve.set_index("date")["equity"], n_fills, periods_per_year)
            per_ticker.append(row)
            rows.append({"framework": framework, "ticker": ticker, "seed": seed, **row})
        rows.append({"framework": framework, "ticker": AVERAGE_TICKER, "seed": seed, **average_row(per_ticker)})
    return pd.DataFrame(rows, columns=[*EPISODE_KEYS, *METRIC_KEYS])

