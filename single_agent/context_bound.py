"""How many KV positions one episode of a protocol can reach, and how many episodes fit a store.

An episode's conversation is its first prompt (system prompt, tool schemas, user message),
then per turn at most `max_new_tokens` sampled tokens and, per tool call, the chat template's
tool-response frame around a result of at most `max_result_chars` characters plus the line
that says how much was cut (`offered_tools.clip_result`). A byte-level BPE token covers at least
one byte, so a result of c ASCII characters is at most c tokens:

    positions ≤ prompt + max_turns · max_new_tokens + max_tool_calls · (frame + max_result_chars + cut line)

A protocol that never cuts results (`max_result_chars: null`) has no such bound.

The system prompt and the tool schemas are the same for every episode, so a prefix store
holds them once; the rest is each episode's own. Episodes in flight fit a store of S positions
when their count is at most (S − shared) / (positions − shared).
"""

from __future__ import annotations

from single_agent.fragments import fragment_ids
from single_agent.offered_tools import clip_result, offered_schemas
from single_agent.prompting import initial_conversation
from single_agent.protocol import Protocol

PROBE_STARTS = (("AAAA", "2000-01-03"), ("ZZZZ", "2011-12-30"))
"""Two episode starts that differ in ticker and date: their prompts share exactly the common part."""

LONGEST_RESULT = 10**9
"""Characters cut from the longest result the bound allows for (sizes the cut line's count)."""


def shared_prompt_tokens(policy, protocol: Protocol) -> int:
    """Tokens every episode's first prompt starts with (the system prompt and tool schemas)."""
    first, second = (policy.render_ids(initial_conversation(protocol, ticker, date), offered_schemas(protocol))
                     for ticker, date in PROBE_STARTS)
    return next((i for i, (a, b) in enumerate(zip(first, second)) if a != b), min(len(first), len(second)))


def episode_positions(policy, protocol: Protocol, max_new_tokens: int) -> int | None:
    """An upper bound on the KV positions one episode's conversation reaches (module docstring);
    None when the protocol does not cut tool results."""
    if protocol.max_result_chars is None:
        return None
    ticker, date = PROBE_STARTS[0]
    prompt = len(policy.render_ids(initial_conversation(protocol, ticker, date), offered_schemas(protocol)))
    frame = len(fragment_ids(policy, [], [{"role": "tool", "name": "t", "tool_call_id": "0", "content": ""}]))
    result = len(clip_result("x" * (protocol.max_result_chars + LONGEST_RESULT), protocol.max_result_chars))
    return prompt + protocol.max_turns * max_new_tokens + protocol.max_tool_calls * (frame + result)


def episodes_fitting(store_positions: int, policy, protocol: Protocol, max_new_tokens: int) -> int | None:
    """How many episodes in flight fit a prefix store of `store_positions` (at least 1); None
    when an episode has no bound (`episode_positions`)."""
    bound = episode_positions(policy, protocol, max_new_tokens)
    if bound is None:
        return None
    shared = shared_prompt_tokens(policy, protocol)
    return max(1, (store_positions - shared) // max(bound - shared, 1))
