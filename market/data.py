"""`MarketData`: the validated, in-memory market a benchmark runs on.

Bars: one DataFrame per ticker indexed by a sorted, unique `DatetimeIndex` named `date`, with
float columns `open, high, low, close, volume` (and `adj_close` where the source has it).
Prices are split-adjusted but not dividend-adjusted (the "Close" of Yahoo-style files); the
simulator trades on `open` and `close`. `adj_close` is kept for reference only.

Records: dated information channels other than prices (news, social posts, fundamentals,
macro releases, ...), one DataFrame per channel name, each with an `available_at` timestamp
column (when the information became public) and a `ticker` column (empty string for
market-wide records such as macro series). Their schemas are documented where each channel
is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from core.errors import ConfigError
from market.calendar import Calendar

BAR_COLUMNS = ("open", "high", "low", "close", "volume")


@dataclass
class MarketData:
    """Bars per ticker and record channels, plus where each ticker's bars came from."""

    bars: dict[str, pd.DataFrame]
    records: dict[str, pd.DataFrame] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    calendar: Calendar = field(default_factory=Calendar)
    """Bar frequency, session, decision time and periods per year (`market.calendar`); daily
    exchange bars closing at 16:00 by default."""

    @property
    def decision_time(self) -> pd.Timedelta:
        """Time of day at which a daily bar closes (records published later that day are not visible to it)."""
        return self.calendar.decision_time

    @property
    def periods_per_year(self) -> float:
        """Bars per year, used to annualise metrics (252 for daily exchange bars)."""
        return self.calendar.periods_per_year

    @property
    def tickers(self) -> list[str]:
        return sorted(self.bars)

    def frame(self, ticker: str) -> pd.DataFrame:
        """The full bar history of `ticker` (the runner's, not an agent's, view)."""
        try:
            return self.bars[ticker]
        except KeyError:
            known = ", ".join(self.tickers) or "none"
            raise ConfigError(f"unknown ticker {ticker!r}: the market holds {known}") from None

    def trading_days(self, ticker: str, start: str | pd.Timestamp | None = None,
                     end: str | pd.Timestamp | None = None) -> pd.DatetimeIndex:
        """Bar dates of `ticker` within [start, end] (inclusive); raises on an empty window."""
        index = self.frame(ticker).index
        lo = index.searchsorted(pd.Timestamp(start)) if start is not None else 0
        hi = index.searchsorted(pd.Timestamp(end), side="right") if end is not None else len(index)
        days = index[lo:hi]
        if len(days) == 0:
            span = f"{index[0].date()} .. {index[-1].date()}" if len(index) else "no bars"
            raise ConfigError(
                f"empty window for {ticker}: no bars between {start} and {end} (data covers {span})"
            )
        return days
