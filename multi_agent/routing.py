"""Who speaks next, decided by counting turns in the typed state (never by reading them).

A debate of `rounds` rounds among `speakers` runs exactly `rounds * len(speakers)` turns, the
speakers in their fixed order, then hands over to the next stage.
"""

from __future__ import annotations

from multi_agent.state import DebateState

RESEARCHERS = ("bull_researcher", "bear_researcher")
RISK_ANALYSTS = ("aggressive_analyst", "conservative_analyst", "neutral_analyst")


def next_speaker(turns: int, speakers: tuple[str, ...], rounds: int, then: str) -> str:
    """The speaker of turn number `turns` (0-based), or `then` once every round is done."""
    return then if turns >= rounds * len(speakers) else speakers[turns % len(speakers)]


def after_research_turn(state: DebateState, rounds: int) -> str:
    """Bull, bear, bull, ... for `rounds` rounds, then the research manager."""
    return next_speaker(len(state.get("debate", [])), RESEARCHERS, rounds, "research_manager")


def after_risk_turn(state: DebateState, rounds: int) -> str:
    """Aggressive, conservative, neutral, ... for `rounds` rounds, then the portfolio manager."""
    return next_speaker(len(state.get("risk_debate", [])), RISK_ANALYSTS, rounds, "portfolio_manager")
