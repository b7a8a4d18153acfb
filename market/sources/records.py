"""Record channels (news, social posts, fundamentals, ...) from JSONL or CSV files.

Every channel is a long table with a `ticker` column ("" for market-wide records) and an
`available_at` timestamp: the moment the information became public, in exchange local time
(a timestamp with a UTC offset is converted to America/New_York and the offset dropped; a bare
date means midnight, i.e. before that day's open). A `MarketView` shows a record only once its
`available_at` is at or before the view's cutoff (the close of the decision day).

| channel              | columns besides `ticker`, `available_at`                                  |
|----------------------|---------------------------------------------------------------------------|
| `news`               | `headline` (text), `source` (text), `sentiment` (number in [-1, 1], may be empty) |
| `social`             | `text`, `sentiment` (number in [-1, 1], may be empty), `likes` (number ≥ 0) |
| `fundamentals`       | `statement` (balance_sheet, cashflow or income), `period_end` (date), `item` (text), `value` (number) |
| `insider`            | `insider` (text), `role` (text), `transaction` (buy or sell), `shares` (number > 0), `price` (number > 0) |
| `dividends`          | `ex_date` (date), `amount` (number ≥ 0)                                    |
| `earnings_estimates` | `period_end` (date), `eps_estimate` (number), `revenue_estimate` (number), `analysts` (number ≥ 0) |
| `macro`              | `series` (text), `period` (date the value refers to), `value` (number); `ticker` may be omitted |
| `funding`            | `rate` (number in [-0.1, 0.1]: the perpetual's funding rate per funding interval, paid by longs when > 0); `available_at` is the funding time, in UTC |

Fundamentals are one row per (ticker, statement, period_end, item); `available_at` is the
filing date, so a restated period filed twice keeps both rows and a view sees the latest
filing it can. Bad input raises one `DataError` line naming the file, the 1-based data row
(header excluded) and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import DataError
from market.data import MarketData
from market.sources.files import read_table

EXCHANGE_TZ = "America/New_York"


@dataclass(frozen=True)
class Column:
    """One column of a channel schema: its kind and the values it may take."""

    kind: str
    """"text", "number", "date" (calendar day) or "timestamp"."""
    optional: bool = False
    """An empty value is allowed (stored as NaN / "")."""
    lo: float | None = None
    hi: float | None = None
    positive: bool = False
    choices: tuple[str, ...] = ()


_TEXT = Column("text")
SCHEMAS: dict[str, dict[str, Column]] = {
    "news": {"headline": _TEXT, "source": Column("text", optional=True),
             "sentiment": Column("number", optional=True, lo=-1, hi=1)},
    "social": {"text": _TEXT, "sentiment": Column("number", optional=True, lo=-1, hi=1),
               "likes": Column("number", lo=0)},
    "fundamentals": {"statement": Column("text", choices=("balance_sheet", "cashflow", "income")),
                     "period_end": Column("date"), "item": _TEXT, "value": Column("number")},
    "insider": {"insider": _TEXT, "role": Column("text", optional=True),
                "transaction": Column("text", choices=("buy", "sell")),
                "shares": Column("number", positive=True), "price": Column("number", positive=True)},
    "dividends": {"ex_date": Column("date"), "amount": Column("number", lo=0)},
    "earnings_estimates": {"period_end": Column("date"), "eps_estimate": Column("number"),
                           "revenue_estimate": Column("number", optional=True),
                           "analysts": Column("number", lo=0)},
    "macro": {"series": _TEXT, "period": Column("date"), "value": Column("number")},
    "funding": {"rate": Column("number", lo=-0.1, hi=0.1)},
}
"""Columns of each channel besides `ticker` and `available_at`."""

CHANNELS = tuple(SCHEMAS)

UTC_CHANNELS = ("funding",)
"""Channels of 24/7 crypto markets, whose times are UTC like their bars (an offset is converted to UTC)."""


def _fail(origin: str, row: int, field: str, what: str) -> DataError:
    return DataError(f"{origin}: row {row}: field {field}: {what}")


def _first(mask: np.ndarray) -> int | None:
    """1-based row of the first True in `mask`, or None."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) + 1 if len(hits) else None


def _present(value: object) -> bool:
    return not (value is None or (isinstance(value, float) and np.isnan(value)) or str(value).strip() == "")


def _parse_time(value: object, origin: str, row: int, field: str, tz: str = EXCHANGE_TZ) -> pd.Timestamp:
    """One timestamp in naive `tz` time (an offset is converted to `tz`: America/New_York by default)."""
    if not _present(value):
        raise _fail(origin, row, field, "missing")
    try:
        stamp = pd.Timestamp(value if isinstance(value, pd.Timestamp) else str(value).strip())
    except (ValueError, TypeError):
        raise _fail(origin, row, field, f"not a date/time ({value!r})") from None
    if stamp is pd.NaT:
        raise _fail(origin, row, field, "missing")
    return stamp.tz_convert(tz).tz_localize(None) if stamp.tzinfo is not None else stamp


def _parse_times(values: pd.Series, origin: str, field: str, day_only: bool, tz: str = EXCHANGE_TZ) -> pd.Series:
    """Timestamps of `values`; a date-only field keeps the calendar day."""
    if pd.api.types.is_datetime64_dtype(values.dtype):
        row = _first(values.isna().to_numpy())
        if row is not None:
            raise _fail(origin, row, field, "missing")
        stamps = pd.DatetimeIndex(values).astype("datetime64[ns]")
    else:
        stamps = pd.DatetimeIndex([_parse_time(v, origin, i + 1, field, tz) for i, v in enumerate(values)],
                                  dtype="datetime64[ns]")
    return pd.Series(stamps.normalize() if day_only else stamps, index=values.index)


def _parse_numbers(values: pd.Series, origin: str, field: str, spec: Column) -> pd.Series:
    present = values.map(_present).to_numpy(dtype=bool)
    numbers = pd.to_numeric(values.where(present), errors="coerce").astype(float)
    array = numbers.to_numpy()
    row = _first(np.isnan(array) & present)
    if row is not None:
        raise _fail(origin, row, field, f"not a number ({values.iloc[row - 1]!r})")
    row = _first(np.isinf(array))
    if row is not None:
        raise _fail(origin, row, field, f"infinite ({values.iloc[row - 1]!r})")
    row = _first(~present) if not spec.optional else None
    if row is not None:
        raise _fail(origin, row, field, "missing")
    with np.errstate(invalid="ignore"):
        low = array < spec.lo if spec.lo is not None else np.zeros(len(array), bool)
        high = array > spec.hi if spec.hi is not None else np.zeros(len(array), bool)
        row = _first(low | high)
        if row is not None:
            raise _fail(origin, row, field, f"{array[row - 1]} outside [{spec.lo}, {spec.hi}]")
        row = _first(array <= 0) if spec.positive else None
    if row is not None:
        raise _fail(origin, row, field, f"{array[row - 1]} is not positive")
    return numbers


def _parse_texts(values: pd.Series, origin: str, field: str, spec: Column) -> pd.Series:
    texts = values.map(lambda v: str(v).strip() if _present(v) else "")
    row = _first((texts == "").to_numpy()) if not spec.optional else None
    if row is not None:
        raise _fail(origin, row, field, "missing")
    if spec.choices:
        row = _first(~texts.isin(spec.choices).to_numpy())
        if row is not None:
            raise _fail(origin, row, field, f"{texts.iloc[row - 1]!r} is not one of {', '.join(spec.choices)}")
    return texts.astype(object)


def validate_records(raw: pd.DataFrame, channel: str, origin: str) -> pd.DataFrame:
    """The canonical frame of `channel` from a raw table, or one `DataError` line.

    Columns are matched case-insensitively; extra columns are dropped; rows are sorted by
    `available_at` (stable, so equal times keep their file order) and re-indexed 0..n-1.
    """
    if channel not in SCHEMAS:
        raise DataError(f"{origin}: unknown channel {channel!r}; channels are {', '.join(CHANNELS)}")
    frame = raw.rename(columns=lambda c: str(c).strip().lower()).reset_index(drop=True)
    if channel == "macro" and "ticker" not in frame.columns:
        frame["ticker"] = ""
    schema = {"ticker": Column("text", optional=channel == "macro"), "available_at": Column("timestamp"),
              **SCHEMAS[channel]}
    missing = [name for name in schema if name not in frame.columns]
    if missing:
        raise DataError(f"{origin}: missing column(s) {', '.join(missing)}")
    out = {}
    for name, spec in schema.items():
        values = frame[name]
        if spec.kind in ("date", "timestamp"):
            tz = "UTC" if channel in UTC_CHANNELS else EXCHANGE_TZ
            out[name] = _parse_times(values, origin, name, day_only=spec.kind == "date", tz=tz)
        elif spec.kind == "number":
            out[name] = _parse_numbers(values, origin, name, spec)
        else:
            out[name] = _parse_texts(values, origin, name, spec)
    result = pd.DataFrame(out)
    return result.sort_values("available_at", kind="stable").reset_index(drop=True)


def _read_jsonl(path: Path) -> pd.DataFrame:
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataError(f"{path}: row {len(rows) + 1} (line {i + 1}): invalid JSON ({error.msg})") from None
        if not isinstance(row, dict):
            raise DataError(f"{path}: row {len(rows) + 1} (line {i + 1}): not a JSON object")
        rows.append(row)
    return pd.DataFrame(rows)


def load_records(path: str | Path, channel: str) -> pd.DataFrame:
    """The records of `channel` in a `.jsonl` (one object per line) or `.csv` file."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    if path.suffix == ".jsonl":
        raw = _read_jsonl(path)
    elif path.suffix == ".csv":
        raw = read_table(path, dtype=str, keep_default_na=False)
    else:
        raise DataError(f"{path}: unsupported record file type {path.suffix!r} (use .jsonl or .csv)")
    if raw.empty:
        raise DataError(f"{path}: no rows")
    return validate_records(raw, channel, str(path))


def with_records(data: MarketData, files: Mapping[str, str | Path]) -> MarketData:
    """`data` with the record channels loaded from `files` ({channel: path}) added or replaced."""
    records = dict(data.records)
    for channel, path in files.items():
        records[channel] = load_records(path, channel)
    return replace(data, records=records)
