"""One tool definition, three faces.

A tool is a plain typed function `f(view, **arguments) -> ToolResult` whose docstring's first
paragraph is its description and whose argument annotations (see `tools.args`) carry their
descriptions and bounds. `ToolSpec.from_function` derives from that single definition
- the pydantic argument model (validation, and the LangChain `args_schema`),
- the JSON schema in the OpenAI/Qwen function format (`{"type": "function", "function": ...}`,
  what `apply_chat_template(tools=...)` takes).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

from tools.guard import date_fields
from tools.render import ToolResult


def _compact(schema: Any) -> Any:
    """A JSON schema without `title` keys or null defaults, and with `anyOf: [X, null]` collapsed to X."""
    if isinstance(schema, list):
        return [_compact(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _compact(v) for k, v in schema.items() if k != "title" and not (k == "default" and v is None)}
    options = out.get("anyOf")
    if options and len(options) == 2 and {"type": "null"} in options:
        (kept,) = [o for o in options if o != {"type": "null"}]
        del out["anyOf"]
        out = {**kept, **out}
    return out


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its name, description, function and derived argument model."""

    name: str
    description: str
    function: Callable[..., ToolResult]
    args_model: type[BaseModel]
    date_fields: tuple[str, ...]

    @classmethod
    def from_function(cls, function: Callable[..., ToolResult]) -> "ToolSpec":
        """The spec of `function(view, **arguments)`; every argument after `view` is exposed."""
        parameters = list(inspect.signature(function, eval_str=True).parameters.values())[1:]
        fields = {
            p.name: (p.annotation, ... if p.default is inspect.Parameter.empty else p.default)
            for p in parameters
        }
        model = create_model(f"{function.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields)
        description = inspect.getdoc(function).split("\n\n")[0].replace("\n", " ")
        return cls(function.__name__, description, function, model, tuple(date_fields(model)))

    @cached_property
    def _schema_text(self) -> str:
        """The function-calling schema as JSON text, derived once from the argument model."""
        parameters = _compact(self.args_model.model_json_schema())
        parameters.setdefault("required", [])
        return json.dumps({"type": "function",
                           "function": {"name": self.name, "description": self.description, "parameters": parameters}})

    def schema(self) -> dict[str, Any]:
        """The tool in the OpenAI/Qwen function-calling format (a fresh copy on every call)."""
        return json.loads(self._schema_text)
