"""`MarketView`: the point-in-time window through which every framework reads the market.

A view for `asof` returns only
- bars dated at or before `asof`, and
- records whose `available_at` is at or before the close of the bar stamped `asof`
  (`MarketData.calendar.bar_close`: the date + 16:00 for daily bars, the stamp itself for
  intraday bars); records without an
  `available_at` are never returned.
It slices the data itself and returns copies, so no caller can read or alter anything after
`asof` through it: changing any data after `asof` cannot change what the view returns.
"""

from __future__ import annotations

import pandas as pd

from core.errors import ConfigError
from market.data import MarketData


class MarketView:
    """Read-only, point-in-time access to a `MarketData` as of one bar date."""

    __slots__ = ("_data", "_asof", "_cutoff")

    def __init__(self, data: MarketData, asof: str | pd.Timestamp):
        self._data = data
        self._asof = asof if isinstance(asof, pd.Timestamp) else pd.Timestamp(asof)
        self._cutoff: pd.Timestamp | None = None

    @property
    def asof(self) -> pd.Timestamp:
        """The last bar date visible through this view."""
        return self._asof

    @property
    def cutoff(self) -> pd.Timestamp:
        """The latest `available_at` of a record visible through this view: the close of the bar
        stamped `asof` (`Calendar.bar_close`): its date + the decision time for daily bars, `asof`
        itself for intraday bars (stamped at their close, even at midnight). Computed
        on first use: the runner makes a view per decision, and rules that read bars only never ask."""
        if self._cutoff is None:
            self._cutoff = self._data.calendar.bar_close(self._asof)
        return self._cutoff

    @property
    def tickers(self) -> list[str]:
        return self._data.tickers

    @property
    def channels(self) -> list[str]:
        return sorted(self._data.records)

    def bars(self, ticker: str, lookback: int | None = None,
             start: str | pd.Timestamp | None = None) -> pd.DataFrame:
        """Bars of `ticker` dated ≤ asof: the last `lookback` of them, or those from `start` on."""
        if ticker not in self._data.bars:
            raise ConfigError(f"unknown ticker {ticker!r}; known: {', '.join(self.tickers)}")
        frame = self._data.bars[ticker]
        hi = frame.index.searchsorted(self._asof, side="right")
        lo = 0
        if start is not None:
            lo = frame.index.searchsorted(pd.Timestamp(start))
        if lookback is not None:
            if lookback < 0:
                raise ConfigError(f"lookback must be ≥ 0, got {lookback}")
            lo = max(lo, hi - lookback)
        return frame.iloc[lo:hi].copy()

    def last_close(self, ticker: str) -> float:
        """Close of the last visible bar of `ticker`."""
        bars = self.bars(ticker, lookback=1)
        if bars.empty:
            raise ConfigError(f"no bar of {ticker} at or before {self._asof.date()}")
        return float(bars["close"].iloc[-1])

    def records(self, channel: str, ticker: str | None = None,
                start: str | pd.Timestamp | None = None) -> pd.DataFrame:
        """Records of `channel` public by the cutoff, optionally for one ticker and from `start`.

        Market-wide records (macro series) carry the ticker "" and are selected by `ticker=""`.

        An unknown channel yields an empty frame: "no data of that kind" is not an error.
        """
        frame = self._data.records.get(channel)
        if frame is None or frame.empty:
            return pd.DataFrame(columns=["ticker", "available_at"])
        available = frame["available_at"]
        mask = available.notna() & (available <= self.cutoff)
        if start is not None:
            mask &= available >= pd.Timestamp(start)
        if ticker is not None:
            mask &= frame["ticker"] == ticker
        return frame.loc[mask].copy()
