"""Response bodies in OpenAI's shapes: a chat completion and the model list.

When tools were shown to the model, the calls that parsed go to `message.tool_calls` (JSON-string
arguments, like vLLM's Hermes parser) and are cut from the content; a `<tool_call>` block that
did not parse stays in the content as the model wrote it and is reported in
`message.tool_call_parse_failures`, so nothing the model wrote is dropped. Without tools the
whole text is the content. Beyond OpenAI's fields, a completion carries `cached`: true when the
answer was replayed from the response cache (the server also says so in a header).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from llm_backends.messages import wire_tool_call
from llm_backends.tool_calls import strip_parsed_tool_calls
from llm_backends.types import ChatResult

OWNER = "tradeduel"


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


def completion_body(result: ChatResult, model: str, tools_shown: bool) -> dict[str, Any]:
    """The `chat.completion` object for one result."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{
            "index": 0,
            "message": message_body(result, tools_shown),
            "finish_reason": finish_reason(result, tools_shown),
            "logprobs": None,
        }],
        "usage": {
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "total_tokens": result.prompt_tokens + result.completion_tokens,
        },
        "cached": result.cached,
    }


def model_card(model: str, context_length: int, created: int) -> dict[str, Any]:
    """One entry of `/v1/models` (with vLLM's `max_model_len`, the context in tokens)."""
    return {"id": model, "object": "model", "created": created, "owned_by": OWNER, "max_model_len": context_length}
