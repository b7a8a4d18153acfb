"""Turn a raw OHLCV table from any source into the canonical bar frame of `MarketData`.

Sources differ: `Date` vs `date`, `Adj Close` vs `adj_close`, an unnamed index column,
`4/1/2015 16:00:00` vs `2015-04-01`. They are reconciled here and only here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.errors import DataError
from market.data import BAR_COLUMNS
from market.validation import require_columns, validate_bars


def _canonical_name(column: str) -> str:
    return str(column).strip().lower().replace(" ", "_")


def _delimiter_hint(columns) -> str:
    """A hint when the header looks split by another delimiter than the comma, else ""."""
    for column in map(str, columns):
        for delimiter in (";", "\t", "|"):
            if delimiter in column:
                return (f" (the header reads {column[:60]!r}: the file seems delimited by {delimiter!r}; "
                        "CSV files must be comma-separated)")
    return ""


def normalise_bars(raw: pd.DataFrame, origin: str) -> pd.DataFrame:
    """Canonical bars from a raw table with a date column and OHLCV columns (any case).

    Unnamed index columns are dropped; dates are parsed (a UTC offset is converted to UTC;
    the time of day is discarded for daily data — at most one bar per calendar day — and kept
    for intraday bars); prices become float64. The result is validated (see `validate_bars`).
    """
    frame = raw.rename(columns=_canonical_name)
    frame = frame.loc[:, [c for c in frame.columns if not c.startswith("unnamed")]]
    date_column = next((c for c in ("date", "datetime", "timestamp") if c in frame.columns), None)
    if date_column is None:
        raise DataError(f"{origin}: missing column date{_delimiter_hint(raw.columns)}")
    require_columns(frame.columns, origin)
    dates = pd.to_datetime(frame[date_column], errors="coerce", format="mixed", utc=True).dt.tz_convert(None)
    columns = list(BAR_COLUMNS) + (["adj_close"] if "adj_close" in frame.columns else [])
    values = {}
    for column in columns:
        numeric = pd.to_numeric(frame[column], errors="coerce")
        unparsed = numeric.isna() & frame[column].notna()
        if unparsed.any():
            i = int(np.flatnonzero(unparsed.to_numpy())[0])
            raise DataError(f"{origin}: row {i + 1}: {column} is not a number ({frame[column].iloc[i]!r})")
        values[column] = numeric.to_numpy(dtype=float)
    days = dates.dt.normalize()
    daily = not days.dropna().duplicated().any()
    bars = pd.DataFrame(values, index=pd.DatetimeIndex(days if daily else dates, name="date"))
    return validate_bars(bars, origin)
