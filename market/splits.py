"""Train / valid / test windows by dates, with a gap (embargo) between consecutive windows.

A gap of g bars means that at least g bars of the calendar lie strictly between the end of one
window and the start of the next, so that labels looking g bars ahead (the paper's regime
label looks 8 bars ahead) never reach into the next window.
"""

from __future__ import annotations

import pandas as pd
from pydantic import BaseModel, Field, model_validator

from core.errors import ConfigError


class Window(BaseModel):
    """An inclusive date range [start, end]."""

    start: pd.Timestamp
    end: pd.Timestamp

    model_config = {"arbitrary_types_allowed": True, "extra": "forbid"}

    @model_validator(mode="before")
    @classmethod
    def _parse(cls, values):
        return {k: pd.Timestamp(v) for k, v in dict(values).items()}

    @model_validator(mode="after")
    def _ordered(self) -> "Window":
        if self.end < self.start:
            raise ValueError(f"window ends ({self.end.date()}) before it starts ({self.start.date()})")
        return self


class Splits(BaseModel):
    """Chronological train, valid and test windows separated by at least `gap_bars` bars."""

    train: Window
    valid: Window
    test: Window
    gap_bars: int = Field(0, ge=0)

    model_config = {"extra": "forbid"}

    def check(self, calendar: pd.DatetimeIndex, origin: str = "calendar") -> "Splits":
        """Raise if windows overlap or are closer than `gap_bars` bars on `calendar`; a gap
        error names `origin` (the file the calendar comes from) and the span it covers."""
        pairs = (("train", self.train, "valid", self.valid), ("valid", self.valid, "test", self.test))
        for first_name, first, second_name, second in pairs:
            if second.start <= first.end:
                raise ConfigError(f"{second_name} window starts {second.start.date()}, "
                                 f"not after {first_name} ends {first.end.date()}")
            between = ((calendar > first.end) & (calendar < second.start)).sum()
            if between < self.gap_bars:
                count = "1 bar" if len(calendar) == 1 else f"{len(calendar)} bars"
                span = f"{calendar[0].date()} .. {calendar[-1].date()}" if len(calendar) else "no dates"
                raise ConfigError(f"{origin} ({count}, {span}): only {between} bars between "
                                  f"{first_name} (ends {first.end.date()}) and {second_name} "
                                  f"(starts {second.start.date()}); the split needs a gap of {self.gap_bars}")
        return self


def chronological_splits(calendar: pd.DatetimeIndex, train: float, valid: float,
                         gap_bars: int = 0) -> Splits:
    """Cut `calendar` into train/valid/test by fractions of its bars, leaving `gap_bars` between."""
    n = len(calendar)
    n_train, n_valid = int(n * train), int(n * valid)
    n_test = n - n_train - n_valid - 2 * gap_bars
    if min(n_train, n_valid, n_test) < 1:
        raise ValueError(f"{n} bars cannot hold train {train:.0%}, valid {valid:.0%}, "
                         f"a test window and two gaps of {gap_bars} bars")
    valid_start = n_train + gap_bars
    test_start = valid_start + n_valid + gap_bars
    return Splits(
        train=Window(start=calendar[0], end=calendar[n_train - 1]),
        valid=Window(start=calendar[valid_start], end=calendar[valid_start + n_valid - 1]),
        test=Window(start=calendar[test_start], end=calendar[-1]),
        gap_bars=gap_bars,
    )
