"""Validation of daily bars at load time.

Every problem is reported as one `DataError` line naming the file, the row (1-based data row
of the file, header excluded) or date, and what is wrong. Nothing is ever filled in silently.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.errors import DataError
from market.data import BAR_COLUMNS


def require_columns(columns, origin: str) -> None:
    """Raise a one-line `DataError` naming any of `BAR_COLUMNS` missing from `columns`."""
    missing = [c for c in BAR_COLUMNS if c not in columns]
    if missing:
        raise DataError(f"{origin}: missing column(s) {', '.join(missing)}")


def validate_bars(frame: pd.DataFrame, origin: str) -> pd.DataFrame:
    """Check a normalised bar frame and return it unchanged.

    `frame` is indexed by date with the columns of `BAR_COLUMNS`, one row per data row of its
    source (row numbers in messages are 1-based, header excluded). Checks, in order: missing
    columns, empty file, unparseable or missing dates, unsorted or duplicate dates, NaN or
    infinite values, non-positive prices, negative volume, high < low, open/close outside [low, high].
    """
    require_columns(frame.columns, origin)
    if frame.empty:
        raise DataError(f"{origin}: no rows")
    dates = frame.index
    if dates.hasnans:
        i = int(np.flatnonzero(dates.isna())[0])
        raise DataError(f"{origin}: row {i + 1}: missing or unparseable date")
    steps = np.diff(dates.asi8)
    if (steps == 0).any():
        i = int(np.flatnonzero(steps == 0)[0]) + 1
        raise DataError(f"{origin}: row {i + 1}: duplicate date {dates[i].date()}")
    if (steps < 0).any():
        i = int(np.flatnonzero(steps < 0)[0]) + 1
        raise DataError(f"{origin}: row {i + 1}: date {dates[i].date()} is before the previous row's "
                        f"{dates[i - 1].date()} (dates must be sorted ascending)")
    for column in BAR_COLUMNS:
        values = frame[column].to_numpy(dtype=float)
        bad = ~np.isfinite(values) | (values <= 0 if column != "volume" else values < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = ("NaN" if np.isnan(values[i]) else "infinite" if np.isinf(values[i])
                    else "non-positive" if column != "volume" else "negative")
            raise DataError(f"{origin}: row {i + 1} ({dates[i].date()}): {what} {column} ({values[i]})")
    checks = (
        (frame["high"] < frame["low"], "high < low"),
        ((frame["open"] > frame["high"]) | (frame["open"] < frame["low"]), "open outside [low, high]"),
        ((frame["close"] > frame["high"]) | (frame["close"] < frame["low"]), "close outside [low, high]"),
    )
    for bad, what in checks:
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            r = frame.iloc[i]
            raise DataError(f"{origin}: row {i + 1} ({dates[i].date()}): {what} "
                            f"(open {r['open']}, high {r['high']}, low {r['low']}, close {r['close']})")
    return frame
