"""AlphaMix's inputs and labels, from a point-in-time view (training and trading alike).

Features (`comparators.features`): per stock and day the Alpha158-style OHLCV features and, when
the spec names record channels, one column per channel (e.g. `news_sentiment`: the mean sentiment
of the stock's news published since the previous close). `shuffled` channels are the control:
their values are passed around a random cycle of the stocks each day (`cross_section_shuffle`),
so each stock reads another's news. Every column is standardised with the train split's mean and
std, and an expert reads the last `window` days flattened (window × features, oldest first).

Label of a decision at the close of day t: up (1) when the return that decision earns under the
portfolio task's fills, open_{t+2} / open_{t+1} − 1 (bought at the next open, rebalanced at the
open after), is ≥ 0, else down (0); the original labelled "ret ≥ 0" likewise. Labels are read
only in training, from bars of the training view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from comparators.features import Standardiser, channel_columns, cross_section_shuffle, panel, universe_view_features
from core.errors import ConfigError, DataError
from market.view import MarketView


@dataclass(frozen=True)
class FeatureSpec:
    """What an expert reads: `window` days of the OHLCV features plus `channels` (channel -> field);
    the channel columns named in `shuffled` are the control (module docstring)."""

    window: int = 10
    channels: dict[str, str] = field(default_factory=dict)
    shuffled: tuple[str, ...] = ()
    shuffle_seed: int = 0

    def __post_init__(self) -> None:
        unknown = [c for c in self.shuffled if c not in channel_columns(self.channels)]
        if unknown:
            raise ConfigError(f"shuffled channel column(s) {', '.join(unknown)}: not among the channels "
                              f"({', '.join(channel_columns(self.channels)) or 'none'})")

    def to_dict(self) -> dict:
        return {"window": self.window, "channels": dict(self.channels), "shuffled": list(self.shuffled),
                "shuffle_seed": self.shuffle_seed}

    @classmethod
    def from_dict(cls, values: dict) -> FeatureSpec:
        return cls(int(values["window"]), dict(values["channels"]), tuple(values["shuffled"]),
                   int(values["shuffle_seed"]))


def feature_frames(view: MarketView, instruments: Sequence[str], spec: FeatureSpec) -> dict[str, pd.DataFrame]:
    """Per instrument, its unscaled feature rows for every bar of `view`, the control's columns shuffled."""
    frames = universe_view_features(view, instruments, spec.channels)
    for column in spec.shuffled:
        table = pd.DataFrame({name: frame[column] for name, frame in frames.items()})
        mixed = cross_section_shuffle(table, spec.shuffle_seed)
        for name, frame in frames.items():
            frame[column] = mixed[name].reindex(frame.index).to_numpy()
    return frames


def forward_returns(view: MarketView, instrument: str) -> pd.Series:
    """open_{t+2} / open_{t+1} − 1 per bar t of `view` (NaN for the last two bars)."""
    opens = view.bars(instrument)["open"]
    return opens.shift(-2) / opens.shift(-1) - 1.0


@dataclass
class Windows:
    """Samples of days × stocks: `x` [T, N, window·F] flattened windows, `last` [T, N, F] last-day
    features, `returns` [T, N] the forward returns (NaN where unknown), `dates`, `instruments`."""

    x: np.ndarray
    last: np.ndarray
    returns: np.ndarray
    dates: pd.DatetimeIndex
    instruments: list[str]

    def flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x [S, window·F], last [S, F], labels [S]) over the samples with a known return."""
        known = ~np.isnan(self.returns)
        return self.x[known], self.last[known], (self.returns[known] >= 0).astype(np.int64)


def windows_at(frames: dict[str, pd.DataFrame], dates: pd.DatetimeIndex, spec: FeatureSpec,
               scaler: Standardiser, returns: dict[str, pd.Series] | None = None) -> Windows:
    """The standardised windows of every instrument of `frames` ending at each of `dates`."""
    stacked = panel(frames, dates, spec.window, scaler)
    t, n, w, f = stacked.shape
    if returns is None:
        forward = np.full((t, n), np.nan)
    else:
        forward = np.stack([returns[name].reindex(dates).to_numpy(dtype=float) for name in frames], axis=1)
    return Windows(stacked.reshape(t, n, w * f), stacked[:, :, -1, :], forward, dates, list(frames))


def split_dates(view: MarketView, instruments: Sequence[str], start, end) -> pd.DatetimeIndex:
    """The bars in [start, end] that every instrument has."""
    common = None
    for name in instruments:
        index = view.bars(name).index
        common = index if common is None else common.intersection(index)
    dates = common[(common >= pd.Timestamp(start)) & (common <= pd.Timestamp(end))]
    if len(dates) == 0:
        raise DataError(f"no common bar of {', '.join(instruments)} in {pd.Timestamp(start):%Y-%m-%d} .. "
                        f"{pd.Timestamp(end):%Y-%m-%d}")
    return dates
