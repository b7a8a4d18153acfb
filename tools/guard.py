"""The look-ahead guard: every tool reads the market only through these helpers.

A `MarketView` already hides everything after its date. On top of it, a tool's `end_date`
may move the window *earlier*, never later: `end_of` clamps it to the view's date, and
`asks_future` reports whether a caller asked for the future (the trace flags it and the
single agent's reward penalises it). Record windows use the same cutoff rule as the view:
records whose `available_at` ≤ the decision time of the end date.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from market.view import MarketView
from tools.args import DateArg


class ToolInputError(ValueError):
    """An argument the agent can correct (unknown ticker, unparseable date, ...)."""


def parse_date(value: str) -> pd.Timestamp:
    """A calendar day from `YYYY-MM-DD` (or any unambiguous date text)."""
    try:
        stamp = pd.Timestamp(value)
    except (ValueError, TypeError):
        stamp = pd.NaT
    if stamp is pd.NaT:
        raise ToolInputError(f"end_date {value!r} is not a date (use YYYY-MM-DD)")
    return (stamp.tz_localize(None) if stamp.tzinfo else stamp).normalize()


def end_of(view: MarketView, end_date: str | None) -> pd.Timestamp:
    """The window's last day: `end_date` clamped to the view's date (None → the view's date)."""
    return view.asof if end_date is None else min(parse_date(end_date), view.asof)


def date_fields(model: type) -> list[str]:
    """Names of the fields of an argument model marked with `DateArg`."""
    return [name for name, info in model.model_fields.items()
            if any(isinstance(m, DateArg) for m in info.metadata)]


def asks_future(arguments: dict[str, Any], fields: list[str], view: MarketView) -> bool:
    """Whether any date field of `arguments` is after the view's date (`end_of` clamps it)."""
    return any(arguments.get(name) is not None and parse_date(arguments[name]) > view.asof for name in fields)


def check_ticker(view: MarketView, ticker: str) -> str:
    """`ticker` if the market holds it, else a `ToolInputError` listing the known ones."""
    if ticker not in view.tickers:
        raise ToolInputError(f"unknown ticker {ticker!r}; available: {', '.join(view.tickers)}")
    return ticker


def bars_until(view: MarketView, ticker: str, end: pd.Timestamp, count: int) -> pd.DataFrame:
    """The last `count` bars of `ticker` dated ≤ `end` (≤ the view's date)."""
    bars = view.bars(check_ticker(view, ticker), lookback=None)
    return bars.loc[bars.index <= end].iloc[-count:]


def cutoff_of(view: MarketView, end: pd.Timestamp) -> pd.Timestamp:
    """The decision time of day `end`: `end` + the view's time of day (the close), as in `MarketView`."""
    return end + (view.cutoff - view.asof)


def records_until(view: MarketView, channel: str, ticker: str, end: pd.Timestamp,
                  days: int | None = None) -> pd.DataFrame:
    """Records of `channel` for `ticker` public by the decision time of `end`, within `days`.

    With `days`, only records published in the last `days` calendar days up to that cutoff.
    """
    cutoff = cutoff_of(view, end)
    start = None if days is None else cutoff - pd.Timedelta(days=days)
    frame = view.records(channel, ticker=ticker, start=start)
    if frame.empty:
        return frame
    return frame.loc[frame["available_at"] <= cutoff].sort_values("available_at", kind="stable")


def ticker_records(view: MarketView, channel: str, ticker: str, end_date: str | None,
                   days: int | None = None) -> tuple[pd.DataFrame, pd.Timestamp]:
    """`records_until` for a known `ticker` and the window's last day `end_of(view, end_date)`; both."""
    end = end_of(view, end_date)
    return records_until(view, channel, check_ticker(view, ticker), end, days), end


def has_channel(view: MarketView, channel: str) -> bool:
    """Whether the market behind `view` carries the channel at all."""
    return channel in view.channels
