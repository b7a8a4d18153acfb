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

from llm_backends.grammar import json_schema_grammar, json_value
from llm_backends.serve.errors import unsupported
from llm_backends.serve.request import ChatJob
from llm_backends.tool_call_grammar import call_rules


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
