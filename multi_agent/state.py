"""The typed state one debate graph carries from the analysts to the portfolio manager.

Parallel analysts write to `reports` in the same step, so it merges their dicts; debate
turns, risk turns and parse failures accumulate. Routing reads the number of turns, never
their text.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypedDict, get_args

from multi_agent.outputs import PortfolioDecision, ResearchPlan, TraderProposal


AnalystName = Literal["market", "social", "news", "fundamentals"]


class Turn(TypedDict):
    """One speech in a debate: who spoke (the node name) and what they said."""

    speaker: str
    text: str


def merge(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    """Reducer for parallel writers of one dict: the union of both updates."""
    return {**left, **right}


class DebateState(TypedDict, total=False):
    """Everything the roles read and write for one (ticker, date)."""

    ticker: str
    date: str
    lessons: str
    """Resolved outcomes of earlier decisions (memory on), else empty."""
    reports: Annotated[dict[str, str], merge]
    """Analyst name -> report."""
    tool_calls: Annotated[dict[str, int], merge]
    """Analyst name -> tool calls it made (run, including those answered with an error)."""
    debate: Annotated[list[Turn], operator.add]
    plan: ResearchPlan | None
    plan_text: str
    proposal: TraderProposal | None
    proposal_text: str
    risk_debate: Annotated[list[Turn], operator.add]
    decision: PortfolioDecision | None
    decision_text: str
    parsed_as: Annotated[dict[str, str], merge]
    """Output kind ("plan", "proposal", "decision") -> how it was read: json, cut, text or failed."""
    raw_answers: Annotated[dict[str, str], merge]
    """Output kind -> the model's answer as it wrote it, before parsing."""
    parse_failures: Annotated[list[str], operator.add]
    """"kind: detail" lines: tool calls and outputs that did not parse."""


Node = Callable[[DebateState], dict[str, Any]]
"""A graph node: reads the state, returns its update."""


def ordered_reports(state: DebateState) -> list[tuple[str, str]]:
    """(analyst, report) pairs in the fixed analyst order, whichever analyst finished first."""
    reports = state.get("reports", {})
    return [(name, reports[name]) for name in get_args(AnalystName) if name in reports]
