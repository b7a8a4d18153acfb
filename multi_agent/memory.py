"""`OutcomeMemory`: the pipeline's own past ratings and how they turned out, leak-free.

TradingAgents lets its researchers, managers and trader recall past situations with the
reflection written once their outcome was known. Here memory keeps every rating the pipeline
gave per (ticker, seed) episode; a decision on day t is shown only the ratings whose outcome
— the close `horizon` trading days after the rated day over that day's close — can be read
through day t's `MarketView`. The view holds no bar after t, so no outcome resolved later
can leak in. Lessons are stated from the numbers; no LLM writes a reflection.
"""

from __future__ import annotations

import pandas as pd

from market.view import MarketView
from multi_agent.outputs import Rating


class OutcomeMemory:
    """Past ratings per episode, shown as lessons once their outcome is visible."""

    def __init__(self, horizon: int, lessons: int):
        self.horizon = horizon
        self.max_lessons = lessons
        self._ratings: dict[tuple[str, int], list[tuple[pd.Timestamp, Rating]]] = {}

    def remember(self, ticker: str, seed: int, date: pd.Timestamp, rating: Rating) -> None:
        """Keep the rating given to `ticker` on `date` in episode `seed`."""
        self._ratings.setdefault((ticker, seed), []).append((pd.Timestamp(date), rating))

    def outcome(self, view: MarketView, ticker: str, date: pd.Timestamp) -> float | None:
        """Return from the close of `date` to the close `horizon` bars later, if `view` shows it."""
        closes = view.bars(ticker, start=date)["close"]
        if len(closes) <= self.horizon or closes.index[0] != date:
            return None
        return float(closes.iloc[self.horizon] / closes.iloc[0] - 1)

    def lessons(self, view: MarketView, ticker: str, seed: int) -> str:
        """The newest resolved ratings of this episode, one line each ("" when none)."""
        lines = []
        for date, rating in reversed(self._ratings.get((ticker, seed), [])):
            moved = self.outcome(view, ticker, date)
            if moved is not None:
                lines.append(f"{date:%Y-%m-%d}: rated {rating.value}; the stock then moved "
                             f"{moved:+.1%} in {self.horizon} trading days.")
            if len(lines) == self.max_lessons:
                break
        return "\n".join(lines)
