"""Memory entries are retrievable only once resolved; a decision's retrievals never see later outcomes."""

from __future__ import annotations

import pandas as pd
import pytest
from finagent_runs import END, START, make_agent, run

from finagent.memory import EpisodeMemory, MemoryEntry
from market.view import MarketView


def test_an_entry_is_shown_once_its_outcome_is_visible_and_not_before(market):
    days = market.trading_days("ALFA", START, END)
    memory = EpisodeMemory(resolve_bars=2)
    memory.add("ALFA", 0, [MemoryEntry(kind="intelligence", date=f"{days[0]:%Y-%m-%d}", text="ALFA wins")])
    assert memory.resolved(MarketView(market, days[1]), "ALFA", 0, "intelligence") == []
    shown = memory.resolved(MarketView(market, days[2]), "ALFA", 0, "intelligence")
    closes = market.frame("ALFA")["close"]
    assert [r.move for r in shown] == [pytest.approx(closes[days[2]] / closes[days[0]] - 1)]
    assert memory.resolved(MarketView(market, days[2]), "ALFA", 1, "intelligence") == []
    assert memory.resolved(MarketView(market, days[2]), "ALFA", 0, "decision") == []


@pytest.mark.slow
@pytest.mark.parametrize("resolve_bars", [1, 2])
def test_every_retrieval_at_day_t_holds_only_entries_resolved_by_t(market, tmp_path, resolve_bars):
    result = run(market, make_agent(resolve_bars=resolve_bars), tmp_path / "journal.sqlite")
    days = list(market.trading_days("ALFA", "2018-01-01", END))
    retrieved_any = False
    for entry in result.decisions:
        for dates in entry.decision.trace.extra["retrieved"].values():
            retrieved_any |= bool(dates)
            for date in dates:
                assert days.index(pd.Timestamp(date)) + resolve_bars <= days.index(entry.date)
    assert retrieved_any
