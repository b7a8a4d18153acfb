"""Text tools: news headlines and social-media posts about one stock, with sentiment."""

from __future__ import annotations

import pandas as pd

from market.view import MarketView
from tools.args import CalendarDays, EndDate, Limit, Ticker
from tools.guard import has_channel, ticker_records
from tools.render import ToolResult, absent_channel, format_date


def _mean(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.mean()) if len(values) else float("nan")


def _text_window(view: MarketView, channel: str, ticker: str, end_date: str | None, days: int,
                 limit: int, columns: list[str], label: str) -> ToolResult:
    """The latest `limit` records of a text channel (newest first) and their mean sentiment."""
    if not has_channel(view, channel):
        return absent_channel(channel)
    frame, end = ticker_records(view, channel, ticker, end_date, days)
    title = f"{ticker} {label}, {days} days to {end:%Y-%m-%d}: {len(frame)} items"
    if frame.empty:
        return ToolResult(title=title)
    latest = frame.iloc[::-1].iloc[:limit]
    rows = [[format_date(row["available_at"]), *(row[c] for c in columns)] for _, row in latest.iterrows()]
    return ToolResult(title=title, columns=["time", *columns], rows=rows,
                      summary={"count": len(frame), "mean_sentiment": _mean(frame["sentiment"])})


def get_news_data(view: MarketView, ticker: Ticker, end_date: EndDate = None,
                  lookback_days: CalendarDays = 7, limit: Limit = 5) -> ToolResult:
    """Recent news headlines about a stock with their sentiment score (-1 negative .. +1 positive).

    The summary gives the number of headlines in the window and their mean sentiment.
    """
    return _text_window(view, "news", ticker, end_date, lookback_days, limit,
                        ["sentiment", "source", "headline"], "news")


def get_reddit_data(view: MarketView, ticker: Ticker, end_date: EndDate = None,
                    lookback_days: CalendarDays = 7, limit: Limit = 5) -> ToolResult:
    """Recent social-media posts (Reddit-style) about a stock with likes and sentiment (-1 .. +1).

    The summary gives the number of posts in the window and their mean sentiment.
    """
    return _text_window(view, "social", ticker, end_date, lookback_days, limit,
                        ["sentiment", "likes", "text"], "social posts")
