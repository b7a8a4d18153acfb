"""How many tokens a request may ask for: the model's context minus the prompt (OpenAI's and vLLM's rule).

The context comes from the engine's model config (`max_position_embeddings`, lowered by the
tokenizer's `model_max_length` when that is smaller) or is given to the server; the prompt is
counted by the caller with the engine's own chat template and tokenizer. A request whose
`max_tokens` does not fit is refused with a 400 (it is not capped: the client learns the limit
instead of silently getting less), and a request without one gets all the room the prompt
leaves. For an engine that cannot count prompts (one behind HTTP, vLLM), `max_tokens` is
bounded by the context alone and the engine behind enforces the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from llm_backends.engine import ChatEngine
from llm_backends.serve.errors import bad_request


def model_context_length(engine: ChatEngine) -> int | None:
    """The context of a transformers engine's model (a micro-batching wrapper passes through), else None."""
    config = getattr(getattr(engine, "hf_model", None), "config", None)
    positions = getattr(config, "max_position_embeddings", None)
    if not isinstance(positions, int):
        return None
    tokenizer_limit = getattr(getattr(engine, "tokenizer", None), "model_max_length", positions)
    return min(positions, tokenizer_limit) if isinstance(tokenizer_limit, int) else positions


@dataclass(frozen=True)
class ContextWindow:
    """The tokens one request may span (prompt + completion)."""

    length: int

    @classmethod
    def of(cls, engine: ChatEngine, length: int | None = None) -> ContextWindow:
        """The engine's window; `length` overrides the model's and is required when the engine does not say."""
        length = model_context_length(engine) if length is None else length
        if length is None:
            raise ValueError(
                f"context_length: engine {engine.engine_id!r} does not report its model's context; "
                "give it (--context-length on the command line)"
            )
        if length < 1:
            raise ValueError(f"context_length must be positive, got {length}")
        return cls(length)

    def completion_budget(self, requested: int | None, param: str, prompt: int | None) -> int:
        """`requested` when it fits beside the `prompt` tokens (None: not counted), all the room left when None; else a 400."""
        room = self.length - (prompt or 0)
        if room < 1:
            raise bad_request(
                "messages", f"the messages take {prompt} tokens; this model's context is {self.length} tokens, "
                "which leaves no room for a completion", "context_length_exceeded",
            )
        if requested is None:
            return room
        if requested > room:
            counted = "the prompt is not counted here" if prompt is None else f"the messages take {prompt}"
            raise bad_request(
                param, f"{param} is too large: {requested}. This model's context is {self.length} tokens and {counted}, "
                f"so at most {room} completion tokens fit", "context_length_exceeded",
            )
        return requested
