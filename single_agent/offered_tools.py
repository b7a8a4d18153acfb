"""The tools as a protocol offers them: the schemas the model reads, the arguments a call runs
with, and the result text the model reads back.

A protocol never forks a tool: it shortens a schema (its description, the arguments shown),
fills the arguments the model leaves out with its own defaults, and cuts long results at a
line boundary. The tools themselves, and their look-ahead guard, stay as they are.
"""

from __future__ import annotations

from typing import Any

from llm_backends.tool_calls import ToolCall
from market.view import MarketView
from single_agent.protocol import Protocol
from tools import TOOLS, ToolSet

SHORT_SCHEMA_KEYS = frozenset({"type", "properties", "required", "items", "enum"})
"""What a short parameter schema keeps: the structure, without descriptions, bounds or defaults."""


def short_parameters(schema: Any) -> Any:
    """A parameter schema reduced to `SHORT_SCHEMA_KEYS`, recursively (property names are kept)."""
    if not isinstance(schema, dict):
        return schema
    return {key: ({name: short_parameters(p) for name, p in value.items()} if key == "properties"
                  else short_parameters(value))
            for key, value in schema.items() if key in SHORT_SCHEMA_KEYS}


def offered_parameters(protocol: Protocol, name: str) -> dict[str, Any]:
    """The full parameter schema of tool `name` (bounds included) over the arguments `protocol`
    shows, with the protocol's defaults; what the grammar holds calls to (a fresh copy)."""
    offer = protocol.tools[name]
    parameters = TOOLS[name].schema()["function"]["parameters"]
    if offer.arguments is not None:
        parameters["properties"] = {k: v for k, v in parameters["properties"].items() if k in offer.arguments}
        parameters["required"] = [k for k in parameters["required"] if k in offer.arguments]
    for argument, value in offer.defaults.items():
        if argument in parameters["properties"]:
            parameters["properties"][argument]["default"] = value
    return parameters


def offered_schema(protocol: Protocol, name: str) -> dict[str, Any]:
    """Tool `name` in the OpenAI/Qwen function format as `protocol` shows it (a fresh copy): its
    description or the protocol's, `offered_parameters`, reduced by `short_parameters` when
    `protocol.short_schemas`."""
    description = protocol.tools[name].description or TOOLS[name].description
    parameters = offered_parameters(protocol, name)
    if protocol.short_schemas:
        parameters = short_parameters(parameters)
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def offered_schemas(protocol: Protocol) -> list[dict[str, Any]]:
    """Every offered tool's schema, in the protocol's order (for `apply_chat_template(tools=...)`)."""
    return [offered_schema(protocol, name) for name in protocol.tools]


def ticker_arguments(protocol: Protocol, name: str, ticker: str) -> dict[str, Any]:
    """The call arguments naming `ticker` when tool `name` takes one as the protocol offers it ({} otherwise)."""
    return {"ticker": ticker} if "ticker" in offered_parameters(protocol, name)["properties"] else {}


def protocol_toolset(protocol: Protocol, view: MarketView) -> ToolSet:
    """The protocol's tools bound to `view`, in its rendering; a call of any other tool is answered with an error."""
    return ToolSet(view, list(protocol.tools), terse=protocol.terse_results)


def call_arguments(protocol: Protocol, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """`arguments` with the protocol's defaults for the ones left out (unchanged for a tool it does not offer)."""
    offer = protocol.tools.get(name)
    return arguments if offer is None else {**offer.defaults, **arguments}


def clip_result(text: str, max_chars: int | None) -> str:
    """`text` cut after the last whole line within `max_chars`, with a line saying how much was cut."""
    if max_chars is None or len(text) <= max_chars:
        return text
    kept = text[:max_chars].rsplit("\n", 1)[0] if "\n" in text[:max_chars] else text[:max_chars]
    return f"{kept}\n[cut: {len(text) - len(kept)} more characters]"


def run_call(protocol: Protocol, toolset: ToolSet, call: ToolCall) -> str:
    """Run `call` through `toolset` (recorded there) with the protocol's defaults; the text the model reads."""
    text = toolset.call(call.name, call_arguments(protocol, call.name, call.arguments))
    return clip_result(text, protocol.max_result_chars)
