"""The formatted tables of :mod:`metrics.significance`: portfolio, comparisons, seed comparisons.

Differences of mean daily returns print in basis points per day with their 95 % CI (EWC t
interval), p-values raw and Holm-adjusted with three decimals, and the minimum detectable
effect (MDE: the true difference the test would find with 80 % power at 5 %). On bars other
than days the headings say "bars" and "bp/bar" (``bar``: `Significance.bar`).
"""

from __future__ import annotations

import pandas as pd

from metrics.significance import Significance
from metrics.tables import format_ci, format_columns

BASIS_POINTS = 1e4

def portfolio_formats(bar: str = "day") -> dict[str, tuple[str, float, int]]:
    """Portfolio column -> (table heading, scale, decimals)."""
    return {
        "days": (f"{bar}s", 1.0, 0), "mean": (f"mean bp/{bar}", BASIS_POINTS, 2), "TR": ("TR %", 100.0, 1),
        "SR_day": ("SR_day", 1.0, 3), "SR_ann": ("SR_ann", 1.0, 2), "PSR": ("PSR", 1.0, 3), "DSR": ("DSR", 1.0, 3),
        "configurations": ("DSR configs", 1.0, 0), "pvalue": ("MCS p", 1.0, 3),
    }


def comparison_formats(bar: str = "day") -> dict[str, tuple[str, float, int]]:
    """Comparison column -> (table heading, scale, decimals); the difference and its CI are formatted apart."""
    return {
        "p_mean": ("p", 1.0, 3), "p_mean_holm": ("p Holm", 1.0, 3), "mde_mean": (f"MDE bp/{bar}", BASIS_POINTS, 1),
        "dsharpe": ("d SR_day", 1.0, 3), "p_sharpe": ("p SR", 1.0, 3), "p_sharpe_holm": ("p SR Holm", 1.0, 3),
    }


def difference_cells(rows: pd.DataFrame) -> pd.Series:
    """``d mean [95 % CI]`` in bp/day of every row with ``dmean``, ``dmean_low`` and ``dmean_high``."""
    return pd.Series(
        [format_ci(r.dmean, r.dmean_low, r.dmean_high, BASIS_POINTS) for r in rows.itertuples()], index=rows.index,
        dtype=object,
    )


def comparison_columns(rows: pd.DataFrame, bar: str = "day") -> pd.DataFrame:
    """Days (bars), the difference with its CI, p-values, MDE and the Sharpe test of paired-test rows, formatted."""
    formatted = format_columns(rows, comparison_formats(bar))
    formatted.insert(0, f"d mean bp/{bar} [95 % CI]", difference_cells(rows))
    formatted.insert(0, f"{bar}s", rows["days"].map(lambda v: f"{v:.0f}"))
    return formatted


def portfolio_table(result: Significance) -> pd.DataFrame:
    """Per framework: the portfolio's days, mean, TR, SR_day, SR_ann, PSR, DSR and its N, MCS p and membership."""
    table = format_columns(result.portfolio, portfolio_formats(result.bar))
    if "included" in result.portfolio:
        table["in MCS"] = result.portfolio["included"].map(lambda v: "yes" if v else "no")
    return table


def comparisons_table(result: Significance) -> pd.DataFrame:
    """Rows (vs reference, framework): the paired tests of :class:`Significance`, formatted."""
    if result.comparisons.empty:
        return pd.DataFrame()
    table = comparison_columns(result.comparisons, result.bar)
    return table.rename(index=lambda name: f"vs {name}", level="against")


def seed_comparisons_table(result: Significance) -> pd.DataFrame:
    """Rows (framework, seed): that seed's TR and SR_day and its paired tests vs the benchmark (Holm over seeds)."""
    rows = result.seed_comparisons
    if rows.empty:
        return pd.DataFrame()
    numbers = format_columns(rows, {"TR": ("TR %", 100.0, 1), "SR_day": ("SR_day", 1.0, 3)})
    return numbers.join(comparison_columns(rows, result.bar).drop(columns=[f"{result.bar}s"]))
