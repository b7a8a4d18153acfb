"""`EpisodeMemory`: what FinAgent wrote on earlier days of one (ticker, seed) episode, leak-free.

Kinds of entries (`MemoryEntry.kind`), as in FinAgent's memory:
- `intelligence`: one news item of a day, its headline and the model's insight, horizon and
  sentiment, with the day's summary;
- `low_level`: a day's low-level reflection (why the price moved as it did);
- `high_level`: a day's high-level reflection (what to change in the decisions);
- `decision`: the action taken on a day.

Point in time. An entry written on day s resolves `resolve_bars` bars later: its outcome, the
close of bar s + `resolve_bars` over the close of s, can then be read through the view. A
decision on day t sees only entries whose outcome its `MarketView` shows (bar s + `resolve_bars`
≤ t), each shown with that outcome; the view holds no bar after t, so nothing resolved later —
and no entry written on t itself — can reach it.

Resumption. Every entry a decision writes goes into its trace (`Decision.trace.extra["memory"]`,
plain JSON), and `add` takes them back from a journaled decision: a resumed run rebuilds the
same memory as the run that was not interrupted (`frameworks.finagent.FinAgent.recall`).
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import BaseModel

from market.view import MarketView

Kind = Literal["intelligence", "low_level", "high_level", "decision"]


class MemoryEntry(BaseModel):
    """One thing written on `date` (YYYY-MM-DD): `text` is what retrieval matches and prompts show."""

    kind: Kind
    date: str
    text: str
    action: str | None = None
    """The action, for `decision` entries."""


class Resolved(BaseModel):
    """An entry as a decision sees it: with the price move since it was written (a fraction)."""

    entry: MemoryEntry
    move: float


class EpisodeMemory:
    """Entries of every (ticker, seed) episode, shown only once resolved (module docstring)."""

    def __init__(self, resolve_bars: int):
        if resolve_bars < 1:
            raise ValueError(f"resolve_bars: {resolve_bars}; an entry resolves at least one bar after it was written")
        self.resolve_bars = resolve_bars
        self._entries: dict[tuple[str, int], list[MemoryEntry]] = {}

    def add(self, ticker: str, seed: int, entries: list[MemoryEntry | dict]) -> None:
        """Append entries (or their JSON dicts, from a journaled trace) to the episode's memory."""
        self._entries.setdefault((ticker, seed), []).extend(MemoryEntry.model_validate(e) for e in entries)

    def entries(self, ticker: str, seed: int) -> list[MemoryEntry]:
        """Everything the episode wrote, in order (resolved or not)."""
        return list(self._entries.get((ticker, seed), []))

    def resolved(self, view: MarketView, ticker: str, seed: int, kind: Kind) -> list[Resolved]:
        """The episode's entries of `kind` whose outcome `view` shows, oldest first, with that outcome."""
        closes = view.bars(ticker)["close"]
        dates = closes.index
        shown = []
        for entry in self._entries.get((ticker, seed), []):
            if entry.kind != kind:
                continue
            at = dates.searchsorted(pd.Timestamp(entry.date))
            if at >= len(dates) or dates[at] != pd.Timestamp(entry.date) or at + self.resolve_bars >= len(dates):
                continue
            shown.append(Resolved(entry=entry, move=float(closes.iloc[at + self.resolve_bars] / closes.iloc[at] - 1)))
        return shown
