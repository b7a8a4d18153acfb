"""The analysts' private tool loops over the decision's real `ToolSet`."""

from __future__ import annotations

import pytest
from cli_helpers import ROOT
from langchain_core.utils.function_calling import convert_to_openai_tool
from omegaconf import OmegaConf
from scripted import default_script

from llm_backends.tool_call_grammar import forced_call_grammar
from multi_agent.roles.analysts import REPORT_REQUEST
from multi_agent.settings import DebateSettings
from tools import TOOLS

MARKET_CALL = '<tool_call>{"name": "get_market_data", "arguments": {"ticker": "MSFT", "lookback_days": 3}}</tool_call>'
DAY = ("MSFT", "2020-02-03")


def calls_tool_once(call, request=MARKET_CALL):
    """The market analyst asks for `request` on its first turn, then writes its report."""
    if call.role == "market_analyst" and not any(m["role"] == "tool" for m in call.conversation):
        return request
    return default_script(call)


def test_a_tool_call_runs_on_the_real_tool_set_and_its_answer_reaches_the_analyst(run, contexts):
    (decision,), engine = run(contexts(DAY), calls_tool_once)
    market = [c for c in engine.calls if c.role == "market_analyst"]
    assert len(market) == 2
    assert market[0].tools == ["get_market_data", "get_stock_indicators"]
    assert market[1].tools == [], "the last round binds no tools"
    tool_turn, request = market[1].conversation[-2:]
    assert request == {"role": "user", "content": REPORT_REQUEST}
    assert tool_turn["role"] == "tool" and tool_turn["content"].startswith("MSFT daily bars 2020-01-30..2020-02-03")
    (record,) = decision.trace.tool_calls
    assert (record.name, record.arguments, record.error, record.lookahead) == (
        "get_market_data", {"ticker": "MSFT", "end_date": None, "lookback_days": 3}, None, False)
    assert decision.trace.messages[0]["content"] == "market_analyst says the stock looks fine."
    assert decision.trace.extra["analyst_tool_calls"] == {"market": 1, "social": 0, "news": 0, "fundamentals": 0}


def test_each_analyst_is_shown_only_its_own_tools(run, contexts):
    _, engine = run(contexts(DAY), analyst_tools={"market": ("get_market_data",), "social": ("get_reddit_data",),
                                                  "news": ("get_news_data", "get_macro_indicators"),
                                                  "fundamentals": ("get_cashflow",)})
    shown = {c.role: c.tools for c in engine.calls if c.role.endswith("_analyst") and c.tools}
    assert shown == {"market_analyst": ["get_market_data"], "social_analyst": ["get_reddit_data"],
                     "news_analyst": ["get_news_data", "get_macro_indicators"],
                     "fundamentals_analyst": ["get_cashflow"]}


def calls_while_tools_are_bound(call):
    """The market analyst calls a tool whenever it is shown tools, and writes prose when it is not."""
    if call.role == "market_analyst" and call.tools:
        return MARKET_CALL
    return default_script(call)


def test_the_tool_loop_is_bounded_and_its_last_round_yields_a_report(run, contexts):
    (decision,), engine = run(contexts(DAY), calls_while_tools_are_bound, max_tool_rounds=2)
    market = [c for c in engine.calls if c.role == "market_analyst"]
    assert [c.tools for c in market] == [["get_market_data", "get_stock_indicators"]] * 2 + [[]]
    assert len(decision.trace.tool_calls) == 2
    assert decision.trace.messages[0] == {"role": "market_analyst", "content": "market_analyst says the stock looks fine."}
    assert decision.trace.parse_failures == []
    assert decision.trace.extra["analyst_tool_calls"]["market"] == 2


def test_a_call_written_on_the_last_round_is_dropped_and_recorded(run, contexts):
    def always_calls(call):
        return MARKET_CALL if call.role == "market_analyst" else default_script(call)

    (decision,), engine = run(contexts(DAY), always_calls, max_tool_rounds=2)
    assert [c.role for c in engine.calls].count("market_analyst") == 3
    assert len(decision.trace.tool_calls) == 2, "the third call is not run"
    assert decision.trace.messages[0] == {"role": "market_analyst", "content": "(no report)"}
    assert decision.trace.parse_failures == [
        "dropped_call: market_analyst: get_market_data written after the last tool round, not run"]


def test_a_required_first_call_is_decoded_under_the_forced_call_grammar(run, contexts):
    (context,) = contexts(DAY)
    (decision,), engine = run([context], calls_tool_once, first_tool_call="required", tool_call_tokens=77)
    market = [c for c in engine.calls if c.role == "market_analyst"]
    own = [convert_to_openai_tool(t) for t in context.tools.langchain_tools()
           if t.name in ("get_market_data", "get_stock_indicators")]
    assert market[0].params.grammar == forced_call_grammar(None, own)
    assert market[0].params.max_new_tokens == 77
    assert market[1].params.grammar is None and market[1].params.max_new_tokens == DebateSettings().quick.max_new_tokens
    by_role = {}
    for call in sorted(engine.calls, key=lambda c: c.start):
        by_role.setdefault(call.role, []).append(call)
    for role in ("market_analyst", "social_analyst", "news_analyst", "fundamentals_analyst"):
        first, *rest = by_role[role]
        assert first.params.grammar is not None and all(c.params.grammar is None for c in rest), role


def test_a_required_first_call_needs_a_tool_round():
    with pytest.raises(ValueError, match="needs max_tool_rounds >= 1"):
        DebateSettings(first_tool_call="required", max_tool_rounds=0)


def test_every_tool_reaches_an_analyst_by_default():
    config = OmegaConf.load(ROOT / "configs" / "framework" / "multi_agent.yaml")
    for tools in (DebateSettings().analyst_tools, OmegaConf.to_container(config.analyst_tools)):
        shared = [t for t in TOOLS if sum(t in listed for listed in tools.values()) != 1]
        assert shared == [], "each tool is one analyst's"
    assert config.first_tool_call == "required"


def test_a_call_of_another_analysts_tool_is_refused_and_recorded(run, contexts):
    request = '<tool_call>{"name": "get_cashflow", "arguments": {"ticker": "MSFT"}}</tool_call>'
    (decision,), engine = run(contexts(DAY), lambda call: calls_tool_once(call, request))
    (record,) = decision.trace.tool_calls
    assert record.name == "get_cashflow" and record.error.startswith("get_cashflow is not one of your tools")
    answer = [c for c in engine.calls if c.role == "market_analyst"][1].conversation[-2]["content"]
    assert answer.startswith("Error: get_cashflow is not one of your tools")


def test_a_future_date_is_clamped_and_flagged(run, contexts):
    request = ('<tool_call>{"name": "get_market_data", "arguments": {"ticker": "MSFT", "end_date": "2020-03-02"}}'
               '</tool_call>')
    (decision,), engine = run(contexts(DAY), lambda call: calls_tool_once(call, request))
    (record,) = decision.trace.tool_calls
    assert record.lookahead and record.error is None
    answer = [c for c in engine.calls if c.role == "market_analyst"][1].conversation[-2]["content"]
    assert "..2020-02-03" in answer and "2020-03" not in answer.split("\n")[0]


def test_bad_arguments_and_unparsable_calls_are_recorded(run, contexts):
    bad_arguments = '<tool_call>{"name": "get_market_data", "arguments": {"lookback_days": 3}}</tool_call>'
    (decision,), _ = run(contexts(DAY), lambda call: calls_tool_once(call, bad_arguments))
    (record,) = decision.trace.tool_calls
    assert record.error.startswith("bad arguments for get_market_data: ticker: Field required")

    garbled = '<tool_call>{"name": "get_market_data", "arguments": </tool_call>'
    (decision,), _ = run(contexts(DAY), lambda call: calls_tool_once(call, garbled))
    assert decision.trace.tool_calls == []
    (failure,) = decision.trace.parse_failures
    assert failure.startswith("tool_call: market_analyst: tool call 0: invalid JSON")


def test_without_a_tool_set_the_analysts_write_from_nothing(run, contexts):
    (context,) = contexts(DAY)
    no_tools = type(context)(ticker=context.ticker, date=context.date, view=context.view, seed=0, tools=None)
    (decision,), engine = run([no_tools], calls_tool_once)
    assert all(c.tools == [] for c in engine.calls)
    assert [c.role for c in engine.calls].count("market_analyst") == 1
    assert decision.trace.tool_calls == []
    assert decision.trace.messages[0] == {"role": "market_analyst", "content": "(no report)"}
    assert decision.trace.parse_failures == [
        "dropped_call: market_analyst: get_market_data written after the last tool round, not run"]
