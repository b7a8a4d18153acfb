"""Price tools: daily bars and technical indicators of one stock."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from market.view import MarketView
from tools.args import EndDate, Ticker, TradingDays
from tools.guard import bars_until, end_of
from tools.indicators import HISTORY_BARS, INDICATOR_NAMES, indicator_table
from tools.render import ToolResult, format_date

IndicatorNames = Annotated[
    list[Literal[INDICATOR_NAMES]] | None,
    Field(description="Indicators to compute; all when omitted.", min_length=1),
]


def _no_bars(ticker: str, end) -> ToolResult:
    return ToolResult(title=f"{ticker}: no bars at or before {end:%Y-%m-%d}")


def get_market_data(view: MarketView, ticker: Ticker, end_date: EndDate = None,
                    lookback_days: TradingDays = 10) -> ToolResult:
    """Daily OHLCV bars (open, high, low, close, volume) of a stock for the last trading days up to end_date.

    The summary gives the last close, the window's return from first to last close (%) and
    its highest high and lowest low.
    """
    end = end_of(view, end_date)
    bars = bars_until(view, ticker, end, lookback_days)
    if bars.empty:
        return _no_bars(ticker, end)
    rows = [[format_date(day), *(float(bar[c]) for c in ("open", "high", "low", "close", "volume"))]
            for day, bar in bars.iterrows()]
    first, last = float(bars["close"].iloc[0]), float(bars["close"].iloc[-1])
    return ToolResult(
        title=f"{ticker} daily bars {format_date(bars.index[0])}..{format_date(bars.index[-1])}",
        columns=["date", "open", "high", "low", "close", "volume"],
        rows=rows,
        summary={"last_close": last, "return_pct": 100 * (last / first - 1),
                 "high": float(bars["high"].max()), "low": float(bars["low"].min())},
    )


def get_stock_indicators(view: MarketView, ticker: Ticker, indicators: IndicatorNames = None,
                         end_date: EndDate = None, lookback_days: TradingDays = 5) -> ToolResult:
    """Technical indicators of a stock for the last trading days up to end_date.

    Available: sma20, ema10, vwma20, rsi14, stoch (%K, %D of 14,3,3), cci21, bbands (20, 2),
    atr14, obv, cmf (20), macd (12, 26, 9). Values before enough history are `na`.
    """
    end = end_of(view, end_date)
    names = list(dict.fromkeys(indicators or INDICATOR_NAMES))
    bars = bars_until(view, ticker, end, HISTORY_BARS + lookback_days)
    if bars.empty:
        return _no_bars(ticker, end)
    table = indicator_table(bars, names).iloc[-lookback_days:]
    rows = [[format_date(day), *map(float, values)] for day, values in zip(table.index, table.to_numpy())]
    return ToolResult(
        title=f"{ticker} indicators {format_date(table.index[0])}..{format_date(table.index[-1])}",
        columns=["date", *table.columns],
        rows=rows,
        summary={"last_close": float(bars["close"].iloc[-1])},
    )
