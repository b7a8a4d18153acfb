"""The two answers of the graph, their grammars and a tolerant reader.

- The coordinator answers one risk signal per agent, `{"<agent>": "reduce" | "neutral" |
  "increase", ...}`, every agent a required key, in the agents' order (`coordinator_schema`).
- An agent answers one action, `{"action": "sell" | "trim" | "hold" | "add" | "buy"}`
  (`agent_schema`, its options in the order the settings give them); the action is a number of
  notches of weight change (`NOTCHES`).

Under constrained decoding each answer is decoded under its schema's grammar
(`llm_backends.grammar.json_schema_grammar`), so it parses unless the token budget cuts it
(the budgets `coordinator_tokens` and `AGENT_TOKENS` leave room for the longest answer). The
reader takes the first JSON object that fits; without one, a free-text answer that names
exactly one label (an agent's action) is read as that label; anything else is a failure with its
reason, and the caller falls back: the neutral signal for an agent the coordinator left out,
hold for an agent whose answer is unreadable.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from multi_agent.outputs import json_objects

SIGNALS = ("reduce", "neutral", "increase")
NEUTRAL = "neutral"
NOTCHES = {"sell": -2, "trim": -1, "hold": 0, "add": 1, "buy": 2}
"""Each action's weight change in notches (one notch = step / N of equity, `MassaLLMSettings.step`)."""
HOLD = "hold"


def agent_schema(actions: tuple[str, ...]) -> dict[str, Any]:
    """`{"action": one of actions}`, the options in the given order, nothing else."""
    return {"type": "object", "properties": {"action": {"enum": list(actions)}},
            "required": ["action"], "additionalProperties": False}


AGENT_TOKENS = 16
"""New tokens of an agent's answer: `{"action": "trim"}` is about 8 SmolLM2 tokens."""
TOKENS_PER_SIGNAL = 12
"""New tokens per agent of the coordinator's answer: `"TEC1": "increase", ` is about 9."""


def coordinator_schema(agents: tuple[str, ...]) -> dict[str, Any]:
    """`{agent: one of SIGNALS}` for every agent, all required, nothing else."""
    return {"type": "object", "properties": {name: {"enum": list(SIGNALS)} for name in agents},
            "required": list(agents), "additionalProperties": False}


def coordinator_tokens(agents: tuple[str, ...]) -> int:
    """The coordinator's token budget: `TOKENS_PER_SIGNAL` per agent plus the braces."""
    return TOKENS_PER_SIGNAL * len(agents) + 8


class Read(NamedTuple):
    """What the reader made of an answer: the value (None on failure), how it was read ("json",
    "text" or "failed") and the reason when it failed or was partial."""

    value: Any
    how: str
    failure: str | None = None


def label(value: Any, labels: tuple[str, ...]) -> str | None:
    """`value` as one of `labels`, case- and markup-insensitively; None when it is none of them."""
    wanted = value.strip(" *_`'\".").lower() if isinstance(value, str) else None
    return wanted if wanted in labels else None


def read_signals(text: str, agents: tuple[str, ...]) -> Read:
    """The coordinator's signals {agent: signal} for the agents its first JSON object names with a valid
    signal; "failed" when no object names any (every agent then falls back to neutral)."""
    for candidate in json_objects(text):
        signals = {name: label(candidate.get(name), SIGNALS) for name in agents}
        found = {name: s for name, s in signals.items() if s is not None}
        if found:
            missing = [name for name in agents if name not in found]
            return Read(found, "json", f"no valid signal for {', '.join(missing)}" if missing else None)
    return Read(None, "failed", f"no JSON object with a signal per agent: {text.strip()[:120]!r}")


def read_action(text: str) -> Read:
    """An agent's action: `{"action": ...}`, else the one action its free text names."""
    labels = tuple(NOTCHES)
    for candidate in json_objects(text):
        action = label(candidate.get("action"), labels)
        if action is not None:
            return Read(action, "json")
    named = {m.lower() for m in re.findall(rf"\b({'|'.join(labels)})\b", text, flags=re.IGNORECASE)}
    if len(named) == 1:
        return Read(named.pop(), "text")
    return Read(None, "failed", f"no single action in the answer: {text.strip()[:120]!r}")
