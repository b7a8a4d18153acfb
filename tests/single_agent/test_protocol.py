"""Protocols as config: loading and validation, the prompt, the offered schemas, the tool runs."""

from __future__ import annotations

import json

import pytest

from core.errors import ConfigError
from llm_backends.tool_calls import ToolCall
from market.decision import Action
from market.synthetic import generate_market
from market.view import MarketView
from configs import compose_option
from single_agent.offered_tools import (
    call_arguments,
    clip_result,
    offered_schema,
    offered_schemas,
    protocol_toolset,
    run_call,
    short_parameters,
)
from single_agent.prompting import initial_conversation, system_prompt
from single_agent.protocol import PROTOCOL_GROUP, load_protocol
from tools import REQUIRED_TOOLS, TOOLS

COMPACT_PROMPT_BUDGET = 600
"""SmolLM2 tokens the compact prompt may take (system, tool schemas, user); ~1.2 s of CPU prefill."""


def prompt_ids(tokenizer, protocol) -> list[int]:
    conversation = initial_conversation(protocol, "NVDA", "2024-03-28")
    return tokenizer.apply_chat_template(conversation, tools=offered_schemas(protocol), add_generation_prompt=True,
                                         tokenize=True)["input_ids"]


def compact_with(**changes) -> dict:
    """The compact protocol as composed, with top-level `changes`."""
    return {**compose_option(PROTOCOL_GROUP, "compact"), **changes}


def test_the_paper_protocol_offers_every_tool_in_full(paper):
    assert list(paper.tools) == list(TOOLS)
    assert (paper.max_turns, paper.max_tool_calls, paper.advised_tool_calls, paper.fallback_action) == (
        32, 31, 8, Action.HOLD)
    assert offered_schemas(paper) == [spec.schema() for spec in TOOLS.values()]


def test_the_paper_prompt_has_figure_6s_parts_and_nothing_the_debate_is_not_told(paper):
    text = system_prompt(paper)
    for name in TOOLS:
        assert f"- [{'MUST' if name in REQUIRED_TOOLS else 'OPTIONAL'}] {name}\n" in text
    assert "1. Plan:" in text and "Format rules:" in text and "at most 8 tools" in text
    assert "week" not in text and "horizon" not in text
    old = load_protocol("paper_paraphrase")
    assert "following trading week" in system_prompt(old), "the earlier text stays, under another name"
    assert (old.max_tool_calls, old.max_turns, old.tools) == (8, 9, paper.tools)


def test_the_compact_protocol_offers_the_required_tools_and_two_more_briefly(compact):
    assert set(REQUIRED_TOOLS) < set(compact.tools) and len(compact.tools) == len(REQUIRED_TOOLS) + 2
    assert compact.max_turns == 4
    for schema in offered_schemas(compact):
        parameters = schema["function"]["parameters"]
        assert parameters == {"required": ["ticker"], "type": "object", "properties": {"ticker": {"type": "string"}}}
        assert len(schema["function"]["description"]) < len(TOOLS[schema["function"]["name"]].description)


def test_the_prompt_ends_with_the_date_and_the_ticker(smollm2_tokenizer, paper, compact):
    for protocol in (paper, compact):
        text = smollm2_tokenizer.decode(prompt_ids(smollm2_tokenizer, protocol))
        assert text.rstrip().endswith("Current date: 2024-03-28\nTicker: NVDA<|im_end|>\n<|im_start|>assistant")
        for tag in ("<think>", "</think>", "<answer>BUY</answer>", "<answer>SELL</answer>", "<answer>HOLD</answer>"):
            assert tag in text
        assert f"at most {protocol.advised_tool_calls or protocol.max_tool_calls}" in text


def test_the_compact_prompt_fits_the_cpu_budget(smollm2_tokenizer, paper, compact):
    compact_tokens = len(prompt_ids(smollm2_tokenizer, compact))
    assert compact_tokens <= COMPACT_PROMPT_BUDGET
    assert len(prompt_ids(smollm2_tokenizer, paper)) > 4 * compact_tokens


def test_short_parameters_keep_structure_only():
    schema = TOOLS["get_stock_indicators"].schema()["function"]["parameters"]
    short = short_parameters(schema)
    assert list(short["properties"]) == list(schema["properties"])
    assert short["properties"]["indicators"] == {"items": {"enum": list(schema["properties"]["indicators"]["items"]["enum"]),
                                                           "type": "string"}, "type": "array"}
    assert "description" not in json.dumps(short) and "maximum" not in json.dumps(short)


def test_protocol_defaults_show_in_a_full_schema_and_fill_calls(paper):
    variant = load_protocol(compact_with(short_schemas=False, tools={
        "get_market_data": {"defaults": {"lookback_days": 3}}, "get_stock_indicators": {}}))
    properties = offered_schema(variant, "get_market_data")["function"]["parameters"]["properties"]
    assert properties["lookback_days"]["default"] == 3 and properties["lookback_days"]["maximum"] == 60
    assert call_arguments(variant, "get_market_data", {"ticker": "A"}) == {"lookback_days": 3, "ticker": "A"}
    assert call_arguments(variant, "get_market_data", {"ticker": "A", "lookback_days": 9})["lookback_days"] == 9
    assert call_arguments(variant, "get_weather", {"city": "Paris"}) == {"city": "Paris"}


def test_run_call_uses_the_defaults_and_cuts_long_results(compact):
    market = generate_market(tickers=["AAA"], days=300, seed=0)
    toolset = protocol_toolset(compact, MarketView(market, market.frame("AAA").index[-1]))
    text = run_call(compact, toolset, ToolCall(id="c0", name="get_market_data", arguments={"ticker": "AAA"}))
    days = compact.tools["get_market_data"].defaults["lookback_days"]
    assert toolset.records[-1].arguments == {"lookback_days": days, "ticker": "AAA"}
    assert len(text.splitlines()) == 1 + 1 + days + 1  # title, header, the bars, summary
    other = run_call(compact, toolset, ToolCall(id="c1", name="get_balance_sheet", arguments={"ticker": "AAA"}))
    assert other.startswith("Error: unknown tool 'get_balance_sheet'")
    assert len(run_call(compact, toolset, ToolCall(id="c2", name="get_reddit_data",
                                                   arguments={"ticker": "AAA"}))) <= compact.max_result_chars + 40


def test_clip_result_keeps_whole_lines():
    text = "title\n" + "\n".join(f"row {i}" for i in range(100))
    clipped = clip_result(text, 50)
    lines = clipped.splitlines()
    assert lines[:-1] == text.splitlines()[:len(lines) - 1]
    assert lines[-1] == f"[cut: {len(text) - len(chr(10).join(lines[:-1]))} more characters]"
    assert clip_result(text, None) == text and clip_result("short", 50) == "short"


@pytest.mark.parametrize("changes, message", [
    ({"tools": {"get_market_data": {}}}, "get_stock_indicators must be offered"),
    ({"tools": {"get_market_data": {}, "get_stock_indicators": {}, "get_weather": {}}}, "unknown tool"),
    ({"tools": {"get_market_data": {"arguments": ["end_date"]}, "get_stock_indicators": {}}}, "ticker must be shown"),
    ({"tools": {"get_market_data": {"defaults": {"lookback_days": 0}}, "get_stock_indicators": {}}}, "lookback_days"),
    ({"tools": {"get_market_data": {"arguments": ["ticker", "days"]}, "get_stock_indicators": {}}}, "unknown argument"),
    ({"system_template": "missing.j2"}, "no prompt template"),
    ({"max_tool_calls": 0}, "max_tool_calls"),
])
def test_invalid_protocols_are_one_config_error(changes, message):
    with pytest.raises(ConfigError, match=message):
        load_protocol(compact_with(**changes))


def test_unknown_protocol_names_the_known_ones():
    with pytest.raises(ConfigError, match="single_agent/protocol: no option 'nope' .*; known: compact, compact_terse, paper"):
        load_protocol("nope")


def test_the_digest_follows_the_settings(compact):
    assert load_protocol("compact").digest() == compact.digest()
    assert load_protocol(compact_with(max_tool_calls=2)).digest() != compact.digest()
    assert load_protocol("paper").digest() != compact.digest()
