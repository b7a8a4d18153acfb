"""The deciders: research manager (plan), trader (proposal) and portfolio manager (decision).

Each is one LLM call whose answer is read as its pydantic output (`multi_agent.outputs`),
tolerantly. The state gets the output (None when it did not parse), the text the next roles
read (the output rendered, or the raw answer when it did not parse), how it was read, and a
"kind: detail" parse failure when it could not be read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.runnables import Runnable

from multi_agent.outputs import (PortfolioDecision, RatedOutput, ResearchPlan, TraderProposal, output_instructions,
                                 parse_output, render_output)
from multi_agent.prompting import lessons_part, role_messages, section, turns_part
from multi_agent.state import DebateState, Node

def create_decider(llm: Runnable, role: str, schema: type[RatedOutput], kind: str,
                   context: Callable[[DebateState], list[str]]) -> Node:
    """A node that reads `context(state)`, answers as `schema` and writes it to `state[kind]`."""
    instructions = output_instructions(schema)

    def decider(state: DebateState) -> dict[str, Any]:
        reply = llm.invoke(role_messages(role, state, context(state), instructions))
        parsed = parse_output(reply.content, schema)
        text = render_output(parsed.output) if parsed.output is not None else reply.content.strip()
        failures = [f"{kind}: {parsed.failure}"] if parsed.failure else []
        return {kind: parsed.output, f"{kind}_text": text, "parsed_as": {kind: parsed.how}, "parse_failures": failures}

    decider.__name__ = role
    return decider


def create_research_manager(llm: Runnable) -> Node:
    """Judges the bull/bear debate and writes the `plan`."""
    return create_decider(llm, "research_manager", ResearchPlan, "plan", lambda state: [
        turns_part("The bull/bear debate", state.get("debate", [])), lessons_part(state)])


def create_trader(llm: Runnable) -> Node:
    """Turns the plan into the transaction `proposal`."""
    return create_decider(llm, "trader", TraderProposal, "proposal", lambda state: [
        section("The research manager's plan", state.get("plan_text", "")), lessons_part(state)])


def create_portfolio_manager(llm: Runnable) -> Node:
    """Weighs plan, proposal and risk debate into the final `decision`."""
    return create_decider(llm, "portfolio_manager", PortfolioDecision, "decision", lambda state: [
        section("The research manager's plan", state.get("plan_text", "")),
        section("The trader's proposal", state.get("proposal_text", "")),
        turns_part("The risk debate", state.get("risk_debate", [])), lessons_part(state)])
