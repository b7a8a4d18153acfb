"""Memory sees only outcomes that the decision date's market view can show."""

from __future__ import annotations

import pytest
from scripted import ScriptedEngine

from market.view import MarketView
from multi_agent.memory import OutcomeMemory
from multi_agent.outputs import Rating
from multi_agent.pipeline import DebatePipeline
from multi_agent.settings import DebateSettings


def closes(market, ticker, start, count):
    return market.frame(ticker).loc[start:]["close"].iloc[:count]


def test_an_outcome_is_shown_once_its_horizon_has_passed_and_not_before(market):
    memory = OutcomeMemory(horizon=3, lessons=5)
    days = market.trading_days("MSFT", "2020-02-03", "2020-02-14")
    memory.remember("MSFT", 0, days[0], Rating.BUY)
    assert memory.lessons(MarketView(market, days[2]), "MSFT", 0) == ""
    assert memory.outcome(MarketView(market, days[2]), "MSFT", days[0]) is None
    shown = memory.lessons(MarketView(market, days[3]), "MSFT", 0)
    close = closes(market, "MSFT", days[0], 4)
    assert shown == (f"2020-02-03: rated Buy; the stock then moved {close.iloc[3] / close.iloc[0] - 1:+.1%} "
                     "in 3 trading days.")


def test_lessons_are_per_episode_newest_first_and_bounded(market):
    memory = OutcomeMemory(horizon=1, lessons=2)
    days = market.trading_days("MSFT", "2020-02-03", "2020-02-14")
    for day, rating in zip(days[:4], [Rating.BUY, Rating.HOLD, Rating.SELL, Rating.OVERWEIGHT]):
        memory.remember("MSFT", 0, day, rating)
    memory.remember("MSFT", 1, days[0], Rating.UNDERWEIGHT)
    lines = memory.lessons(MarketView(market, days[4]), "MSFT", 0).splitlines()
    assert [line.split(";")[0] for line in lines] == [f"{days[3]:%Y-%m-%d}: rated Overweight",
                                                      f"{days[2]:%Y-%m-%d}: rated Sell"]
    assert memory.lessons(MarketView(market, days[4]), "NVDA", 0) == ""


def test_a_later_price_change_cannot_reach_an_earlier_decision(market):
    memory = OutcomeMemory(horizon=2, lessons=3)
    days = market.trading_days("MSFT", "2020-02-03", "2020-02-14")
    memory.remember("MSFT", 0, days[0], Rating.BUY)
    before = memory.lessons(MarketView(market, days[1]), "MSFT", 0)
    market.bars["MSFT"].loc[days[2], "close"] *= 10
    try:
        assert memory.lessons(MarketView(market, days[1]), "MSFT", 0) == before == ""
    finally:
        market.bars["MSFT"].loc[days[2], "close"] /= 10


@pytest.mark.parametrize("memory_on", [True, False])
def test_the_pipeline_shows_resolved_lessons_to_the_remembering_roles(contexts, memory_on):
    engine = ScriptedEngine()
    pipeline = DebatePipeline(DebateSettings(memory=memory_on, memory_horizon=1, analysts=("market",)), engine)
    for date in ("2020-02-03", "2020-02-04", "2020-02-05"):
        pipeline.decide(contexts(("MSFT", date)))
    last = [c for c in engine.calls if "2020-02-05" in c.prompt]
    shown = {c.role for c in last if "Lessons from past decisions:" in c.prompt}
    expected = {"bull_researcher", "bear_researcher", "research_manager", "trader", "portfolio_manager"}
    assert shown == (expected if memory_on else set())
    if memory_on:
        prompt = next(c.prompt for c in last if c.role == "trader")
        assert "2020-02-04: rated Buy" in prompt and "2020-02-03: rated Buy" in prompt
        first = [c for c in engine.calls if "2020-02-03" in c.prompt.split("\n")[0]]
        assert not any("Lessons" in c.prompt for c in first)
