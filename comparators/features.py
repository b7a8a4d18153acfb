"""Point-in-time feature windows per instrument for the learned comparators.

Per bar t of one instrument (open o, high h, low l, close c, volume v), an Alpha158-style subset
(the formulas of Qlib's Alpha158 handler; `Ref(x, d)` = x of bar t−d, means and stds over the d
bars ending at t, std with ddof=1):

| name | value on bar t |
|---|---|
| kmid, klen | (c − o)/o, (h − l)/o |
| kup, klow | (h − max(o, c))/o, (min(o, c) − l)/o |
| ksft | (2c − h − l)/o |
| ret1 | c_t / c_{t−1} − 1 |
| roc5, roc10, roc20 | Ref(c, d) / c |
| ma5, ma10, ma20 | Mean(c, d) / c |
| std5, std20 | Std(c, d) / c |
| rsv10 | (c − Min(l, 10)) / (Max(h, 10) − Min(l, 10)) |
| vma5, vma20 | Mean(v, d) / v |

Every value is scale-free and uses bars ≤ t only; a value not yet defined (warm-up) is NaN until
standardised, then 0 (the train mean). A record channel adds a column per bar: the mean of one
field of the records published in (close of bar t−1, close of bar t] (`record_feature`, e.g. the
news `sentiment`), 0 on a bar without records — what a decision at the close of t can read.

`view_features(view, instrument, channels)` is the one entry point for training and trading alike:
the OHLCV features of every bar the point-in-time view shows, plus a column `<channel>_<field>` per
record channel asked for (e.g. {"news": "sentiment"} → `news_sentiment`). Every row depends only
on what a decision at that bar's close could read, so a row is the same whichever later view it
is computed on. `universe_view_features(view, instruments, channels)` gives the same frames for a
whole universe, and `aligned_bar_features` the OHLCV part of instruments on one calendar as one
[T, N, F] array: both compute the table in one vectorised pass over the panel of instruments
(rows bars, columns instruments; rolling windows run down each column), bit for bit the values of
`bar_features` per instrument, at a fraction of the cost of N separate passes.

`Standardiser.fit` takes means and stds from the rows of the train split only (dates in
[start, end]) and `transform` applies them to any rows, so test features never inform the
scaling. `windows` stacks the last `window` standardised rows of every bar ([T, window, F],
zero before the first bar); `panel` does it for a universe ([T, N, window, F]).

`cross_section_shuffle` is the control of an informative channel: at every date the channel's
values are passed around a random cycle of the instruments drawn from (seed, date), so each
instrument reads another's value of the same day, never its own (point-in-time, and the same in
training and trading): its own information is gone, the channel's distribution is kept.

The interface (`FEATURE_NAMES`, `bar_features`, `aligned_bar_features`, `universe_bar_features`,
`record_feature`, `view_features`, `universe_view_features`, `channel_columns`, `Standardiser`,
`windows`, `panel`, `cross_section_shuffle`) is shared by every comparator: extend it, do not change it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import ConfigError, DataError
from market.view import MarketView

FEATURE_NAMES: tuple[str, ...] = (
    "kmid", "klen", "kup", "klow", "ksft", "ret1", "roc5", "roc10", "roc20",
    "ma5", "ma10", "ma20", "std5", "std20", "rsv10", "vma5", "vma20",
)
"""The OHLCV features of `bar_features`, in column order (module table)."""


def _ratio(numerator: pd.Series, denominator: pd.Series) -> pd.Series:
    """numerator / denominator with NaN where the denominator is 0."""
    return numerator / denominator.where(denominator != 0)


def _feature_columns(o, h, lo, c, v) -> dict:
    """The module table's formulas on one instrument's Series, or on frames (rows bars, columns
    instruments sharing those bars) for all of them in one pass: every operation acts column by
    column (rolling windows along the rows), so a frame's column equals its instrument's Series."""
    out = {
        "kmid": _ratio(c - o, o), "klen": _ratio(h - lo, o),
        "kup": _ratio(h - np.maximum(o, c), o), "klow": _ratio(np.minimum(o, c) - lo, o),
        "ksft": _ratio(2 * c - h - lo, o), "ret1": _ratio(c, c.shift(1)) - 1.0,
    }
    for d in (5, 10, 20):
        out[f"roc{d}"] = _ratio(c.shift(d), c)
    for d in (5, 10, 20):
        out[f"ma{d}"] = _ratio(c.rolling(d).mean(), c)
    for d in (5, 20):
        out[f"std{d}"] = _ratio(c.rolling(d).std(), c)
    low10, high10 = lo.rolling(10).min(), h.rolling(10).max()
    out["rsv10"] = _ratio(c - low10, high10 - low10)
    for d in (5, 20):
        out[f"vma{d}"] = _ratio(v.rolling(d).mean(), v)
    return out


OHLCV = ("open", "high", "low", "close", "volume")


def bar_features(bars: pd.DataFrame) -> pd.DataFrame:
    """The `FEATURE_NAMES` columns of every bar of one instrument (module table); NaN where undefined."""
    out = _feature_columns(*(bars[name].astype(float) for name in OHLCV))
    frame = pd.DataFrame(out, index=bars.index)[list(FEATURE_NAMES)]
    return frame.replace([np.inf, -np.inf], np.nan)


def aligned_bar_features(bars: Mapping[str, pd.DataFrame]) -> np.ndarray:
    """[T, N, F] `bar_features` of the N instruments of `bars` (in its order, F = `FEATURE_NAMES`),
    which must share one index of T bars, computed in one vectorised pass over the panel: value
    for value (bit for bit) `np.stack([bar_features(b).to_numpy() for b in bars.values()], 1)`."""
    frames = list(bars.values())
    index = frames[0].index
    if any(not frame.index.equals(index) for frame in frames[1:]):
        raise DataError("aligned_bar_features: the instruments' bars must share one index")
    fields = [pd.DataFrame(np.column_stack([frame[field].to_numpy(dtype=float) for frame in frames]),
                           index=index, columns=list(bars)) for field in OHLCV]
    out = _feature_columns(*fields)
    values = np.stack([out[name].to_numpy(dtype=float) for name in FEATURE_NAMES], axis=-1)
    values[np.isinf(values)] = np.nan
    return values


def universe_bar_features(bars: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """{instrument: `bar_features(bars[instrument])`} (equal frames), with one `aligned_bar_features`
    pass per group of instruments whose bars share an index (one pass for a common calendar)."""
    groups: list[list[str]] = []
    for name, frame in bars.items():
        group = next((g for g in groups if bars[g[0]].index.equals(frame.index)), None)
        if group is None:
            groups.append([name])
        else:
            group.append(name)
    frames: dict[str, pd.DataFrame] = {}
    for group in groups:
        values = aligned_bar_features({name: bars[name] for name in group})
        for j, name in enumerate(group):
            frames[name] = pd.DataFrame(np.ascontiguousarray(values[:, j]), index=bars[name].index,
                                        columns=list(FEATURE_NAMES))
    return {name: frames[name] for name in bars}


def record_feature(records: pd.DataFrame, index: pd.DatetimeIndex, field: str,
                   close_offset: pd.Timedelta) -> pd.Series:
    """Per bar of `index`, the mean of `records[field]` over the records published in
    (close of the previous bar, close of this bar]; 0 on a bar without records.

    A bar stamped s closes at s + `close_offset` (16:00 for daily bars, 0 for intraday bars stamped
    at their close: a view's `cutoff − asof`). The first bar takes every record published by its
    close; records published after the last bar's close are dropped, so the result depends only on
    what the last bar's decision may read.
    """
    if records.empty:
        return pd.Series(0.0, index=index, name=field)
    if field not in records.columns:
        raise DataError(f"record_feature: the records have no field {field!r} (they have {', '.join(records.columns)})")
    closes = index + close_offset
    published = pd.DatetimeIndex(records["available_at"])
    slot = closes.searchsorted(published, side="left")
    keep = slot < len(index)
    values = pd.Series(records[field].to_numpy(dtype=float)[keep]).groupby(slot[keep]).mean()
    out = np.zeros(len(index))
    out[values.index.to_numpy()] = values.to_numpy()
    return pd.Series(out, index=index, name=field)


def channel_columns(channels: Mapping[str, str]) -> list[str]:
    """The column names `view_features` gives the record channels: `<channel>_<field>`."""
    return [f"{channel}_{field}" for channel, field in channels.items()]


def view_features(view: MarketView, instrument: str, channels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """`bar_features` of every bar of `instrument` in `view`, then one `record_feature` column per
    `channels` entry (channel -> field), from the records the view shows."""
    return universe_view_features(view, [instrument], channels)[instrument]


def universe_view_features(view: MarketView, instruments: Sequence[str],
                           channels: Mapping[str, str] | None = None) -> dict[str, pd.DataFrame]:
    """{instrument: `view_features(view, instrument, channels)`} for every one of `instruments`, the
    OHLCV part in one pass per calendar (`universe_bar_features`)."""
    bars = {name: view.bars(name) for name in instruments}
    frames = universe_bar_features(bars)
    offset = view.cutoff - view.asof
    for name, frame in frames.items():
        for (channel, field), column in zip((channels or {}).items(), channel_columns(channels or {})):
            frame[column] = record_feature(view.records(channel, name), bars[name].index, field, offset).to_numpy()
    return frames


@dataclass(frozen=True)
class Standardiser:
    """z = (x − mean) / std per column, with the train split's mean and std (ddof=1); NaN → 0."""

    names: tuple[str, ...]
    mean: tuple[float, ...]
    std: tuple[float, ...]

    @classmethod
    def fit(cls, frames: Sequence[pd.DataFrame], start: str | pd.Timestamp, end: str | pd.Timestamp) -> Standardiser:
        """Means and stds over the rows dated in [start, end] of every frame (instruments pooled)."""
        rows = pd.concat([frame.loc[pd.Timestamp(start):pd.Timestamp(end)] for frame in frames])
        if rows.empty:
            raise DataError(f"Standardiser.fit: no feature rows in the train split {start} .. {end}")
        mean, std = rows.mean(), rows.std(ddof=1).fillna(0.0)
        std = std.where(std > 0, 1.0)
        names = tuple(str(c) for c in rows.columns)
        return cls(names, tuple(float(mean[n]) if pd.notna(mean[n]) else 0.0 for n in names),
                   tuple(float(std[n]) for n in names))

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """The standardised values of `frame`'s columns `names` as float32 [rows, F], NaN → 0."""
        missing = [n for n in self.names if n not in frame.columns]
        if missing:
            raise DataError(f"Standardiser: feature column(s) {', '.join(missing)} missing")
        return self.transform_values(frame[list(self.names)].to_numpy(dtype=float))

    def transform_values(self, values: np.ndarray) -> np.ndarray:
        """The standardised values of an array [..., F] whose last axis is `names`, float32, NaN → 0."""
        if values.shape[-1] != len(self.names):
            raise DataError(f"Standardiser: {values.shape[-1]} feature columns, it was fitted on {len(self.names)}")
        scaled = (values - np.array(self.mean)) / np.array(self.std)
        return np.nan_to_num(scaled, nan=0.0).astype(np.float32)

    def to_dict(self) -> dict:
        """Plain JSON values (for a checkpoint's config)."""
        return {"names": list(self.names), "mean": list(self.mean), "std": list(self.std)}

    @classmethod
    def from_dict(cls, values: Mapping) -> Standardiser:
        """The inverse of `to_dict`."""
        return cls(tuple(values["names"]), tuple(values["mean"]), tuple(values["std"]))


def windows(values: np.ndarray, window: int) -> np.ndarray:
    """[T, F] rows → [T, window, F]: row t holds rows t−window+1 .. t (oldest first), zeros before row 0."""
    if window < 1:
        raise ConfigError(f"feature window {window}: it must be at least 1")
    padded = np.concatenate([np.zeros((window - 1, values.shape[1]), dtype=values.dtype), values])
    stacked = np.lib.stride_tricks.sliding_window_view(padded, window, axis=0)
    return np.ascontiguousarray(stacked.transpose(0, 2, 1))


def panel(features: Mapping[str, pd.DataFrame], dates: pd.DatetimeIndex, window: int,
          standardiser: Standardiser) -> np.ndarray:
    """[len(dates), N, window, F] standardised windows of the N instruments of `features` (in its
    order) ending at each of `dates`; a date an instrument lacks raises a DataError."""
    out = []
    for name, frame in features.items():
        stacked = windows(standardiser.transform(frame), window)
        rows = frame.index.get_indexer(dates)
        if (rows < 0).any():
            raise DataError(f"features of {name}: no bar at {dates[rows < 0][0]:%Y-%m-%d %H:%M}")
        out.append(stacked[rows])
    return np.stack(out, axis=1)


def cross_section_shuffle(values: pd.DataFrame, seed: int) -> pd.DataFrame:
    """`values` (rows dates, columns instruments) with each row's values moved along a random cycle
    of the columns drawn from (seed, the row's date): column p_k reads column p_{k+1}'s value (a
    derangement: no column keeps its own). The control of an informative channel."""
    out = values.to_numpy(copy=True)
    n = values.shape[1]
    if n < 2:
        raise ConfigError("cross_section_shuffle: a control needs at least 2 instruments")
    for i, date in enumerate(values.index):
        rng = np.random.default_rng([seed, int(pd.Timestamp(date).value) & 0x7FFFFFFFFFFFFFFF])
        cycle = rng.permutation(n)
        out[i, cycle] = out[i, np.roll(cycle, -1)]
    return pd.DataFrame(out, index=values.index, columns=values.columns)
