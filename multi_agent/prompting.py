"""Prompts: each role's own template file, and the structure every role shares, in code.

`prompts/<role>.md` holds what makes a role that role (its voice and its job) and is the
role's system prompt. It never names the stock or the date, so the system prompt — and, for
analysts, the tool list the chat template appends to it — is the same for every decision of
a role and an engine can reuse its KV cache. The user message carries the situation: the
stock and the date, the parts of the state the role reads, each under a heading, and last
the instructions of the role's kind (analyst, debater, decider): small models follow the
instruction they read last far better than one before a long context.
"""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from core.prompt_files import package_prompts, prompts_digest, read_template
from multi_agent.state import DebateState, Turn, ordered_reports

PROMPTS = package_prompts("multi_agent")


def template(role: str) -> str:
    """The text of `prompts/<role>.md`."""
    return read_template(PROMPTS, role)


def templates_digest() -> str:
    """SHA-256 over every template file's name and text: what the prompts depend on."""
    return prompts_digest(PROMPTS)


def role_messages(role: str, state: DebateState, parts: list[str], instructions: str) -> list[BaseMessage]:
    """A role's conversation: its template as the system prompt; the situation, the `parts` it
    reads and the `instructions` of its kind as the user message."""
    return [SystemMessage(template(role)), HumanMessage(situation(state, *parts, instructions))]


def speaker_name(role: str) -> str:
    """A node name as the roles read it: "bull_researcher" -> "Bull researcher"."""
    return role.replace("_", " ").capitalize()


def situation(state: DebateState, *parts: str) -> str:
    """The user message: the stock and the date, then every non-empty part."""
    header = f"Stock: {state['ticker']}. Date: {state['date']} (data after this date does not exist)."
    return "\n\n".join([header, *(part for part in parts if part)])


def section(title: str, body: str) -> str:
    """A titled block, or "" when there is nothing to show."""
    return f"{title}:\n{body.strip()}" if body.strip() else ""


def reports_part(state: DebateState) -> str:
    """The analysts' reports, one paragraph each."""
    return section("Analyst reports", "\n".join(f"[{name}] {text}" for name, text in ordered_reports(state)))


def turns_part(title: str, turns: list[Turn]) -> str:
    """A debate so far, one line per turn with its speaker."""
    return section(title, "\n".join(f"{speaker_name(t['speaker'])}: {t['text']}" for t in turns))


def lessons_part(state: DebateState) -> str:
    """Outcomes of the pipeline's earlier decisions (memory on)."""
    return section("Lessons from past decisions", state.get("lessons", ""))
