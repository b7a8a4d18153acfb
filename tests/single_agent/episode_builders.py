"""Episodes written by hand for the episode and reward tests."""

from __future__ import annotations

from llm_backends.tool_calls import render_tool_call
from market.decision import LLMCallRecord, ToolCallRecord
from single_agent.episode import Episode, Turn
from single_agent.episode import ToolExchange
from single_agent.parser import parse_step
from single_agent.protocol import Protocol
from tools import TOOLS

TICKER, DATE = "NVDA", "2024-03-28"


def think(words: int) -> str:
    """A think block of `words` words: `count_words` counts it, tags included, as `words` tokens."""
    return "<think>" + " ".join(["w"] * words) + "</think>"


def count_words(text: str) -> int:
    """A stand-in for a tokenizer: whitespace-separated pieces."""
    return len(text.split())


def call_text(name: str, words: int = 3, **arguments) -> str:
    """A well-formed call turn with a `words`-word think."""
    return f"{think(words)}\n{render_tool_call(name, {'ticker': TICKER, **arguments})}"


def turn(text: str, lookahead: bool = False) -> Turn:
    """A turn whose calls were all run (each answered `<name> result`), flagged look-ahead if asked."""
    step = parse_step(text, TOOLS)
    return Turn(step=step, llm=LLMCallRecord(role="agent", model="m", prompt_tokens=100, completion_tokens=10),
                exchanges=[ToolExchange(call=call, response=f"{call.name} result",
                                        record=ToolCallRecord(name=call.name, arguments=call.arguments,
                                                              lookahead=lookahead))
                           for call in step.calls])


def episode(protocol: Protocol, texts: list[str], end_reason: str, lookahead_turns: tuple[int, ...] = ()) -> Episode:
    """A finished episode of `protocol` on NVDA 2024-03-28 with one turn per text."""
    start = Episode.start(protocol, TICKER, DATE)
    turns = [turn(text, index in lookahead_turns) for index, text in enumerate(texts)]
    return Episode(**{**dict(start), "turns": turns, "end_reason": end_reason})
