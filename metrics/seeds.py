"""Aggregating a metric over the seeds of a stochastic framework (and over tickers).

``values`` is a table with one row per seed and one column per ticker. Reported:
mean and std (ddof=1) over all seed x ticker cells; IQM, the interquartile mean (mean of the
middle 50 % of the cells, ``scipy.stats.trim_mean(..., 0.25)``, Agarwal et al. 2021); and a
percentile bootstrap CI of the mean and of the IQM, resampling seeds with replacement
independently within each ticker (stratified bootstrap, as in ``rliable``). With one seed the
CIs collapse to the point estimate: seeds are the only randomness resampled here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import trim_mean


def iqm(values: np.ndarray, axis: int | None = None) -> float | np.ndarray:
    """Interquartile mean (the mean after trimming 25 % from each end), of all cells or along ``axis``."""
    return trim_mean(np.asarray(values, dtype=float), 0.25, axis=axis)


def stratified_seed_draws(values: pd.DataFrame, reps: int = 2000, seed: int = 0) -> np.ndarray:
    """Array (reps, cells): ``reps`` resamples of the table, seeds (rows) drawn with replacement within each ticker."""
    cells = values.to_numpy(dtype=float)
    n_seeds, n_tickers = cells.shape
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, n_seeds, size=(reps, n_seeds, n_tickers))
    return np.take_along_axis(cells[None, :, :], rows, axis=1).reshape(reps, -1)


def percentile_ci(estimates: np.ndarray, size: float = 0.95) -> tuple[float, float]:
    """The central ``size`` percentile interval of bootstrap ``estimates``."""
    tail = (1.0 - size) / 2.0 * 100.0
    low, high = np.percentile(estimates, [tail, 100.0 - tail])
    return float(low), float(high)


def aggregate_seeds(values: pd.DataFrame, reps: int = 2000, seed: int = 0) -> dict[str, float]:
    """{n, mean, std, iqm, mean_low, mean_high, iqm_low, iqm_high} over a seeds x tickers table.

    The CIs of the mean and of the IQM come from the same stratified resamples.
    """
    cells = values.to_numpy(dtype=float).ravel()
    draws = stratified_seed_draws(values, reps, seed)
    mean_low, mean_high = percentile_ci(np.mean(draws, axis=1))
    iqm_low, iqm_high = percentile_ci(iqm(draws, axis=1))
    return {
        "n": float(len(cells)),
        "mean": float(np.mean(cells)),
        "std": float(np.std(cells, ddof=1)) if len(cells) > 1 else float("nan"),
        "iqm": float(iqm(cells)),
        "mean_low": mean_low,
        "mean_high": mean_high,
        "iqm_low": iqm_low,
        "iqm_high": iqm_high,
    }
