"""The one-call grammar of a forced tool call: its list arguments are bounded."""

from __future__ import annotations

from llm_backends.tool_call_grammar import bounded_lists, forced_call_grammar
from tools import TOOLS


def test_lists_of_enumerated_values_are_bounded_to_their_values_also_inside_any_of():
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "picks": {"anyOf": [{"type": "array", "items": {"enum": ["a", "b", "c"]}}, {"type": "null"}]},
        "few": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 2},
        "free": {"type": "array", "items": {"type": "string"}}}}}}
    properties = bounded_lists(tool)["function"]["parameters"]["properties"]
    assert properties["picks"]["anyOf"][0]["maxItems"] == 3 and "maxItems" not in properties["picks"]["anyOf"][1]
    assert properties["few"]["maxItems"] == 2 and "maxItems" not in properties["free"]
    assert "maxItems" not in tool["function"]["parameters"]["properties"]["picks"]["anyOf"][0], "the input is kept"


def test_the_forced_grammar_holds_the_indicator_list_to_the_eleven_indicators():
    grammar = forced_call_grammar(None, [TOOLS["get_stock_indicators"].schema()])
    assert grammar.startswith("start: call\n") and '"maxItems": 11' in grammar
