"""The tokens the environment adds between two turns of an episode: the end of the assistant
turn, the tool responses, and the next assistant prompt, all as the policy's chat template
writes them.

The text comes from the chat template itself, rendered on a small probe (a user message, an
assistant message holding a marker, the tool messages, the generation prompt): what the
template writes after the marker is the fragment. It is tokenised on its own and appended to
the episode's ids, so the conversation is never rendered or tokenised again and the ids the
model sampled stay exactly as sampled. When the turn ended on an end-of-turn token whose text
opens the fragment (ChatML's `<|im_end|>`), the fragment starts after it.
"""

from __future__ import annotations

from typing import Any, Protocol

from llm_backends.types import Conversation, Message

MARKER = "\u2063end-of-assistant-turn\u2063"
"""Stands for the assistant's text in the probe (no chat template writes it on its own)."""


class Renderer(Protocol):
    """What the fragment needs of a policy: its tokenizer, end-of-turn ids and chat template."""

    tokenizer: Any
    eos_ids: list[int]

    def render(self, conversation: Conversation, tools: list[dict[str, Any]] | None = None) -> str: ...


def fragment_text(renderer: Renderer, tool_messages: list[Message]) -> str:
    """What the chat template writes after an assistant turn that `tool_messages` answer, up to
    and including the next assistant generation prompt."""
    probe = [{"role": "user", "content": "?"}, {"role": "assistant", "content": MARKER}, *tool_messages]
    rendered = renderer.render(probe)
    return rendered[rendered.index(MARKER) + len(MARKER):]


def fragment_ids(renderer: Renderer, sampled: list[int], tool_messages: list[Message]) -> list[int]:
    """The ids to append after the `sampled` ids of a turn answered by `tool_messages`."""
    text = fragment_text(renderer, tool_messages)
    if sampled and sampled[-1] in renderer.eos_ids:
        closing = renderer.tokenizer.decode([sampled[-1]])
        text = text.removeprefix(closing)
    return renderer.tokenizer(text, add_special_tokens=False)["input_ids"]
