"""Company tools: financial statements, insider transactions, dividends, earnings estimates.

Statements come from the `fundamentals` channel (one row per item and period, available at
its filing date); a period restated later shows its latest filing visible at end_date.
"""

from __future__ import annotations

import pandas as pd

from market.view import MarketView
from tools.args import CalendarDays, EndDate, Limit, Periods, Ticker
from tools.guard import has_channel, ticker_records
from tools.render import ToolResult, absent_channel, format_date

STATEMENT_LABELS = {"balance_sheet": "balance sheet", "cashflow": "cash-flow statement",
                    "income": "income statement"}


def _latest_per(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """For each value of `keys`, the rows of its latest `available_at` (the last filing)."""
    newest = frame.groupby(keys)["available_at"].transform("max")
    return frame.loc[frame["available_at"] == newest]


def _statement(view: MarketView, ticker: str, end_date: str | None, periods: int, statement: str) -> ToolResult:
    """Items × the `periods` latest reporting periods of one statement, as last filed by end_date."""
    label = STATEMENT_LABELS[statement]
    if not has_channel(view, "fundamentals"):
        return absent_channel("fundamentals")
    frame, end = ticker_records(view, "fundamentals", ticker, end_date)
    frame = _latest_per(frame.loc[frame["statement"] == statement], ["period_end"])
    if frame.empty:
        return ToolResult(title=f"{ticker} {label}: nothing filed by {end:%Y-%m-%d}")
    shown = sorted(frame["period_end"].unique())[-periods:][::-1]
    filed = frame.groupby("period_end")["available_at"].max()
    table = frame.pivot_table(index="item", columns="period_end", values="value", aggfunc="last", sort=False)
    return ToolResult(
        title=f"{ticker} {label} (period end, filed): "
              + "; ".join(f"{format_date(p)} filed {format_date(filed[p])}" for p in shown),
        columns=["item", *(format_date(p) for p in shown)],
        rows=[[item, *(float(table.at[item, p]) for p in shown)] for item in table.index],
    )


def get_balance_sheet(view: MarketView, ticker: Ticker, end_date: EndDate = None,
                      periods: Periods = 2) -> ToolResult:
    """The company's latest filed balance sheets (assets, liabilities, equity, cash, debt)."""
    return _statement(view, ticker, end_date, periods, "balance_sheet")


def get_cashflow(view: MarketView, ticker: Ticker, end_date: EndDate = None, periods: Periods = 2) -> ToolResult:
    """The company's latest filed cash-flow statements (operating, investing, financing, free cash flow)."""
    return _statement(view, ticker, end_date, periods, "cashflow")


def get_income_statements(view: MarketView, ticker: Ticker, end_date: EndDate = None,
                          periods: Periods = 2) -> ToolResult:
    """The company's latest filed income statements (revenue, margins, net income, EPS)."""
    return _statement(view, ticker, end_date, periods, "income")


def get_insider_transactions(view: MarketView, ticker: Ticker, end_date: EndDate = None,
                             lookback_days: CalendarDays = 90, limit: Limit = 5) -> ToolResult:
    """Recent insider buys and sells of a stock (who, role, shares, price), newest first.

    The summary counts buys and sells in the window and their net shares (buys − sells).
    """
    if not has_channel(view, "insider"):
        return absent_channel("insider")
    frame, end = ticker_records(view, "insider", ticker, end_date, lookback_days)
    title = f"{ticker} insider transactions, {lookback_days} days to {end:%Y-%m-%d}: {len(frame)}"
    if frame.empty:
        return ToolResult(title=title)
    buys = frame["transaction"] == "buy"
    columns = ["insider", "role", "transaction", "shares", "price"]
    rows = [[format_date(r["available_at"]), *(r[c] for c in columns)] for _, r in frame.iloc[::-1].iloc[:limit].iterrows()]
    net = float(frame.loc[buys, "shares"].sum() - frame.loc[~buys, "shares"].sum())
    return ToolResult(title=title, columns=["time", *columns], rows=rows,
                      summary={"buys": int(buys.sum()), "sells": int((~buys).sum()), "net_shares": net})


def get_dividends(view: MarketView, ticker: Ticker, end_date: EndDate = None,
                  lookback_days: CalendarDays = 365, limit: Limit = 8) -> ToolResult:
    """Dividends of a stock declared in the window: declaration time, ex-dividend date, amount per share."""
    if not has_channel(view, "dividends"):
        return absent_channel("dividends")
    frame, end = ticker_records(view, "dividends", ticker, end_date, lookback_days)
    title = f"{ticker} dividends declared, {lookback_days} days to {end:%Y-%m-%d}: {len(frame)}"
    if frame.empty:
        return ToolResult(title=title)
    rows = [[format_date(r["available_at"]), format_date(r["ex_date"]), float(r["amount"])]
            for _, r in frame.iloc[::-1].iloc[:limit].iterrows()]
    return ToolResult(title=title, columns=["declared", "ex_date", "amount"], rows=rows,
                      summary={"total": float(frame["amount"].sum())})


def get_earnings_estimate(view: MarketView, ticker: Ticker, end_date: EndDate = None,
                          limit: Limit = 4) -> ToolResult:
    """Analysts' consensus EPS and revenue estimates per fiscal period, as last published by end_date.

    `eps_revision` is the change of the EPS estimate since the previous consensus for that period.
    """
    if not has_channel(view, "earnings_estimates"):
        return absent_channel("earnings_estimates")
    frame, end = ticker_records(view, "earnings_estimates", ticker, end_date)
    if frame.empty:
        return ToolResult(title=f"{ticker} earnings estimates: none published by {end:%Y-%m-%d}")
    revision = frame.groupby("period_end")["eps_estimate"].diff()
    latest = frame.assign(eps_revision=revision).groupby("period_end").tail(1)
    latest = latest.sort_values("period_end", ascending=False).iloc[:limit]
    columns = ["eps_estimate", "eps_revision", "revenue_estimate", "analysts"]
    rows = [[format_date(r["period_end"]), format_date(r["available_at"]), *(float(r[c]) for c in columns)]
            for _, r in latest.iterrows()]
    return ToolResult(title=f"{ticker} consensus estimates as of {end:%Y-%m-%d}",
                      columns=["period_end", "published", *columns], rows=rows)
