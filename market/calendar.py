"""The calendar of a market: bar frequency, when a bar closes, and periods per year.

Two sessions:

- ``exchange`` (stocks): 252 trading days a year, 6.5 trading hours a day. Daily bars are
  stamped at midnight of their day and close at ``decision_time`` (16:00); intraday bars cover
  trading hours only.
- ``24/7`` (crypto): 365 days a year, 24 hours a day.

Bar stamps. A daily bar is stamped with its date (midnight); its close, and so the visibility
cutoff of a decision on it, is the date + ``decision_time``. An intraday bar is stamped at its
close: the bar stamped 09:45 with a 15-minute frequency covers (09:30, 09:45], and its cutoff is
09:45 itself — never a date plus 16:00 (a minute bar stamped 00:00 closes at 00:00).

Periods per year P (the annualisation of every metric, ``metrics.performance``):

    P = days_per_year · (session hours per day / bar length)     for intraday bars
    P = days_per_year / (bar length in days)                      for daily and longer bars

with days_per_year = 252 and 6.5 session hours (exchange) or 365 and 24 hours (24/7). So
daily stocks have P = 252, daily crypto 365, minute crypto 525,600 and 15-minute crypto 35,040.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from core.errors import ConfigError

DAY = pd.Timedelta(days=1)
CLOSE = pd.Timedelta(hours=16)
"""The close of an exchange day, the default decision time of daily bars."""

SESSIONS: dict[str, tuple[float, float]] = {"exchange": (252.0, 6.5), "24/7": (365.0, 24.0)}
"""Session -> (days per year, trading hours per day)."""

Session = Literal["exchange", "24/7"]


def bar_noun(frequency: pd.Timedelta) -> str:
    """"day" when bars are daily, else "bar": a report says "bp/day" and "daily return" only of daily bars."""
    return "day" if frequency == DAY else "bar"


def bar_adjective(noun: str) -> str:
    """"daily" for "day", else "per-bar" (as in "mean per-bar return")."""
    return "daily" if noun == "day" else f"per-{noun}"


@dataclass(frozen=True)
class Calendar:
    """Bar frequency, session and the daily decision time of one market (see the module docstring)."""

    frequency: pd.Timedelta = DAY
    session: Session = "exchange"
    decision_time: pd.Timedelta = CLOSE
    """Time of day at which a daily bar closes (its decisions see records published until then)."""

    def __post_init__(self) -> None:
        if self.session not in SESSIONS:
            raise ConfigError(f"calendar session {self.session!r}: it must be one of {', '.join(SESSIONS)}")
        if self.frequency <= pd.Timedelta(0):
            raise ConfigError(f"calendar frequency {self.frequency}: it must be positive")

    @property
    def daily(self) -> bool:
        """True for daily (or longer) bars, stamped by date."""
        return self.frequency >= DAY

    @property
    def periods_per_year(self) -> float:
        """P, bars per year (module docstring)."""
        days, hours = SESSIONS[self.session]
        if self.daily:
            return days / (self.frequency / DAY)
        return days * pd.Timedelta(hours=hours) / self.frequency

    @property
    def bar_noun(self) -> str:
        """The bar in report prose and headings: "day" for daily bars, "bar" for any other length."""
        return bar_noun(self.frequency)

    def bar_close(self, stamp: pd.Timestamp) -> pd.Timestamp:
        """When the bar stamped `stamp` closes: the visibility cutoff of a decision on it."""
        return stamp.normalize() + self.decision_time if self.daily else stamp

    def expected_bars(self, start: pd.Timestamp, end: pd.Timestamp) -> int:
        """Bars the session holds in [start, end] (business days for daily exchange bars), for coverage checks."""
        if end < start:
            return 0
        if self.daily and self.session == "exchange":
            return len(pd.bdate_range(start, end))
        return int((end - start) // self.frequency) + 1

    @classmethod
    def infer(cls, index: pd.DatetimeIndex, session: Session = "exchange",
              decision_time: pd.Timedelta = CLOSE) -> Calendar:
        """The calendar of bars stamped `index`: frequency = the median step, rounded to whole days when ≥ 1 day."""
        if len(index) < 2:
            return cls(DAY, session, decision_time)
        step = pd.Timedelta(int(np.median(np.diff(index.as_unit("ns").asi8))), unit="ns")
        frequency = DAY if step >= pd.Timedelta(hours=20) else step
        return cls(frequency, session, decision_time)

    def describe(self) -> dict:
        """The calendar as plain JSON values (run.json)."""
        return {"frequency": str(self.frequency), "session": self.session,
                "decision_time": str(self.decision_time), "periods_per_year": self.periods_per_year}
