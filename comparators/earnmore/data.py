"""EarnMore's inputs from a point-in-time view: per-stock feature tables and the panel of windows.

`universe_features` reads `comparators.features.universe_view_features` (each stock's
`view_features`: OHLCV features plus the record channels asked for, e.g. {"news": "sentiment"},
the synthetic market's informative channel) and, for the control (`shuffle_seed` set), passes each channel
column around a random cycle of the stocks at every date (`cross_section_shuffle`): the channel
keeps its distribution and loses each stock's own information, in training and trading alike.

`split_arrays` is what the training environment and the validation need: the standardised
windows (T, N, days, F) of a split's common bars and their opening prices (T, N), standardised
with the `Standardiser` given, or one fitted on those bars (the training split's, whose statistics
every other split then uses).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from comparators.features import Standardiser, channel_columns, cross_section_shuffle, panel, universe_view_features
from core.errors import DataError
from market.view import MarketView


def universe_features(view: MarketView, tickers: Sequence[str], channels: Mapping[str, str],
                      shuffle_seed: int | None = None) -> dict[str, pd.DataFrame]:
    """Feature table per ticker (rows: the view's bars), channel columns shuffled across tickers
    per date when `shuffle_seed` is set (module docstring)."""
    frames = universe_view_features(view, tickers, channels)
    if shuffle_seed is None:
        return frames
    for column in channel_columns(channels):
        table = pd.DataFrame({ticker: frame[column] for ticker, frame in frames.items()})
        shuffled = cross_section_shuffle(table.dropna(), shuffle_seed)
        for ticker, frame in frames.items():
            frame.loc[shuffled.index, column] = shuffled[ticker]
    return frames


def common_dates(frames: Mapping[str, pd.DataFrame], start: pd.Timestamp, end: pd.Timestamp) -> pd.DatetimeIndex:
    """The bars in [start, end] that every ticker has; a DataError when there is none."""
    dates = None
    for frame in frames.values():
        index = frame.loc[start:end].index
        dates = index if dates is None else dates.intersection(index)
    if dates is None or len(dates) == 0:
        raise DataError(f"earnmore: no bar between {start.date()} and {end.date()} common to {', '.join(frames)}")
    return dates


def split_arrays(view: MarketView, tickers: Sequence[str], channels: Mapping[str, str], days: int,
                 start: pd.Timestamp, end: pd.Timestamp, shuffle_seed: int | None = None,
                 standardiser: Standardiser | None = None
                 ) -> tuple[np.ndarray, np.ndarray, Standardiser, pd.DatetimeIndex]:
    """(windows (T, N, days, F), opens (T, N), the standardiser (fitted on [start, end] when none is
    given), the T dates)."""
    frames = universe_features(view, tickers, channels, shuffle_seed)
    dates = common_dates(frames, start, end)
    standardiser = standardiser or Standardiser.fit(list(frames.values()), start, end)
    opens = np.stack([view.bars(ticker)["open"].reindex(dates).to_numpy(dtype=float) for ticker in tickers], axis=1)
    return panel(frames, dates, days, standardiser), opens, standardiser, dates
