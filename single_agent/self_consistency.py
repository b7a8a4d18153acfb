"""Self-consistency: k sampled episodes of one decision, one answer by majority vote.

The executed action is the most common valid answer among the k episodes; a tie goes to the
tied answer that the earliest episode gave; without any valid answer the protocol's fallback
is executed. The trace reads as the episode behind the chosen answer (its messages and extra,
else the first episode's) and counts the cost of all k: every LLM call, tool call and parse
failure. Its extra adds `votes` (answer -> count) and `samples` (k). Sampling k answers per
decision is the compute-matched control for comparisons with the multi-agent debate.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from market.decision import Action, Decision, Trace
from single_agent.episode import Episode


def votes(episodes: list[Episode]) -> Counter[Action]:
    """How many episodes gave each valid answer."""
    return Counter(e.final_action for e in episodes if e.final_action is not None)


def majority(episodes: list[Episode]) -> Action | None:
    """The most common valid answer (ties: the tied answer given first); None without a valid answer."""
    counts = votes(episodes)
    if not counts:
        return None
    top = max(counts.values())
    return next(e.final_action for e in episodes if e.final_action is not None and counts[e.final_action] == top)


def shown_episode(episodes: list[Episode]) -> Episode:
    """The episode a consensus trace reads as: the first that gave the majority answer, else the first."""
    action = majority(episodes)
    return next((e for e in episodes if action is not None and e.final_action is action), episodes[0])


def consensus_decision(episodes: list[Episode], extra: dict[str, Any] | None = None) -> Decision:
    """The majority decision of the episodes of one decision, with the trace described above
    (`extra` goes into the shown episode's trace)."""
    action = majority(episodes)
    shown = shown_episode(episodes)
    trace = shown.trace(extra)
    every = [e.trace() for e in episodes]
    merged = Trace(
        messages=trace.messages,
        tool_calls=[call for t in every for call in t.tool_calls],
        llm_calls=[call for t in every for call in t.llm_calls],
        parse_failures=[line for t in every for line in t.parse_failures],
        fallback=action is None,
        extra={**trace.extra, "votes": {a.value: n for a, n in votes(episodes).items()}, "samples": len(episodes)},
    )
    return Decision(action=action or shown.fallback_action, trace=merged)
