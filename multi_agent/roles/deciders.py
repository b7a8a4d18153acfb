"""The deciders: research manager (plan), trader (proposal) and portfolio manager (decision).

Each is one LLM call whose answer is read as its pydantic output (`multi_agent.outputs`),
tolerantly. The state gets the output (None when it did not parse), the text the next roles
read (the output rendered, or the raw answer when it did not parse), how it was read, the raw
answer, and a "kind: detail" parse failure when it could not be read. With `answer_chars` set, the answer is
decoded under the grammar of `answer_schema(schema, answer_chars)` (constrained decoding), so
it parses unless the token budget cuts it, and even then names its rating first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.runnables import Runnable

from llm_backends.grammar import json_schema_grammar
from multi_agent.outputs import (PortfolioDecision, RatedOutput, ResearchPlan, TraderProposal, answer_schema,
                                 output_instructions, parse_output, render_output)
from multi_agent.prompting import lessons_part, role_messages, section, turns_part
from multi_agent.state import DebateState, Node


def answer_grammar(schema: type[RatedOutput], answer_chars: int | None) -> str | None:
    """The grammar a decider's answer is decoded under; None when decoding is free."""
    return None if answer_chars is None else json_schema_grammar(answer_schema(schema, answer_chars))


def create_decider(llm: Runnable, role: str, schema: type[RatedOutput], kind: str,
                   context: Callable[[DebateState], list[str]], answer_chars: int | None) -> Node:
    """A node that reads `context(state)`, answers as `schema` and writes it to `state[kind]`;
    constrained to `answer_schema(schema, answer_chars)` unless `answer_chars` is None."""
    instructions = output_instructions(schema, constrained=answer_chars is not None)
    grammar = answer_grammar(schema, answer_chars)
    llm = llm.bind(grammar=grammar) if grammar is not None else llm

    def decider(state: DebateState) -> dict[str, Any]:
        reply = llm.invoke(role_messages(role, state, context(state), instructions))
        parsed = parse_output(reply.content, schema)
        text = render_output(parsed.output) if parsed.output is not None else reply.content.strip()
        failures = [f"{kind}: {parsed.failure}"] if parsed.failure else []
        return {kind: parsed.output, f"{kind}_text": text, "parsed_as": {kind: parsed.how},
                "raw_answers": {kind: reply.content}, "parse_failures": failures}

    decider.__name__ = role
    return decider


def create_research_manager(llm: Runnable, answer_chars: int | None = None) -> Node:
    """Judges the bull/bear debate and writes the `plan`."""
    return create_decider(llm, "research_manager", ResearchPlan, "plan", lambda state: [
        turns_part("The bull/bear debate", state.get("debate", [])), lessons_part(state)], answer_chars)


def create_trader(llm: Runnable, answer_chars: int | None = None) -> Node:
    """Turns the plan into the transaction `proposal`."""
    return create_decider(llm, "trader", TraderProposal, "proposal", lambda state: [
        section("The research manager's plan", state.get("plan_text", "")), lessons_part(state)], answer_chars)


def create_portfolio_manager(llm: Runnable, answer_chars: int | None = None) -> Node:
    """Weighs plan, proposal and risk debate into the final `decision`."""
    return create_decider(llm, "portfolio_manager", PortfolioDecision, "decision", lambda state: [
        section("The research manager's plan", state.get("plan_text", "")),
        section("The trader's proposal", state.get("proposal_text", "")),
        turns_part("The risk debate", state.get("risk_debate", [])), lessons_part(state)], answer_chars)
