"""The grammar a request's constraints become, for the engine's constrained decoding (llguidance's Lark dialect).

- `response_format` `json_schema` / `json_object`: the answer is one JSON document valid under
  the schema (`json_schema_grammar`), laid out as `json.dumps` does. When tools are shown and
  the model may choose (`tool_choice` "auto"), the answer is that document or tool calls.
- `tool_choice` "required" or a named function: the answer is one or more tool-call blocks as
  the Qwen2.5 template writes them (`<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>`,
  separated by newlines), each naming one of the allowed tools with arguments valid under its
  `parameters` schema (and no undeclared parameters, unless the schema allows them). The tags are written with `lark_text`, so a model whose tokenizer has
  them as added tokens can produce them.
- `structured_outputs.grammar`: used as given.

Tool-call grammars need the model's tokenizer, so they are for local engines only; an engine
behind HTTP gets JSON grammars (which need no tokenizer) and a 400 for the rest.
"""

from __future__ import annotations

from typing import Any

from llm_backends.grammar import json_schema_grammar, json_value, lark_text
from llm_backends.serve.errors import unsupported
from llm_backends.serve.request import ChatJob
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


def call_rules(tokenizer: Any, tools: list[ToolSchema]) -> list[str]:
    """Lark rules whose `calls` is one or more tool-call blocks, each calling one of `tools`."""
    names = [f"call_{i}" for i in range(len(tools))]
    return [
        f"calls: call ({lark_text(tokenizer, chr(10))} call)*",
        f"call: {lark_text(tokenizer, OPEN + chr(10))} ({' | '.join(names)}) {lark_text(tokenizer, chr(10) + CLOSE)}",
        *(f"{name}: {json_value(call_schema(tool))}" for name, tool in zip(names, tools)),
    ]


def job_grammar(job: ChatJob, tokenizer: Any | None) -> str | None:
    """The grammar that decodes `job`'s constraints, None when it has none; `tokenizer` None: an engine without one."""
    if job.grammar is not None:
        return job.grammar
    callable_tools = job.forced_tools or (job.tools if job.answer_schema is not None else None)
    if not callable_tools:
        return None if job.answer_schema is None else json_schema_grammar(job.answer_schema)
    if tokenizer is None:
        param = "tool_choice" if job.forced_tools else "response_format"
        raise unsupported(param, "constraining tool calls needs the model's tokenizer; the engine behind this server has none")
    rules = call_rules(tokenizer, callable_tools)
    if job.forced_tools:
        return "\n".join(["start: calls", *rules])
    return "\n".join(["start: answer | calls", f"answer: {json_value(job.answer_schema or {})}", *rules])
