"""The per-episode metrics table of a run (`metrics.csv`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from harness.schema import EPISODE_KEYS
from metrics.performance import METRIC_KEYS, average_row, metrics_row
from metrics.trading import turnover

AVERAGE_TICKER = "AVG"

PORTFOLIO_KEYS: tuple[str, ...] = ("Turnover", "HHI")
"""Columns after METRIC_KEYS for portfolio episodes (their equity table has `hhi`)."""

FUTURES_KEYS: tuple[str, ...] = ("Turnover", "Liquidations", "Funding", "MaxLeverage")
"""Columns after METRIC_KEYS for futures episodes (their equity table has `funding`)."""


def task_keys(equity: pd.DataFrame) -> tuple[str, ...]:
    """The task's own metric columns, told by the equity table's columns; () for the trading task."""
    if "hhi" in equity.columns:
        return PORTFOLIO_KEYS
    if "funding" in equity.columns:
        return FUTURES_KEYS
    return ()


def task_metrics(curve: pd.DataFrame, trades: pd.DataFrame, keys: tuple[str, ...], periods_per_year: float) -> dict:
    """The task metrics of one episode (`curve`: its equity rows in date order; `trades`: its fills).

    Turnover: annualised one-way turnover, (Σ|notional| / 2) / mean(V) · P / T (`metrics.trading.turnover`;
    a liquidation counts as traded notional). HHI: the mean over bars with holdings of the
    holdings' Herfindahl index Σ_i (|v_i| / Σ_j |v_j|)² (1/N = equal weights, 1 = one instrument).
    Liquidations: the number of LIQUIDATION fills. Funding: Σ funding paid / V_0 (a fraction of the
    initial equity; > 0 = paid, < 0 = received). MaxLeverage: max over bars of |position notional| / equity.
    """
    row = {}
    if "Turnover" in keys:
        row["Turnover"] = turnover(trades, curve["equity"], periods_per_year)
    if "HHI" in keys:
        held = curve["hhi"].dropna()
        row["HHI"] = float(held.mean()) if len(held) else math.nan
    if "Liquidations" in keys:
        row["Liquidations"] = int((trades["side"] == "LIQUIDATION").sum()) if len(trades) else 0
    if "Funding" in keys:
        row["Funding"] = float(curve["funding"].sum() / curve["equity"].iloc[0])
    if "MaxLeverage" in keys:
        row["MaxLeverage"] = float(np.nanmax(curve["leverage"].to_numpy(dtype=float))) if len(curve) else math.nan
    return row


def episode_metrics(equity: pd.DataFrame, trades: pd.DataFrame, periods_per_year: float) -> pd.DataFrame:
    """One row per framework × ticker × seed, plus a `ticker=AVG` row per framework × seed.

    `equity` and `trades` are in the long formats of equity.parquet and trades.csv.
    Row order: frameworks and seeds as first seen, tickers sorted, AVG last.
    """
    fills = trades.groupby(list(EPISODE_KEYS)).size()
    keys = task_keys(equity)
    by_episode = dict(iter(trades.groupby(list(EPISODE_KEYS)))) if keys else {}
    rows = []
    for (framework, seed), group in equity.groupby(["framework", "seed"], sort=False):
        per_ticker = []
        for ticker, curve in group.groupby("ticker"):
            n_fills = int(fills.get((framework, ticker, seed), 0))
            row = metrics_row(curve.set_index("date")["equity"], n_fills, periods_per_year)
            if keys:
                own = by_episode.get((framework, ticker, seed), trades.iloc[:0])
                row |= task_metrics(curve, own, keys, periods_per_year)
            per_ticker.append(row)
            rows.append({"framework": framework, "ticker": ticker, "seed": seed, **row})
        rows.append({"framework": framework, "ticker": AVERAGE_TICKER, "seed": seed, **average_row(per_ticker)})
    return pd.DataFrame(rows, columns=[*EPISODE_KEYS, *METRIC_KEYS, *keys])

