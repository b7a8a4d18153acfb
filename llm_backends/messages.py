"""Conversions between the message shapes engines meet.

Chat templates want tool-call arguments as objects; the OpenAI wire format wants them as JSON
strings. Agents append a model turn to a conversation with `assistant_message(result)`.
"""

from __future__ import annotations

import json
from typing import Any

from llm_backends.tool_calls import ToolCall
from llm_backends.types import ChatResult, Conversation, Message, ToolSchema


def _call_function(call: dict[str, Any]) -> dict[str, Any]:
    """The `{"name", "arguments"}` part of a tool call in either flat or OpenAI nested shape."""
    return call.get("function", call)


def _with_arguments(message: Message, as_json: bool) -> Message:
    """`message` with every tool call in OpenAI shape, arguments as JSON text or as a dict."""
    calls = []
    for index, call in enumerate(message.get("tool_calls") or []):
        function = _call_function(call)
        if "name" not in function:
            raise ValueError(f"tool call {index} of an assistant message: missing 'name'")
        arguments = function.get("arguments") or {}
        if as_json and not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        if not as_json and isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as err:
                raise ValueError(f"tool call {index} ({function['name']}): arguments are not JSON: {err.msg}") from None
        calls.append({
            "id": call.get("id", f"call_{index}"),
            "type": "function",
            "function": {"name": function["name"], "arguments": arguments},
        })
    return {**message, "tool_calls": calls} if calls else {k: v for k, v in message.items() if k != "tool_calls"}


def for_template(conversation: Conversation) -> Conversation:
    """Messages as chat templates expect them: content never None, arguments as dicts."""
    return [_with_arguments({**m, "content": m.get("content") or ""}, as_json=False) for m in conversation]


def for_wire(conversation: Conversation) -> Conversation:
    """Messages as OpenAI-compatible servers expect them: tool-call arguments as JSON strings."""
    return [_with_arguments(m, as_json=True) for m in conversation]


def assistant_message(result: ChatResult) -> Message:
    """The assistant turn to append after `result` (content without tool blocks, calls separate)."""
    message: Message = {"role": "assistant", "content": result.content}
    if result.tool_calls:
        message["tool_calls"] = [wire_tool_call(call) for call in result.tool_calls]
    return message


def wire_tool_call(call: ToolCall) -> dict[str, Any]:
    """A parsed call in the OpenAI response shape (arguments as a JSON string)."""
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
    }


def tool_names(tools: list[ToolSchema] | None) -> list[str]:
    """The function names declared in OpenAI tool schemas."""
    return [_call_function(tool)["name"] for tool in tools or []]
