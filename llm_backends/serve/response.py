"""Response bodies in OpenAI's shapes: a chat completion, the chunks of a streamed one, the model list.

When tools were shown to the model, the calls that parsed go to `message.tool_calls` (JSON-string
arguments, like vLLM's Hermes parser) and are cut from the content; a `<tool_call>` block that
did not parse stays in the content as the model wrote it and is reported in
`message.tool_call_parse_failures`, so nothing the model wrote is dropped. Without tools the
whole text is the content. Beyond OpenAI's fields, a completion (and each chunk) carries
`cached`: true when every choice was replayed from the response cache (the server also says
so in a header). Usage counts the prompt once and the completion tokens of every choice.

A stream is server-sent events (`data: <json>`, a blank line), one `chat.completion.chunk` per
delta, each choice ending with a chunk that carries its `finish_reason` (and its
log-probabilities, when asked), then with `include_usage` a chunk with no choices and the
usage, then `data: [DONE]`. An error after the stream has begun is an event `{"error": {...}}`
(OpenAI's error shape, which the SDK raises) followed by `data: [DONE]`.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from llm_backends.messages import wire_tool_call
from llm_backends.serve.errors import APIError
from llm_backends.tool_calls import strip_parsed_tool_calls
from llm_backends.types import ChatResult, TokenResult

OWNER = "tradeduel"
DONE = "data: [DONE]\n\n"


def message_body(result: ChatResult, tools_shown: bool) -> dict[str, Any]:
    """The assistant message of one result."""
    if not tools_shown:
        return {"role": "assistant", "content": result.text or None}
    message: dict[str, Any] = {"role": "assistant", "content": strip_parsed_tool_calls(result.text) or None}
    if result.tool_calls:
        message["tool_calls"] = [wire_tool_call(call) for call in result.tool_calls]
    if result.parse_failures:
        message["tool_call_parse_failures"] = list(result.parse_failures)
    return message


def finish_reason(result: ChatResult, tools_shown: bool) -> str:
    """The engine's finish reason, except that calls the client is not given cannot be the reason."""
    if result.finish_reason == "tool_calls" and not tools_shown:
        return "stop"
    return result.finish_reason


def logprobs_body(tokenizer: Any, sampled: TokenResult) -> dict[str, Any]:
    """OpenAI's `logprobs` of one choice: every sampled token (the end-of-turn token included) with its log-probability."""
    tokens = [tokenizer.decode([token]) for token in sampled.completion_ids]
    return {
        "content": [
            {"token": token, "logprob": logprob, "bytes": list(token.encode()), "top_logprobs": []}
            for token, logprob in zip(tokens, sampled.logprobs or [])
        ],
    }


def usage_body(results: list[ChatResult]) -> dict[str, int]:
    """The usage of all choices of one request: the prompt counted once."""
    prompt = results[0].prompt_tokens
    completion = sum(r.completion_tokens for r in results)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completion_body(
    results: list[ChatResult], model: str, tools_shown: bool, logprobs: list[dict[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """The `chat.completion` object with one choice per result (and its `logprobs` body when asked)."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": index,
                "message": message_body(result, tools_shown),
                "finish_reason": finish_reason(result, tools_shown),
                "logprobs": logprobs[index] if logprobs else None,
            }
            for index, result in enumerate(results)
        ],
        "usage": usage_body(results),
        "cached": all(r.cached for r in results),
    }


class ChunkWriter:
    """The server-sent events of one streamed completion (one id and creation time for all its chunks)."""

    def __init__(self, model: str, include_usage: bool, cached: bool) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.model = model
        self.include_usage = include_usage
        self.cached = cached

    def _event(self, choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> str:
        body: dict[str, Any] = {
            "id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
            "choices": choices, "cached": self.cached,
        }
        if self.include_usage:
            body["usage"] = usage
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    def delta(
        self, index: int, delta: dict[str, Any], finish: str | None = None, logprobs: dict[str, Any] | None = None,
    ) -> str:
        """A chunk carrying one choice's delta (and, in its last chunk, the finish reason)."""
        return self._event([{"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": finish}])

    def usage(self, results: list[ChatResult]) -> str:
        """The last chunk with `include_usage`: no choices, the usage of all of them."""
        return self._event([], usage_body(results))

    @staticmethod
    def error(error: APIError) -> str:
        """An error after the stream has begun, in OpenAI's error shape."""
        return f"data: {json.dumps(error.body(), ensure_ascii=False)}\n\n"


def model_card(model: str, context_length: int, created: int) -> dict[str, Any]:
    """One entry of `/v1/models` (with vLLM's `max_model_len`, the context in tokens)."""
    return {"id": model, "object": "model", "created": created, "owned_by": OWNER, "max_model_len": context_length}
