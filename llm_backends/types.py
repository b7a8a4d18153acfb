"""The data every engine speaks: sampling parameters, parsed tool calls and chat results.

Conversations are lists of OpenAI-style message dicts (`role`, `content`, and for assistant
turns optionally `tool_calls`; for tool turns `tool_call_id`). Tool definitions are OpenAI
function schemas: `{"type": "function", "function": {"name", "description", "parameters"}}`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from llm_backends.tool_calls import ToolCall, strip_tool_calls

Message = dict[str, Any]
Conversation = list[Message]
ToolSchema = dict[str, Any]


class SamplingParams(BaseModel):
    """How to sample one completion.

    `temperature` 0 means greedy decoding (the paper's evaluation setting). `stop` strings end
    the completion and are not part of the returned text (OpenAI semantics). `seed` makes
    sampling reproducible for the same call on the same engine; it is part of the cache key.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(0.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_new_tokens: int = Field(256, gt=0)
    stop: tuple[str, ...] = ()
    seed: int | None = 0

    @field_validator("stop", mode="before")
    @classmethod
    def _stop_as_tuple(cls, value: Any) -> tuple[str, ...]:
        if value is None:
            return ()
        if isinstance(value, str):
            return (value,)
        return tuple(value)

    @property
    def greedy(self) -> bool:
        """True when decoding is deterministic argmax (temperature 0)."""
        return self.temperature == 0.0


class ChatResult(BaseModel):
    """One completion of one conversation.

    `text` is the raw assistant text in the Qwen format (tool calls appear in it as
    `<tool_call>{json}</tool_call>` blocks, whatever the engine); `tool_calls` are the blocks
    that parsed, `parse_failures` one line per block that did not. `latency_s` is the wall
    time of the engine call that produced it (a whole batch for local engines); `cached` is
    True when it was replayed from the response cache. `error` is set, and `text` empty, when
    this conversation failed (an HTTP engine names the URL, status and server message); the
    other conversations of the same call are unaffected.
    """

    text: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    parse_failures: list[str] = Field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str = "stop"
    model: str = ""
    cached: bool = False
    error: str | None = None

    @property
    def content(self) -> str:
        """The text with the tool-call blocks removed and surrounding whitespace stripped."""
        return strip_tool_calls(self.text)

    def usage_record(self, role: str = "") -> dict[str, Any]:
        """The fields of `market.decision.LLMCallRecord` for this call.

        Use as `LLMCallRecord(**result.usage_record("trader"))`.
        """
        return {
            "role": role,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": self.latency_s,
            "cached": self.cached,
        }
