"""Per-bar market-dynamic labels for FineFT stage II, from the shared market-condition labeller.

The bars of a split are cut into chunks of `chunk_bars` (`comparators.market_conditions`); each
chunk gets a trend label (Butterworth slope, three bins by default) and a volatility label (two
bins), binned with quantiles of the TRAINING chunks, and its bars the dynamic

    k = trend · V + vol,   k ∈ {0 .. T·V − 1}   (T trend labels, V volatility labels)

Bars after the last whole chunk get −1 (no dynamic). The labels are hindsight labels of a chunk;
they only choose which learner a dynamic gets and which states its VAE learns (stages II–III).
At trading time the VAEs, not the labels, say which dynamic a state belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from comparators.market_conditions import MarketConditions, chunk_statistics


@dataclass(frozen=True)
class Dynamics:
    """The labeller fitted on the training split."""

    conditions: MarketConditions
    chunk_bars: int

    @classmethod
    def fit(cls, train_close: pd.Series, chunk_bars: int, trend_inner: tuple[float, ...] = (0.35, 0.65),
            volatility_inner: tuple[float, ...] = (0.5,)) -> Dynamics:
        chunks = chunk_statistics(train_close, chunk_bars)
        return cls(MarketConditions.fit(chunks, trend_inner, volatility_inner), chunk_bars)

    @property
    def count(self) -> int:
        return self.conditions.trend.labels * self.conditions.volatility.labels

    def labels(self, close: pd.Series) -> np.ndarray:
        """k per bar of `close` (module docstring)."""
        chunks = self.conditions.label(chunk_statistics(close, self.chunk_bars))
        out = np.full(len(close), -1, dtype=np.int64)
        for row in chunks.itertuples():
            out[row.first:row.last + 1] = row.trend * self.conditions.volatility.labels + row.vol
        return out
