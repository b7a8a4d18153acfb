"""The turn parser: valid turns, and every failure kind of what small models write."""

from __future__ import annotations

import pytest

from llm_backends.tool_calls import render_tool_call
from market.decision import Action
from single_agent import failures as kinds
from single_agent.failures import FAILURE_KINDS, failure_counts, failure_kind
from single_agent.parser import parse_step

TOOLS = ("get_market_data", "get_stock_indicators", "get_news_data")
CALL = render_tool_call("get_market_data", {"ticker": "NVDA"})


def kinds_of(text: str) -> list[str]:
    return [failure.kind for failure in parse_step(text, TOOLS).failures]


def test_a_call_turn_parses_clean():
    step = parse_step(f"<think>Prices first.</think>\n{CALL}", TOOLS)
    assert step.failures == []
    assert step.outcome == "call"
    assert step.think == "Prices first."
    assert [(c.name, c.arguments) for c in step.calls] == [("get_market_data", {"ticker": "NVDA"})]
    assert step.answer is None


@pytest.mark.parametrize("written", ["BUY", " buy ", "Buy\n", "\nbUy"])
def test_padded_or_lower_case_answers_count(written):
    step = parse_step(f"<think>Up.</think>\n<answer>{written}</answer>", TOOLS)
    assert step.failures == []
    assert step.outcome == "answer"
    assert step.answer is Action.BUY


def test_sell_and_hold_are_answers_too():
    assert parse_step("<think>x</think><answer>SELL</answer>", TOOLS).answer is Action.SELL
    assert parse_step("<think>x</think><answer>hold</answer>", TOOLS).answer is Action.HOLD


def test_missing_think_is_flagged_but_the_call_kept():
    step = parse_step(CALL, TOOLS)
    assert [f.kind for f in step.failures] == [kinds.MISSING_THINK]
    assert step.think is None
    assert step.outcome == "call"


def test_unclosed_think_ends_at_the_first_action_tag():
    step = parse_step(f"<think>reasoning\n{CALL}", TOOLS)
    assert [f.kind for f in step.failures] == [kinds.BROKEN_TAG]
    assert step.think == "reasoning\n"
    assert step.outcome == "call"


def test_close_without_open_makes_the_leading_text_the_think():
    step = parse_step("reasoning</think>\n<answer>SELL</answer>", TOOLS)
    assert [f.kind for f in step.failures] == [kinds.BROKEN_TAG]
    assert step.think == "reasoning"
    assert step.answer is Action.SELL


def test_an_unclosed_final_call_block_is_still_run():
    step = parse_step('<think>x</think>\n<tool_call>\n{"name": "get_market_data", "arguments": {}}', TOOLS)
    assert [f.kind for f in step.failures] == [kinds.BROKEN_TAG]
    assert [c.name for c in step.calls] == ["get_market_data"]


def test_stray_closing_tags_are_flagged():
    assert kinds_of("<think>x</think></tool_call><answer>BUY</answer>") == [kinds.BROKEN_TAG]
    assert kinds_of("<think>x</think><answer>BUY</answer></answer>") == [kinds.BROKEN_TAG]


def test_an_unclosed_answer_at_the_end_counts():
    step = parse_step("<think>x</think>\n<answer>HOLD", TOOLS)
    assert [f.kind for f in step.failures] == [kinds.BROKEN_TAG]
    assert step.answer is Action.HOLD


def test_bad_json_is_a_failure_not_a_call():
    step = parse_step("<think>x</think><tool_call>{name: 'get_market_data'}</tool_call>", TOOLS)
    assert [f.kind for f in step.failures] == [kinds.BAD_JSON]
    assert step.calls == [] and step.outcome == "none"
    assert "char 1" in step.failures[0].detail


@pytest.mark.parametrize("body", ['{"arguments": {}}', '"get_market_data"', '{"name": "get_market_data", "arguments": 3}',
                                  '{"name": "", "arguments": {}}', "[]"])
def test_json_that_is_not_a_call_is_bad_call(body):
    assert kinds_of(f"<think>x</think><tool_call>{body}</tool_call>") == [kinds.BAD_CALL]


def test_unknown_tools_are_kept_for_the_tool_set_to_answer():
    step = parse_step('<think>x</think><tool_call>{"name": "get_weather", "arguments": {}}</tool_call>', TOOLS)
    assert [f.kind for f in step.failures] == [kinds.UNKNOWN_TOOL]
    assert [c.name for c in step.calls] == ["get_weather"]


def test_several_calls_in_one_turn_as_blocks_or_as_a_list():
    second = render_tool_call("get_news_data", {"ticker": "NVDA"})
    blocks = parse_step(f"<think>x</think>\n{CALL}\n{second}", TOOLS)
    listed = parse_step('<think>x</think><tool_call>[{"name": "get_market_data"}, {"name": "get_news_data"}]</tool_call>',
                        TOOLS)
    for step in (blocks, listed):
        assert [f.kind for f in step.failures] == [kinds.MULTIPLE_CALLS]
        assert [c.name for c in step.calls] == ["get_market_data", "get_news_data"]
        assert len({c.id for c in step.calls}) == 2


def test_an_answer_inside_think_is_ignored():
    step = parse_step("<think>I say <answer>BUY</answer></think>\nnothing else", TOOLS)
    assert [f.kind for f in step.failures] == [kinds.ANSWER_IN_THINK, kinds.NO_ACTION]
    assert step.answer is None


def test_a_call_inside_think_is_ignored():
    step = parse_step(f"<think>maybe {CALL}</think>\n<answer>HOLD</answer>", TOOLS)
    assert [f.kind for f in step.failures] == [kinds.CALL_IN_THINK]
    assert step.calls == [] and step.answer is Action.HOLD


def test_an_answer_with_a_call_keeps_the_call():
    step = parse_step(f"<think>x</think>\n{CALL}\n<answer>BUY</answer>", TOOLS)
    assert [f.kind for f in step.failures] == [kinds.ANSWER_AND_CALL]
    assert step.outcome == "call" and step.answer is None


def test_several_answers_count_as_none():
    step = parse_step("<think>x</think><answer>BUY</answer><answer>BUY</answer>", TOOLS)
    assert [f.kind for f in step.failures] == [kinds.MULTIPLE_ANSWERS]
    assert step.answer is None and step.outcome == "none"


@pytest.mark.parametrize("written", ["STRONG BUY", "BUY.", "", "maybe"])
def test_other_words_are_invalid_answers(written):
    step = parse_step(f"<think>x</think><answer>{written}</answer>", TOOLS)
    assert [f.kind for f in step.failures] == [kinds.INVALID_ANSWER]
    assert step.answer is None


def test_prose_is_no_action():
    assert kinds_of("I think the stock will go up.") == [kinds.MISSING_THINK, kinds.NO_ACTION]
    assert kinds_of("<think>only thinking</think>") == [kinds.NO_ACTION]


def test_failure_lines_are_kind_prefixed_and_countable():
    lines = parse_step("prose <answer>maybe</answer></answer>", TOOLS).failure_lines()
    assert all(failure_kind(line) in FAILURE_KINDS for line in lines)
    assert failure_counts(lines + ["invalid_answer: again"]) == {kinds.MISSING_THINK: 1, kinds.BROKEN_TAG: 1,
                                                                  kinds.INVALID_ANSWER: 2}


def test_the_parser_never_raises_on_junk():
    junk = ["", "<", "<tool_call>", "</think></think><think>", "<answer><answer></answer>", "<tool_call>[1, 2]</tool_call>",
            "<think><tool_call>{}</tool_call><answer>", '<tool_call>{"name": "x", "arguments": "{bad"}</tool_call>']
    for text in junk:
        step = parse_step(text, TOOLS)
        assert step.failures, text
        assert all(f.kind in FAILURE_KINDS for f in step.failures)
