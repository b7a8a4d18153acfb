"""Macro records (`macro` channel, ticker "") from the series shipped in `arch.data`.

`available_at` is when each value was public, as this module assumes it:

| series    | arch.data module (FRED code)   | frequency | available_at                                   |
|-----------|--------------------------------|-----------|------------------------------------------------|
| sp500     | sp500 (S&P 500 close)          | daily     | that day, 16:00 (the close)                    |
| nasdaq    | nasdaq (NASDAQ Composite close) | daily    | that day, 16:00                                |
| vix       | vix (VIXCLS)                   | daily     | that day, 16:00                                |
| wti       | wti (DCOILWTICO, $/barrel)     | daily     | that day, 14:30 (NYMEX settlement)             |
| core_cpi  | core_cpi (CPILFESL, index)     | monthly   | the 20th of the next month, 08:30              |
| aaa_yield | default (AAA, %)               | monthly   | the 1st of the next month, 09:00               |
| baa_yield | default (BAA, %)               | monthly   | the 1st of the next month, 09:00               |

Core CPI for month M is published by the BLS around the 10th–17th of M+1 at 08:30; taking the
20th errs late, so a backtest may see a release a few days after it happened, never before.
Moody's AAA/BAA yields are monthly averages, complete at the end of the month. `period` is
the day (daily) or the first day of the month (monthly) the value refers to.
"""

from __future__ import annotations

import importlib

import pandas as pd

from market.sources.records import validate_records

_DAILY = (("sp500", "sp500", "Close", 16 * 60), ("nasdaq", "nasdaq", "Close", 16 * 60),
          ("vix", "vix", "vix", 16 * 60), ("wti", "wti", "DCOILWTICO", 14 * 60 + 30))
_MONTHLY = (("core_cpi", "core_cpi", "CPILFESL", pd.DateOffset(months=1, days=19), 8 * 60 + 30),
            ("aaa_yield", "default", "AAA", pd.DateOffset(months=1), 9 * 60),
            ("baa_yield", "default", "BAA", pd.DateOffset(months=1), 9 * 60))


def _load(module: str, column: str) -> pd.Series:
    frame = importlib.import_module(f"arch.data.{module}").load()
    values = pd.to_numeric(frame[column], errors="coerce").dropna()
    values.index = pd.DatetimeIndex(values.index).astype("datetime64[ns]").normalize()
    return values


def _frame(series: str, values: pd.Series, released: pd.DatetimeIndex) -> pd.DataFrame:
    return pd.DataFrame({"ticker": "", "available_at": released, "series": series,
                         "period": values.index, "value": values.to_numpy(dtype=float)})


def embedded_macro() -> pd.DataFrame:
    """The `macro` channel of the embedded data (see the module table), sorted by release."""
    frames = []
    for series, module, column, minutes in _DAILY:
        values = _load(module, column)
        frames.append(_frame(series, values, values.index + pd.Timedelta(minutes=minutes)))
    for series, module, column, lag, minutes in _MONTHLY:
        values = _load(module, column)
        frames.append(_frame(series, values, values.index + lag + pd.Timedelta(minutes=minutes)))
    return validate_records(pd.concat(frames, ignore_index=True), "macro", "arch.data")
