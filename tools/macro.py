"""The macro tool: the latest release of every market-wide series (rates, CPI, oil, VIX, indexes)."""

from __future__ import annotations

import pandas as pd

from market.view import MarketView
from tools.args import CalendarDays, EndDate
from tools.guard import cutoff_of, end_of, has_channel, records_until
from tools.render import ToolResult, absent_channel, format_date


def _change_pct(history: pd.DataFrame, since: pd.Timestamp) -> float:
    """% change from the last value released at or before `since` to the latest value."""
    before = history.loc[history["available_at"] <= since, "value"]
    if before.empty or before.iloc[-1] == 0:
        return float("nan")
    return float(100 * (history["value"].iloc[-1] / before.iloc[-1] - 1))


def get_macro_indicators(view: MarketView, end_date: EndDate = None,
                         lookback_days: CalendarDays = 30) -> ToolResult:
    """Latest values of macroeconomic series (rates, inflation, oil, volatility, index levels) released by end_date.

    Each row gives the period the value refers to, when it was released, and its % change
    over lookback_days.
    """
    if not has_channel(view, "macro"):
        return absent_channel("macro")
    end = end_of(view, end_date)
    frame = records_until(view, "macro", "", end)
    if frame.empty:
        return ToolResult(title=f"Macro indicators: none released by {end:%Y-%m-%d}")
    since = cutoff_of(view, end) - pd.Timedelta(days=lookback_days)
    rows = []
    for series, history in frame.groupby("series", sort=True):
        last = history.iloc[-1]
        rows.append([series, float(last["value"]), format_date(last["period"]),
                     format_date(last["available_at"]), _change_pct(history, since)])
    return ToolResult(title=f"Macro indicators as of {end:%Y-%m-%d}",
                      columns=["series", "value", "period", "released", f"chg_{lookback_days}d_pct"], rows=rows)
