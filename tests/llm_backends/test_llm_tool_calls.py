import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_backends.messages import assistant_message, for_template, for_wire
from llm_backends.tool_calls import parse_tool_calls, render_tool_call, strip_tool_calls
from llm_backends.types import ChatResult


def test_parses_qwen_blocks_and_keeps_text_outside():
    text = (
        "<think>need prices</think>\n"
        '<tool_call>\n{"name": "get_market_data", "arguments": {"ticker": "NVDA"}}\n</tool_call>\n'
        '<tool_call>{"name": "get_news_data", "arguments": "{\\"ticker\\": \\"NVDA\\"}"}</tool_call>'
    )
    calls, failures = parse_tool_calls(text)
    assert failures == []
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_market_data", {"ticker": "NVDA"}),
        ("get_news_data", {"ticker": "NVDA"}),
    ]
    assert calls[0].id != calls[1].id
    assert strip_tool_calls(text) == "<think>need prices</think>"


def test_malformed_blocks_become_failures_not_exceptions():
    text = (
        "<tool_call>{not json}</tool_call>"
        '<tool_call>{"arguments": {}}</tool_call>'
        '<tool_call>["a list"]</tool_call>'
        '<tool_call>{"name": "f", "arguments": 3}</tool_call>'
        '<tool_call>{"name": "ok"}</tool_call>'
    )
    calls, failures = parse_tool_calls(text)
    assert [c.name for c in calls] == ["ok"]
    assert calls[0].arguments == {}
    assert len(failures) == 4
    assert failures[0].startswith("tool call 0: invalid JSON")
    assert "missing or empty 'name'" in failures[1]
    assert "expected a JSON object" in failures[2]
    assert "bad arguments for 'f'" in failures[3]


def test_unclosed_final_block_parses_when_json_is_complete():
    calls, failures = parse_tool_calls('<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n')
    assert [(c.name, c.arguments) for c in calls] == [("f", {"x": 1})]
    truncated, failures = parse_tool_calls('<tool_call>\n{"name": "f", "argu')
    assert truncated == [] and len(failures) == 1


def test_ids_are_deterministic():
    text = render_tool_call("f", {"a": 1})
    assert parse_tool_calls(text)[0][0].id == parse_tool_calls(text)[0][0].id


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@pytest.mark.slow
@given(
    name=st.from_regex(r"[a-z_][a-z0-9_]{0,20}", fullmatch=True),
    arguments=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
)
def test_render_then_parse_round_trips(name, arguments):
    calls, failures = parse_tool_calls("text before " + render_tool_call(name, arguments))
    assert failures == []
    assert [(c.name, c.arguments) for c in calls] == [(name, arguments)]


def test_assistant_message_and_wire_formats():
    result = ChatResult(text="checking\n" + render_tool_call("f", {"a": 1}))
    result = result.model_copy(update={"tool_calls": parse_tool_calls(result.text)[0]})
    message = assistant_message(result)
    assert message["content"] == "checking"
    wire = for_wire([message])[0]["tool_calls"][0]
    assert wire["type"] == "function" and json.loads(wire["function"]["arguments"]) == {"a": 1}
    back = for_template(for_wire([message]))[0]["tool_calls"][0]
    assert back["function"]["arguments"] == {"a": 1}
    assert for_template([{"role": "assistant", "content": None}])[0]["content"] == ""


def test_malformed_history_tool_calls_are_one_line_errors():
    broken = [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{oops"}}]}]
    with pytest.raises(ValueError, match=r"tool call 0 \(f\): arguments are not JSON"):
        for_template(broken)
    with pytest.raises(ValueError, match="tool call 0 of an assistant message: missing 'name'"):
        for_template([{"role": "assistant", "tool_calls": [{"function": {"arguments": {}}}]}])
