"""Small, valid bar frames for tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def random_bars(n: int = 120, seed: int = 0, start: str = "2021-01-04") -> pd.DataFrame:
    """A geometric random walk of `n` business-day bars with consistent OHLCV."""
    rng = np.random.default_rng(seed)
    close = 100 * np.exp(np.cumsum(rng.normal(0.0005, 0.02, n)))
    open_ = close * np.exp(rng.normal(0, 0.005, n))
    high = np.maximum(open_, close) * (1 + rng.uniform(0, 0.01, n))
    low = np.minimum(open_, close) * (1 - rng.uniform(0, 0.01, n))
    volume = rng.integers(1_000, 100_000, n).astype(float)
    index = pd.DatetimeIndex(pd.bdate_range(start, periods=n), name="date")
    return pd.DataFrame({"open": open_, "high": high, "low": low, "close": close, "volume": volume}, index=index)


def write_csv(frame: pd.DataFrame, path) -> None:
    """Write `frame` in the files-source schema."""
    frame.rename_axis("date").reset_index().assign(date=lambda f: f["date"].dt.strftime("%Y-%m-%d")).to_csv(path, index=False)
