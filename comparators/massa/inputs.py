"""MASSA's inputs from a point-in-time `MarketView`: per-asset feature windows and the market context.

- Asset windows: the shared comparator features (`comparators.features.bar_features`, the
  Alpha158-style OHLCV table, computed for the whole universe in one vectorised pass by
  `aligned_bar_features`), standardised with the training window's statistics, the last
  `window` rows of each bar flattened to one vector per asset ([T, N, window·17]).
- Market context: `observations.market_context` of the universe's closes, standardised the same way.

`InputScaling` holds both standardisers (fitted once, on the training window only, and stored in
the checkpoint's config). Training builds a whole window at once (`window_market`); the plugin
builds the row of one decision bar from the last `HISTORY_BARS` bars of its view (`decision_row`).
Every feature of bar t uses at most 20 bars before t, so a row computed from that trailing slice
equals the row computed from the whole history (a test checks it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from comparators.features import FEATURE_NAMES, Standardiser, aligned_bar_features, universe_bar_features, windows
from comparators.massa.env import Market
from comparators.massa.observations import market_context
from core.errors import DataError
from market.view import MarketView

HISTORY_BARS = 64
"""Trailing bars a decision row is computed from: ≥ the longest look-back (20 bars) + the window + 1."""


def closes(bars: dict[str, pd.DataFrame]) -> pd.DataFrame:
    return pd.DataFrame({name: frame["close"] for name, frame in bars.items()})


@dataclass(frozen=True)
class InputScaling:
    """The training window's standardisers of the asset features and of the market context."""

    window: int
    features: Standardiser
    context: Standardiser

    @classmethod
    def fit(cls, bars: dict[str, pd.DataFrame], start: pd.Timestamp, end: pd.Timestamp, window: int) -> InputScaling:
        """Means and stds over the bars dated in [start, end] (the training window) only."""
        features = Standardiser.fit(list(universe_bar_features(bars).values()), start, end)
        return cls(window, features, Standardiser.fit([market_context(closes(bars))], start, end))

    def to_dict(self) -> dict:
        return {"window": self.window, "features": self.features.to_dict(), "context": self.context.to_dict()}

    @classmethod
    def from_dict(cls, values: dict) -> InputScaling:
        return cls(int(values["window"]), Standardiser.from_dict(values["features"]),
                   Standardiser.from_dict(values["context"]))

    def asset_windows(self, bars: dict[str, pd.DataFrame]) -> np.ndarray:
        """[T, N, window·F] standardised windows on every bar of `bars` (aligned frames): asset i's
        vector is its rows t−window+1 .. t (oldest first, zeros before the first bar), row by row."""
        if self.features.names != FEATURE_NAMES:
            raise DataError(f"massa: the input scaling has features {', '.join(self.features.names)}, "
                            f"not the shared table's {', '.join(FEATURE_NAMES)}")
        values = self.features.transform_values(aligned_bar_features(bars))
        t, n, f = values.shape
        stacked = windows(values.reshape(t, n * f), self.window).reshape(t, self.window, n, f)
        return np.ascontiguousarray(stacked.transpose(0, 2, 1, 3)).reshape(t, n, self.window * f)

    def market(self, bars: dict[str, pd.DataFrame]) -> np.ndarray:
        return self.context.transform(market_context(closes(bars)))


def view_bars(view: MarketView, instruments: tuple[str, ...], lookback: int | None = None) -> dict[str, pd.DataFrame]:
    """Each instrument's bars in `view` (the last `lookback`), on the dates every one of them has."""
    bars = {name: view.bars(name, lookback=lookback) for name in instruments}
    common = bars[instruments[0]].index
    for frame in bars.values():
        common = common.intersection(frame.index)
    if common.empty:
        raise DataError(f"massa: the instruments {', '.join(instruments)} share no bar up to {view.asof.date()}")
    return {name: frame.loc[common] for name, frame in bars.items()}


def window_market(view: MarketView, instruments: tuple[str, ...], start: pd.Timestamp, end: pd.Timestamp,
                  scaling: InputScaling) -> Market:
    """The bars of [start, end] with their asset windows and context, computed over the view's whole history."""
    bars = view_bars(view, instruments)
    inside = (bars[instruments[0]].index >= start) & (bars[instruments[0]].index <= end)
    if inside.sum() < 2:
        raise DataError(f"massa: fewer than 2 common bars of the universe in {start.date()} .. {end.date()}")
    asset, context = scaling.asset_windows(bars), scaling.market(bars)
    return Market(bars={n: f.loc[inside] for n, f in bars.items()}, times=bars[instruments[0]].index[inside],
                  windows=asset[inside], context=context[inside])


def decision_row(view: MarketView, instruments: tuple[str, ...], scaling: InputScaling) -> tuple[np.ndarray, np.ndarray]:
    """(asset windows [N, window·F], market context [5]) of the view's last bar, from its last HISTORY_BARS bars."""
    bars = view_bars(view, instruments, lookback=HISTORY_BARS)
    return scaling.asset_windows(bars)[-1], scaling.market(bars)[-1]
