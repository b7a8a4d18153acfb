"""The data every engine speaks: sampling parameters, chat results, and token requests/results.

Conversations are lists of OpenAI-style message dicts (`role`, `content`, and for assistant
turns optionally `tool_calls`; for tool turns `tool_call_id`). Tool definitions are OpenAI
function schemas: `{"type": "function", "function": {"name", "description", "parameters"}}`.
Local engines also take token requests (`TokenRequest` in, `TokenResult` out): prompt ids in,
the sampled ids out, never re-tokenised.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from llm_backends.tool_calls import ToolCall, strip_tool_calls

Message = dict[str, Any]
Conversation = list[Message]
ToolSchema = dict[str, Any]


class SamplingParams(BaseModel):
    """How to sample one completion.

    `temperature` 0 means greedy decoding (the paper's evaluation setting); greedy decoding
    ignores `seed`. `stop` strings end the completion when they appear in the generated text
    and are not part of the returned text (OpenAI semantics). With sampling, `seed` makes a
    row's sample reproducible whatever else shares its batch (local engines give each row its
    own generator); an unseeded sampled request draws fresh randomness on every call and is
    never served from or stored in the response cache. `grammar` constrains decoding on local
    engines to a grammar in llguidance's Lark dialect (see `llm_backends.grammar`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(0.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_new_tokens: int = Field(256, gt=0)
    stop: tuple[str, ...] = ()
    seed: int | None = None
    grammar: str | None = None

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

    @property
    def reproducible(self) -> bool:
        """True when the same request gives the same answer: greedy, or sampled with a seed."""
        return self.greedy or self.seed is not None

    def identity(self) -> dict[str, Any]:
        """The fields that determine an answer, for cache keys: the seed is dropped when greedy."""
        fields = self.model_dump(mode="json")
        if self.greedy:
            fields["seed"] = None
        return fields


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
    reused_prompt_tokens: int = 0
    """Prompt tokens whose keys and values came from the engine's prefix KV store (not recomputed)."""
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
            "reused_prompt_tokens": self.reused_prompt_tokens,
            "latency_s": self.latency_s,
            "cached": self.cached,
        }


@dataclass(frozen=True)
class TokenRequest:
    """One completion asked of a local engine in token ids.

    `prompt_ids` is the whole sequence so far: a rendered prompt (`engine.render_ids`), plus,
    for a continuing episode, its earlier sampled ids and tool-result fragments tokenised
    once. `params.grammar` constrains decoding. `return_logprobs` asks for the log-probability
    of every sampled token. `cancel`, checked before every decoding step, ends the row with
    finish_reason "cancelled"; `on_tokens` receives the row's new token ids as they are
    sampled (one call per step; an exception in it cancels the row).
    """

    prompt_ids: list[int]
    params: SamplingParams = field(default_factory=SamplingParams)
    return_logprobs: bool = False
    cancel: threading.Event | None = None
    on_tokens: Callable[[list[int]], None] | None = None


@dataclass(frozen=True)
class GrammarSupport:
    """The tokens a grammar left open at one sampled position, stored by the smaller side: the
    allowed ids (`allowed` True) or the ids it ruled out (`allowed` False)."""

    allowed: bool
    ids: tuple[int, ...]


@dataclass
class TokenResult:
    """The completion of one `TokenRequest`.

    `completion_ids` are exactly the sampled ids, including the end-of-sequence or stop token
    that ended the row. `logprobs` (when asked) holds, per completion token, its log-probability
    under the model at the request's temperature, log_softmax(logits / T) (T = 1 when greedy),
    before top-p and the grammar mask: the quantity a trainer recomputes from the weights.
    `forced` (with `logprobs`) is True per completion token where the grammar allowed that
    token only: the model did not choose it (a trainer gives such tokens no loss).
    `grammar` (with `logprobs`) holds per completion token the grammar's `GrammarSupport` where
    it allowed more than one token (None where it allowed one, or there was no grammar): what a
    trainer needs for the log-probability of the grammar-constrained policy that sampled,
    log_softmax over the allowed tokens only.
    `text` is the completion decoded without special tokens and cut before a stop string.
    `finish_reason`: "stop" (end-of-sequence token or stop string), "length", "cancelled" or
    "grammar_error". `reused_prompt_tokens` of the `prompt_tokens` came from the prefix KV
    store. `latency_s` is the wall time from the start of the engine call to the end of the
    batch that produced this row.
    """

    completion_ids: list[int]
    text: str
    finish_reason: str
    prompt_tokens: int
    reused_prompt_tokens: int = 0
    logprobs: list[float] | None = None
    forced: list[bool] | None = None
    grammar: list[GrammarSupport | None] | None = None
    latency_s: float = 0.0

    @property
    def completion_tokens(self) -> int:
        """len(completion_ids)."""
        return len(self.completion_ids)
