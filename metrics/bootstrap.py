"""Stationary-bootstrap confidence intervals for TR, ARR, SR_day, SR_ann and MDD, per episode and across tickers.

Daily returns are autocorrelated and heavy-tailed, so CIs come from the stationary bootstrap
of Politis & Romano (1994) (``arch.bootstrap.StationaryBootstrap``): blocks of geometric
length with mean b, b chosen by the Politis & White (2004, corrected 2009) rule
(``arch.bootstrap.optimal_block_length``). Intervals are percentile intervals at level
``size`` (95 % by default); every bootstrap is seeded, so a report is reproducible.

For the cross-ticker average the days are resampled jointly: the panel has one row per date
and one column per ticker, each bootstrap draw takes whole rows, so the correlation between
tickers on the same day is kept and the CI of "average ARR" is not too narrow. The average is
the plain mean over tickers of each ticker's metric (the paper's "average"), not the metric of
their equal-weight portfolio. SR_ann = SR_day sqrt(P), so its interval is SR_day's scaled.

The MDD interval is indicative only: resampling blocks breaks the long paths a drawdown is
made of, so its bootstrap distribution is biased towards smaller drawdowns.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from arch.bootstrap import StationaryBootstrap, optimal_block_length

from metrics.performance import (
    annual_return_columns,
    max_drawdown_columns,
    sharpe_ratio_columns,
    total_return_columns,
)

CI_METRICS: tuple[str, ...] = ("TR", "ARR", "SR_day", "SR_ann", "MDD")


def column_block_length(column: np.ndarray) -> float:
    """arch's optimal stationary-bootstrap block length of one series; NaN where it is undefined.

    On a short series that is constant over a lagged stretch (a position held flat for days)
    arch divides by a zero variance; that length is undefined, not a warning to show.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(optimal_block_length(column).loc[0, "stationary"])


def block_length(data: np.ndarray) -> float:
    """Mean optimal stationary-bootstrap block length over the columns of ``data`` (NaNs dropped), at least 1."""
    frame = pd.DataFrame(np.asarray(data, dtype=float))
    lengths = [
        column_block_length(column.dropna().to_numpy())
        for _, column in frame.items()
        if column.dropna().nunique() > 1 and column.count() > 8
    ]
    finite = [length for length in lengths if np.isfinite(length)]
    return max(1.0, float(np.mean(finite))) if finite else 1.0


def replication_indices(data: np.ndarray, reps: int = 1000, seed: int = 0) -> np.ndarray:
    """Row indices (reps, T) of ``reps`` stationary-bootstrap replications of ``data`` (block length: block_length).

    They are the draws ``StationaryBootstrap(...).conf_int`` or ``.apply`` would make with this
    seed; taking them at once lets a statistic be computed on all replications together.
    """
    bootstrap = StationaryBootstrap(block_length(data), data, seed=seed)
    return np.array([bootstrap.update_indices() for _ in range(reps)])


REPLICATION_CHUNK = 2**22
"""Most return values resampled at once (replications x days x columns): bounds the memory of long runs."""


def _panel_metric_means(panels: np.ndarray, periods_per_year: float) -> np.ndarray:
    """Array (5, n): mean over columns (NaN skipped) of the CI_METRICS of each of ``panels`` (n, days, columns)."""
    count, days, columns = panels.shape
    side_by_side = panels.transpose(1, 0, 2).reshape(days, count * columns)
    sharpe = sharpe_ratio_columns(side_by_side)
    per_column = np.vstack(
        [
            total_return_columns(side_by_side),
            annual_return_columns(side_by_side, periods_per_year),
            sharpe,
            sharpe * math.sqrt(periods_per_year),
            max_drawdown_columns(side_by_side),
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a panel where a metric is NaN in every column
        return np.nanmean(per_column.reshape(len(CI_METRICS), count, columns), axis=2)


def bootstrap_ci(
    data: np.ndarray, periods_per_year: float = 252.0, reps: int = 1000, seed: int = 0, size: float = 0.95
) -> np.ndarray:
    """Percentile stationary-bootstrap CIs of the cross-column means of CI_METRICS: array (2, 5) of lower/upper bounds.

    Rows of ``data`` (days) are resampled in blocks; columns (tickers) move together. The
    replications and percentiles are those of ``StationaryBootstrap.conf_int``, but the
    metrics are computed on all replications together rather than one Python call each.
    """
    values = np.asarray(data, dtype=float)
    indices = replication_indices(values, reps, seed)
    chunks = np.array_split(indices, max(1, math.ceil(values.size * reps / REPLICATION_CHUNK)))
    estimates = np.hstack([_panel_metric_means(values[chunk], periods_per_year) for chunk in chunks])
    alpha = (1.0 - size) / 2.0
    return np.percentile(estimates, [100 * alpha, 100 * (1.0 - alpha)], axis=1)


def metric_cis(
    returns: np.ndarray, periods_per_year: float = 252.0, reps: int = 1000, seed: int = 0, size: float = 0.95
) -> dict[str, tuple[float, float]]:
    """CIs of the CI_METRICS of one return series: {metric: (low, high)}."""
    panel = pd.DataFrame({"returns": np.asarray(returns, dtype=float)})
    return average_metric_cis(panel, periods_per_year, reps, seed, size)


def average_metric_cis(
    panel: pd.DataFrame, periods_per_year: float = 252.0, reps: int = 1000, seed: int = 0, size: float = 0.95
) -> dict[str, tuple[float, float]]:
    """CIs of the cross-ticker means of the CI_METRICS; ``panel`` = daily returns, rows dates, columns tickers."""
    bounds = bootstrap_ci(panel.to_numpy(dtype=float), periods_per_year, reps, seed, size)
    return {name: (float(bounds[0, i]), float(bounds[1, i])) for i, name in enumerate(CI_METRICS)}
