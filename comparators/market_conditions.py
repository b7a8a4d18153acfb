"""Market conditions: chunks of bars labelled by trend and volatility, with train-split quantile bins.

MacroHFT's decomposition (`preprocess/decomposition.py` of the original): the bars are cut into
chunks of `chunk_bars` consecutive bars (4,320 minutes in the original); per chunk

    trend      β = the least-squares slope over k = 0 .. n−1 of y = filtfilt(b, a, log close),
               (b, a) a Butterworth low-pass filter (order 1, cutoff 0.05 of Nyquist), per bar
    volatility σ = std(close_k / close_{k−1} − 1), ddof = 1, per bar

and each is binned by quantiles of the TRAINING chunks only: the original cuts at the 5, 35, 65
and 95 % quantiles into five bins, trains sub-agents on the middle three of the training chunks
and merges the outer bins of validation and test chunks into their neighbours. So the label is
set by the inner edges (35 %, 65 %: three labels 0 = low .. 2 = high) and the 5 % tails only mark
training chunks as outliers (`core` is False for them). Other inner edges give other label counts
(`(0.5,)`: two labels). The original takes the slope of the raw close; here of the log close, so
that the label does not depend on the price level.

The hyper-agent's context is the same two statistics over the trailing `window` bars at each
bar (the original's `slope_360`, `vol_360`), causal: the value at bar t reads bars t−window+1 .. t.
filtfilt and the regression slope are linear in the window, so the rolling slope is one dot
product per bar with fixed weights (`slope_weights`), equal to filtering each window anew.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.lib.stride_tricks import sliding_window_view
from scipy.signal import butter, filtfilt

from core.errors import ConfigError

BUTTER_ORDER = 1
BUTTER_CUTOFF = 0.05
"""The original's filter: `butter(N=1, Wn=0.05, btype="low")`."""


def _filter(order: int, cutoff: float) -> tuple[np.ndarray, np.ndarray]:
    if not 0.0 < cutoff < 1.0:
        raise ConfigError(f"market_conditions: Butterworth cutoff {cutoff} must be in (0, 1) of Nyquist")
    return butter(order, cutoff, btype="low")


def _regression_slope(values: np.ndarray) -> float:
    k = np.arange(len(values), dtype=np.float64)
    centred = k - k.mean()
    return float(centred @ (values - values.mean()) / (centred @ centred))


def butterworth_slope(close: np.ndarray, order: int = BUTTER_ORDER, cutoff: float = BUTTER_CUTOFF) -> float:
    """β of the module docstring for one chunk of closes (log price per bar)."""
    close = np.asarray(close, dtype=np.float64)
    b, a = _filter(order, cutoff)
    if len(close) <= 3 * max(len(a), len(b)):
        raise ConfigError(f"market_conditions: a chunk of {len(close)} bars is too short for the filter")
    return _regression_slope(filtfilt(b, a, np.log(close)))


def slope_weights(window: int, order: int = BUTTER_ORDER, cutoff: float = BUTTER_CUTOFF) -> np.ndarray:
    """w (window,) with β(window of log closes y) = w · y: filtfilt applied to the unit vectors,
    then the regression slope's weights c_k = (k − k̄) / Σ(k − k̄)²."""
    b, a = _filter(order, cutoff)
    if window <= 3 * max(len(a), len(b)):
        raise ConfigError(f"market_conditions: window {window} is too short for the filter")
    filtered = filtfilt(b, a, np.eye(window), axis=0)
    k = np.arange(window, dtype=np.float64)
    centred = (k - k.mean()) / ((k - k.mean()) @ (k - k.mean()))
    return centred @ filtered


def rolling_slope(close: pd.Series, window: int, order: int = BUTTER_ORDER, cutoff: float = BUTTER_CUTOFF) -> pd.Series:
    """Causal β over the trailing `window` bars at each bar; NaN for the first window−1 bars."""
    logs = np.log(close.to_numpy(dtype=np.float64))
    out = np.full(len(logs), np.nan)
    if len(logs) >= window:
        out[window - 1:] = sliding_window_view(logs, window) @ slope_weights(window, order, cutoff)
    return pd.Series(out, index=close.index, name=f"slope_{window}")


def rolling_volatility(close: pd.Series, window: int) -> pd.Series:
    """Causal σ over the trailing `window` bars (returns of those bars, ddof = 1)."""
    return close.pct_change().rolling(window).std().rename(f"vol_{window}")


def chunk_statistics(close: pd.Series, chunk_bars: int) -> pd.DataFrame:
    """One row per whole chunk of `chunk_bars` bars of `close` (a trailing remainder is dropped):
    first and last (positions in `close`), start and end (stamps), slope β and volatility σ."""
    if chunk_bars < 8:
        raise ConfigError(f"market_conditions: chunk_bars {chunk_bars} is below 8")
    values = close.to_numpy(dtype=np.float64)
    rows = []
    for first in range(0, len(values) - chunk_bars + 1, chunk_bars):
        chunk = values[first:first + chunk_bars]
        rows.append({"first": first, "last": first + chunk_bars - 1, "start": close.index[first],
                     "end": close.index[first + chunk_bars - 1], "slope": butterworth_slope(chunk),
                     "volatility": float(np.std(chunk[1:] / chunk[:-1] - 1.0, ddof=1))})
    return pd.DataFrame(rows, columns=["first", "last", "start", "end", "slope", "volatility"])


@dataclass(frozen=True)
class QuantileBins:
    """Edges fitted on training values: `inner` cut the labels 0 .. len(inner), `low` and `high`
    (the `tail` quantiles) mark training outliers."""

    inner: tuple[float, ...]
    low: float
    high: float

    @classmethod
    def fit(cls, train: np.ndarray, inner: tuple[float, ...] = (0.35, 0.65), tail: float = 0.05) -> QuantileBins:
        """Quantiles of the training values (module docstring)."""
        train = np.asarray(train, dtype=np.float64)
        if len(train) < 2 or not np.all(np.isfinite(train)):
            raise ConfigError(f"market_conditions: needs at least 2 finite training values, got {len(train)}")
        if not inner or list(inner) != sorted(inner) or not 0.0 < min(inner) <= max(inner) < 1.0:
            raise ConfigError(f"market_conditions: inner quantiles {list(inner)} must rise within (0, 1)")
        if not 0.0 <= tail < min(inner):
            raise ConfigError(f"market_conditions: tail {tail} must be in [0, {min(inner)})")
        edges = tuple(float(q) for q in np.quantile(train, inner))
        return cls(inner=edges, low=float(np.quantile(train, tail)), high=float(np.quantile(train, 1.0 - tail)))

    @property
    def labels(self) -> int:
        return len(self.inner) + 1

    def label(self, values: np.ndarray) -> np.ndarray:
        """0 .. len(inner): the number of inner edges below each value (a value on an edge goes up)."""
        return np.searchsorted(np.asarray(self.inner), np.asarray(values, dtype=np.float64), side="right")

    def core(self, values: np.ndarray) -> np.ndarray:
        """True where a value lies within [low, high] (not a training outlier)."""
        values = np.asarray(values, dtype=np.float64)
        return (values >= self.low) & (values <= self.high)


@dataclass(frozen=True)
class MarketConditions:
    """Trend and volatility bins of one training split."""

    trend: QuantileBins
    volatility: QuantileBins

    @classmethod
    def fit(cls, train_chunks: pd.DataFrame, trend_inner: tuple[float, ...] = (0.35, 0.65),
            volatility_inner: tuple[float, ...] = (0.35, 0.65), tail: float = 0.05) -> MarketConditions:
        """Bins from the training chunks' `slope` and `volatility` (`chunk_statistics`)."""
        return cls(trend=QuantileBins.fit(train_chunks["slope"].to_numpy(), trend_inner, tail),
                   volatility=QuantileBins.fit(train_chunks["volatility"].to_numpy(), volatility_inner, tail))

    def label(self, chunks: pd.DataFrame) -> pd.DataFrame:
        """`chunks` with `trend` and `vol` labels and `core` (neither statistic in a training tail)."""
        slope, vol = chunks["slope"].to_numpy(), chunks["volatility"].to_numpy()
        return chunks.assign(trend=self.trend.label(slope), vol=self.volatility.label(vol),
                             core=self.trend.core(slope) & self.volatility.core(vol))
