"""The debaters: bull and bear researchers, and the aggressive, conservative and neutral risk
analysts. Each turn is one LLM call that reads the situation and the debate so far and adds
one `Turn` to its debate; how many turns run, and in which order, is the router's business.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.runnables import Runnable

from multi_agent.prompting import lessons_part, reports_part, role_messages, section, turns_part
from multi_agent.state import DebateState, Node, Turn

DEBATER_INSTRUCTIONS = "Your turn: reply in a few plain sentences."


def create_debater(llm: Runnable, role: str, debate: str, context: Callable[[DebateState], list[str]]) -> Node:
    """A node that speaks once in the state's `debate` list ("debate" or "risk_debate"),
    having read `context(state)` and that debate so far."""

    def debater(state: DebateState) -> dict[str, Any]:
        parts = [*context(state), turns_part("The debate so far", state.get(debate, []))]
        reply = llm.invoke(role_messages(role, state, parts, DEBATER_INSTRUCTIONS))
        return {debate: [Turn(speaker=role, text=reply.content.strip())]}

    debater.__name__ = role
    return debater


def research_context(state: DebateState) -> list[str]:
    """What the researchers read: the reports and the lessons of past decisions."""
    return [reports_part(state), lessons_part(state)]


def risk_context(state: DebateState) -> list[str]:
    """What the risk analysts read: the reports and the trader's proposal."""
    return [reports_part(state), section("The trader's proposal", state.get("proposal_text", ""))]


def create_bull_researcher(llm: Runnable) -> Node:
    return create_debater(llm, "bull_researcher", "debate", research_context)


def create_bear_researcher(llm: Runnable) -> Node:
    return create_debater(llm, "bear_researcher", "debate", research_context)


def create_aggressive_analyst(llm: Runnable) -> Node:
    return create_debater(llm, "aggressive_analyst", "risk_debate", risk_context)


def create_conservative_analyst(llm: Runnable) -> Node:
    return create_debater(llm, "conservative_analyst", "risk_debate", risk_context)


def create_neutral_analyst(llm: Runnable) -> Node:
    return create_debater(llm, "neutral_analyst", "risk_debate", risk_context)
