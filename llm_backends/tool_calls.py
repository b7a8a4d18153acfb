"""Tool calls in the Qwen2.5 / Hermes text format: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`.

Parsing is tolerant: a block whose JSON is malformed, or that lacks a name, becomes a one-line
parse failure instead of an exception, so an agent's trace records what the model wrote. A
final block left open (generation stopped at `</tool_call>` or ran out of tokens) is parsed
if its JSON is complete.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

OPEN, CLOSE = "<tool_call>", "</tool_call>"
_BLOCK = re.compile(re.escape(OPEN) + r"(.*?)(?:" + re.escape(CLOSE) + r"|\Z)", re.DOTALL)


class ToolCall(BaseModel):
    """A tool call the model asked for: `{"name": ..., "arguments": {...}}`."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


def call_id(text: str, index: int) -> str:
    """A deterministic id for the `index`-th call in `text`: `call_<sha256(text)[:10]>_<index>`."""
    return f"call_{hashlib.sha256(text.encode()).hexdigest()[:10]}_{index}"


def _decode_arguments(raw: Any) -> dict[str, Any]:
    """Arguments as a dict; accepts a dict, a JSON string holding a dict, or None (no arguments)."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        raw = json.loads(raw) if raw.strip() else {}
    if not isinstance(raw, dict):
        raise ValueError(f"arguments must be an object, got {type(raw).__name__}")
    return raw


def parse_tool_call(body: str, call_id_: str) -> ToolCall:
    """Parse the JSON inside one `<tool_call>` block; raises ValueError with the reason."""
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as err:
        raise ValueError(f"invalid JSON ({err.msg} at char {err.pos})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("missing or empty 'name'")
    try:
        arguments = _decode_arguments(obj.get("arguments", obj.get("parameters")))
    except (json.JSONDecodeError, ValueError) as err:
        raise ValueError(f"bad arguments for {name!r}: {err}") from None
    return ToolCall(id=call_id_, name=name, arguments=arguments)


def read_block(body: str, index: int, call_id_: str) -> ToolCall | str:
    """The call inside the `index`-th block (its text between the tags), or the failure line saying why it does not parse."""
    body = body.strip()
    try:
        return parse_tool_call(body, call_id_)
    except ValueError as err:
        return f"tool call {index}: {err}: {body[:200]!r}"


def parse_tool_calls(text: str) -> tuple[list[ToolCall], list[str]]:
    """All tool calls in `text`, and one failure line per block that did not parse."""
    calls: list[ToolCall] = []
    failures: list[str] = []
    for index, match in enumerate(_BLOCK.finditer(text)):
        read = read_block(match.group(1), index, call_id(text, index))
        if isinstance(read, ToolCall):
            calls.append(read)
        else:
            failures.append(read)
    return calls, failures


def strip_tool_calls(text: str) -> str:
    """`text` without its tool-call blocks, whitespace-stripped."""
    return _BLOCK.sub("", text).strip()


def strip_parsed_tool_calls(text: str) -> str:
    """`text` without the tool-call blocks that parse; blocks that do not stay as written. Whitespace-stripped."""

    def keep_if_broken(match: re.Match[str]) -> str:
        try:
            parse_tool_call(match.group(1).strip(), "")
        except ValueError:
            return match.group(0)
        return ""

    return _BLOCK.sub(keep_if_broken, text).strip()


def render_tool_call(name: str, arguments: dict[str, Any]) -> str:
    """One call as the Qwen2.5 chat template writes it (the inverse of `parse_tool_call`)."""
    payload = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"{OPEN}\n{payload}\n{CLOSE}"
