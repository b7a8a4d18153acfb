"""A journaled trace laid out in reading order, as the blocks a decision page shows.

A trace (`market.decision.Trace`, read as plain JSON) takes one of three shapes:

* **conversation** (the single agent): system and user prompt, then each assistant turn with
  the tool results that answered it. A turn block holds the raw text cut into segments
  (``think``, ``tool_call``, ``answer`` and plain ``text``; joined they are the raw text,
  character for character), the LLM call that wrote it (tokens, latency), the tool calls that
  followed it (the journal's record: name, arguments as executed, flags; and the result the
  model read) and the parse failures of that turn (``"<kind>: turn <i>: ..."`` lines).
  Turns are paired with LLM calls, and tool messages with tool-call records, by position, and
  only when their counts agree (a self-consistency trace shows one episode's messages but
  counts every episode's calls: its calls are then listed whole under the outcome).
* **debate** (the multi-agent pipeline): one block per node in graph order (the messages of
  `multi_agent.pipeline.transcript`), each with the LLM calls booked under its role, the tools
  it was offered and the calls of them (an analyst's, given the framework's ``analyst_tools``),
  its parse failures, and for the three deciders what was parsed from the answer: the rating
  (``trace.extra``: ``plan_recommendation``, ``trader_action``, ``rating``), how it was read
  (``parsed_as``: json, cut, text, failed) and the raw answer when the trace keeps it
  (``raw_answers``).
* **generic**: any other framework's messages in order, its calls listed whole.

Every shape ends with an outcome block: the executed decision, fallback and error, the end
reason, the recorded reward components, the rest of ``extra``, whatever could not be paired,
and any trace field this module does not know (newer journal formats show up there instead of
being dropped). A rule baseline's empty trace has no blocks.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

KNOWN_TRACE_FIELDS = ("messages", "tool_calls", "llm_calls", "parse_failures", "error", "fallback", "extra")
"""The `Trace` fields the blocks place; any other field is shown as it is under the outcome."""

SEGMENT = re.compile(r"<(think|tool_call|answer)>.*?</\1>", re.DOTALL)
"""A closed protocol tag in a model's text (`single_agent.tags`); unclosed tags stay plain text."""

TURN_FAILURE = re.compile(r"^[\w-]+: turn (\d+):")
"""A parse-failure line tied to a turn (`single_agent.episode.Episode.parse_failures`)."""

DEBATE_STAGES: dict[str, str] = {
    "market_analyst": "Analyst reports", "social_analyst": "Analyst reports", "news_analyst": "Analyst reports",
    "fundamentals_analyst": "Analyst reports", "bull_researcher": "Bull / bear debate",
    "bear_researcher": "Bull / bear debate", "research_manager": "Research plan", "trader": "Trader proposal",
    "aggressive_analyst": "Risk debate", "conservative_analyst": "Risk debate", "neutral_analyst": "Risk debate",
    "portfolio_manager": "Final decision",
}
"""The stage of the debate each node belongs to (`multi_agent.graph`); other roles get none."""

DEBATE_OUTPUTS: dict[str, tuple[str, str]] = {
    "research_manager": ("plan", "plan_recommendation"),
    "trader": ("proposal", "trader_action"),
    "portfolio_manager": ("decision", "rating"),
}
"""Decider role -> (its output's name in `parsed_as` / `raw_answers`, the `extra` key of its parsed rating)."""

DEBATE_EXTRA = ("rating", "plan_recommendation", "trader_action", "parsed_as", "raw_answers")
"""The debate's `extra` keys that the node blocks show (the outcome lists the others)."""


def segments(text: str) -> list[tuple[str, str]]:
    """`text` cut into (kind, piece) pairs: each closed think / tool_call / answer block, tags
    included, and the plain text between them; ``"".join(piece for _, piece in ...) == text``."""
    parts, at = [], 0
    for match in SEGMENT.finditer(text):
        if match.start() > at:
            parts.append(("text", text[at:match.start()]))
        parts.append((match.group(1), match.group(0)))
        at = match.end()
    if at < len(text) or not parts:
        parts.append(("text", text[at:]))
    return parts


def trace_shape(trace: dict[str, Any]) -> str:
    """"conversation", "debate", "generic", or "none" for an empty trace (a rule's decision)."""
    roles = {m.get("role") for m in trace.get("messages", [])}
    if "assistant" in roles:
        return "conversation"
    if roles & ({c.get("role") for c in trace.get("llm_calls", [])} | set(DEBATE_STAGES)):
        return "debate"
    if roles or trace.get("llm_calls") or trace.get("tool_calls"):
        return "generic"
    return "none"


def _paired(items: list, count: int) -> list | None:
    """`items` when there is exactly one per slot (`count` slots), else None (not pairable)."""
    return items if len(items) == count else None


def _conversation(trace: dict[str, Any], leftovers: dict[str, list]) -> list[dict[str, Any]]:
    messages = trace.get("messages", [])
    turns = [m for m in messages if m.get("role") == "assistant"]
    answers = [m for m in messages if m.get("role") == "tool"]
    llm = _paired(trace.get("llm_calls", []), len(turns))
    records = _paired(trace.get("tool_calls", []), len(answers))
    by_turn: dict[int, list[str]] = defaultdict(list)
    for line in trace.get("parse_failures", []):
        match = TURN_FAILURE.match(line)
        (by_turn[int(match.group(1))] if match else leftovers["failures"]).append(line)
    if llm is None:
        leftovers["llm_calls"] = trace.get("llm_calls", [])
    if records is None:
        leftovers["tool_calls"] = trace.get("tool_calls", [])

    first = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), len(messages))
    blocks: list[dict[str, Any]] = [{"type": "prompt", "messages": messages[:first]}] if first else []
    turn, answered = -1, 0
    for message in messages[first:]:
        if message.get("role") == "assistant":
            turn += 1
            pieces = segments(str(message.get("content") or ""))
            blocks.append({"type": "turn", "n": turn + 1, "segments": pieces,
                           "llm": llm[turn] if llm else None, "calls": [], "failures": by_turn.pop(turn, []),
                           "answer": next((p[len("<answer>"):-len("</answer>")].strip()
                                           for kind, p in pieces if kind == "answer"), None)})
        elif message.get("role") == "tool" and blocks and blocks[-1]["type"] == "turn":
            blocks[-1]["calls"].append({"name": message.get("name", ""), "result": str(message.get("content") or ""),
                                        "record": records[answered] if records else None})
            answered += 1
        else:
            blocks.append({"type": "message", "role": message.get("role", "?"), "text": str(message.get("content") or "")})
    leftovers["failures"] += [line for lines in by_turn.values() for line in lines]
    return blocks


def _debate(trace: dict[str, Any], tool_roles: dict[str, str], leftovers: dict[str, list]) -> list[dict[str, Any]]:
    messages, extra = trace.get("messages", []), trace.get("extra", {})
    calls_by_role: dict[str, list] = defaultdict(list)
    for call in trace.get("llm_calls", []):
        calls_by_role[call.get("role", "")].append(call)
    spoken = defaultdict(int)
    for message in messages:
        spoken[message.get("role")] += 1
    tools_by_role: dict[str, list] = defaultdict(list)
    for call in trace.get("tool_calls", []):
        role = tool_roles.get(call.get("name", ""))
        (tools_by_role[role] if role in spoken else leftovers["tool_calls"]).append(call)
    failures = list(trace.get("parse_failures", []))

    blocks, seen = [], defaultdict(int)
    for message in messages:
        role = message.get("role", "?")
        seen[role] += 1
        last = seen[role] == spoken[role]
        mine = calls_by_role.get(role, [])
        # one LLM call per speech; an analyst's tool rounds put several calls on its one report
        llm = mine[seen[role] - 1:seen[role]] if not last else mine[seen[role] - 1:]
        block = {"type": "node", "role": role, "stage": DEBATE_STAGES.get(role), "text": str(message.get("content") or ""),
                 "llm": llm, "calls": tools_by_role.pop(role, []) if last else [], "failures": [],
                 "offered": [tool for tool, owner in tool_roles.items() if owner == role]}
        if role in DEBATE_OUTPUTS and last:
            output, rating_key = DEBATE_OUTPUTS[role]
            block["parsed"] = {"output": output, "value": extra.get(rating_key),
                               "how": extra.get("parsed_as", {}).get(output),
                               "raw": extra.get("raw_answers", {}).get(output)}
            block["failures"] = [f for f in failures if f.startswith(f"{output}:")]
        if last:
            block["failures"] += [f for f in failures if f.startswith(f"tool_call: {role}:")]
        blocks.append(block)
    placed = {f for block in blocks for f in block["failures"]}
    leftovers["failures"] += [f for f in failures if f not in placed]
    leftovers["llm_calls"] += [c for role, calls in calls_by_role.items() if role not in spoken for c in calls]
    return blocks


def _generic(trace: dict[str, Any], leftovers: dict[str, list]) -> list[dict[str, Any]]:
    leftovers["llm_calls"] = trace.get("llm_calls", [])
    leftovers["tool_calls"] = trace.get("tool_calls", [])
    leftovers["failures"] += trace.get("parse_failures", [])
    return [{"type": "message", "role": m.get("role", "?"), "name": m.get("name"), "text": str(m.get("content") or "")}
            for m in trace.get("messages", [])]


def reading_order(trace: dict[str, Any], tool_roles: dict[str, str] | None = None) -> dict[str, Any]:
    """{"shape": ..., "blocks": [...]} for one trace (module docstring); `tool_roles` maps a
    tool name to the debate role whose tool it is."""
    shape = trace_shape(trace)
    leftovers: dict[str, list] = {"llm_calls": [], "tool_calls": [], "failures": []}
    if shape == "conversation":
        blocks = _conversation(trace, leftovers)
    elif shape == "debate":
        blocks = _debate(trace, tool_roles or {}, leftovers)
    elif shape == "generic":
        blocks = _generic(trace, leftovers)
    else:
        return {"shape": shape, "blocks": []}
    extra = dict(trace.get("extra", {}))
    shown = DEBATE_EXTRA if shape == "debate" else ()
    outcome = {
        "type": "outcome", "fallback": bool(trace.get("fallback")), "error": trace.get("error"),
        "end_reason": extra.pop("end_reason", None),
        "reward": extra.pop("reward") if isinstance(extra.get("reward"), dict) else None,
        "extra": {k: v for k, v in extra.items() if k not in shown},
        "other": {k: v for k, v in trace.items() if k not in KNOWN_TRACE_FIELDS},
        **leftovers,
    }
    return {"shape": shape, "blocks": [*blocks, outcome]}
