"""Grammars whose language is tool calls: the `tool_choice` "required" / named-function constraint.

A call is written as the Qwen2.5 chat template writes it,

    <tool_call>\\n{"name": <one of the tools>, "arguments": <valid under its parameters>}\\n</tool_call>

in `json.dumps`' layout, the arguments holding the declared parameters only (unless the schema
sets `additionalProperties` itself). `call_rules` are the Lark rules (llguidance's dialect) of
one or more such blocks separated by newlines; the server's `tool_choice` builds its grammar from
them (`llm_backends.serve.constraints`), and `forced_call_grammar` is the grammar of exactly one
call, for an agent that must read some data before it writes (the debate's analysts with
`first_tool_call: required`), its list arguments bounded (SmolLM2, forced to call
`get_stock_indicators`, otherwise repeated indicator names until the budget cut the call).

Tags are written with `lark_text`, so a tokenizer holding `<tool_call>` as one added token
(Qwen2.5, the tiny model) can produce them; without a tokenizer (an engine that renders no ids)
they are plain literals, which is right for tokenizers that spell the tags as text (SmolLM2).
"""

from __future__ import annotations

import json
from typing import Any

from llm_backends.grammar import json_value, lark_text
from llm_backends.tool_calls import CLOSE, OPEN
from llm_backends.types import ToolSchema

SCHEMA_DEFINITIONS = ("$defs", "definitions")
"""Where a schema keeps the definitions its `$ref`s point at (`#/$defs/...`): they must stay at the root."""


def call_schema(tool: ToolSchema) -> dict[str, Any]:
    """The JSON schema of one call of `tool`: `{"name": <its name>, "arguments": <valid under its parameters>}`.

    The arguments hold the declared parameters only, unless the schema sets
    `additionalProperties` itself (OpenAI's strict function calling does the same; without it a
    small model may wander off into made-up keys). Definitions of the parameters schema move to
    the root, so that its `$ref`s still resolve.
    """
    function = tool["function"]
    arguments = {"type": "object", "additionalProperties": False, **(function.get("parameters") or {})}
    definitions = {key: arguments.pop(key) for key in SCHEMA_DEFINITIONS if key in arguments}
    return {
        "type": "object",
        "properties": {"name": {"const": function["name"]}, "arguments": arguments},
        "required": ["name", "arguments"],
        "additionalProperties": False,
        **definitions,
    }


def _text(tokenizer: Any | None, text: str) -> str:
    """`text` as a Lark expression: `lark_text` with a tokenizer, a plain literal without one."""
    return json.dumps(text, ensure_ascii=False) if tokenizer is None else lark_text(tokenizer, text)


def call_rules(tokenizer: Any | None, tools: list[ToolSchema]) -> list[str]:
    """Lark rules whose `calls` is one or more tool-call blocks and `call` one block, each calling one of `tools`."""
    names = [f"call_{i}" for i in range(len(tools))]
    return [
        f"calls: call ({_text(tokenizer, chr(10))} call)*",
        f"call: {_text(tokenizer, OPEN + chr(10))} ({' | '.join(names)}) {_text(tokenizer, chr(10) + CLOSE)}",
        *(f"{name}: {json_value(call_schema(tool))}" for name, tool in zip(names, tools)),
    ]


def _bounded(schema: Any) -> Any:
    """`schema` with every array of enumerated items (also inside anyOf / oneOf) held to at most as many
    items as there are values."""
    if isinstance(schema, list):
        return [_bounded(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    bounded = {key: _bounded(value) for key, value in schema.items()}
    values = (schema.get("items") or {}).get("enum") if schema.get("type") == "array" else None
    if values:
        bounded["maxItems"] = min(schema.get("maxItems", len(values)), len(values))
    return bounded


def bounded_lists(tool: ToolSchema) -> ToolSchema:
    """`tool` with every list parameter of enumerated items held to at most as many items as there are
    values (`maxItems`), so a forced call cannot repeat values until its token budget cuts it off."""
    parameters = _bounded(tool["function"].get("parameters") or {})
    return {**tool, "function": {**tool["function"], "parameters": parameters}}


def forced_call_grammar(tokenizer: Any | None, tools: list[ToolSchema]) -> str:
    """The grammar of exactly one call of one of `tools` (and nothing else), lists bounded (`bounded_lists`)."""
    if not tools:
        raise ValueError("forced_call_grammar: no tools to call")
    return "\n".join(["start: call", *call_rules(tokenizer, [bounded_lists(tool) for tool in tools])])
