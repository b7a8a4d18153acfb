"""What FinAgent reads of the market on day t, as text, all through the decision's `MarketView`.

- `todays_news`: the news items of the ticker that became public during the decision day (after
  the previous bar's cutoff, up to this one's), oldest first, at most `limit` (the earliest):
  the headline and the source only — the synthetic channel's sentiment score is the model's to
  judge, not given.
- `price_moves`: the close-to-close move over the last 1, 7 and 14 bars (FinAgent's short,
  medium and long horizons), r_h = close_t / close_{t−h} − 1; "n/a" when the view holds fewer bars.
- `chart_text`: the deterministic chart-to-text rendering that stands in for FinAgent's Kline
  image: over the last `bars` bars (never after t, unlike the original's test-time chart, which
  showed 14 future days), the first and last close, the high and low with their dates, the
  close against its 5- and 20-bar simple moving averages, and how many bars closed up.
- `portfolio_text`: cash, shares and exposure at the close of t (the runner's portfolio state).
"""

from __future__ import annotations

import pandas as pd

from market.portfolio import PortfolioState
from market.view import MarketView

HORIZON_BARS = {"short": 1, "medium": 7, "long": 14}
"""Bars of each horizon (FinAgent's 1 / 7 / 14 past days)."""


def todays_news(view: MarketView, ticker: str, limit: int) -> list[str]:
    """Headlines ("headline (source)") of the news of `ticker` published during the decision day."""
    bars = view.bars(ticker, lookback=2)
    records = view.records("news", ticker)
    if records.empty or "headline" not in records:
        return []
    if len(bars) == 2:
        previous_cutoff = view.cutoff - (bars.index[-1] - bars.index[0])  # the previous bar's date + decision time
        records = records[records["available_at"] > previous_cutoff]
    records = records.sort_values("available_at", kind="stable").iloc[-limit:] if limit > 0 else records.iloc[:0]
    source = records["source"] if "source" in records else pd.Series("", index=records.index)
    return [f"{h} ({s})" if s else str(h) for h, s in zip(records["headline"], source)]


def move(closes: pd.Series, bars: int) -> float | None:
    """close_t / close_{t−bars} − 1, or None when `closes` is too short."""
    return None if len(closes) <= bars else float(closes.iloc[-1] / closes.iloc[-1 - bars] - 1)


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2%}"


def price_moves(view: MarketView, ticker: str) -> dict[str, float | None]:
    """The move over each horizon's bars, by horizon name (`HORIZON_BARS`)."""
    closes = view.bars(ticker, lookback=max(HORIZON_BARS.values()) + 1)["close"]
    return {name: move(closes, bars) for name, bars in HORIZON_BARS.items()}


def price_moves_text(view: MarketView, ticker: str) -> str:
    moves = price_moves(view, ticker)
    return "\n".join(f"- {name.capitalize()}-term, last {HORIZON_BARS[name]} trading day(s): {percent(value)}"
                     for name, value in moves.items())


def chart_text(view: MarketView, ticker: str, bars: int = 20) -> str:
    """The chart-to-text rendering of the last `bars` bars (module docstring)."""
    frame = view.bars(ticker, lookback=bars)
    if frame.empty:
        return "No price history."
    close, last = frame["close"], float(frame["close"].iloc[-1])
    first = float(close.iloc[0])
    sma5, sma20 = float(close.iloc[-5:].mean()), float(close.iloc[-20:].mean())

    def side(average: float) -> str:
        return "above" if last > average else "below"

    span = f"{frame.index[0]:%Y-%m-%d} to {frame.index[-1]:%Y-%m-%d}"
    extremes = (f"High {frame['high'].max():.2f} on {frame['high'].idxmax():%Y-%m-%d}; "
                f"low {frame['low'].min():.2f} on {frame['low'].idxmin():%Y-%m-%d}.")
    lines = [f"Last {len(frame)} trading days, {span}: close {first:.2f} -> {last:.2f} ({percent(last / first - 1)}).",
             f"{extremes} {int((close.diff() > 0).sum())} of {len(frame) - 1} days closed up.",
             f"Close vs 5-day average {sma5:.2f}: {side(sma5)}; vs 20-day average {sma20:.2f}: {side(sma20)}."]
    return "\n".join(lines)


def portfolio_text(portfolio: PortfolioState | None) -> str:
    if portfolio is None:
        return "Portfolio: not shown."
    return (f"Portfolio at today's close: cash {portfolio.cash:,.2f}, {portfolio.shares:g} shares at "
            f"{portfolio.close:.2f}, exposure {portfolio.exposure:.0%} of equity {portfolio.equity:,.2f}.")
