"""The episode record: how it ends, what it executes, and the trace it leaves."""

from __future__ import annotations

import pytest
from episode_builders import DATE, TICKER, call_text, episode
from pydantic import ValidationError

from market.decision import Action
from single_agent.episode import Episode, TokenRecord
from single_agent.failures import NO_ANSWER, failure_counts


def test_a_new_episode_holds_the_prompt_and_runs(compact):
    fresh = Episode.start(compact, TICKER, "2024-03-28 16:00")
    assert (fresh.date, fresh.protocol, fresh.fallback_action) == (DATE, "compact", Action.HOLD)
    assert [m["role"] for m in fresh.prompt] == ["system", "user"]
    assert fresh.prompt[1]["content"].endswith(f"{DATE}\nTicker: {TICKER}")
    assert fresh.end_reason is None and fresh.final_action is None and not fresh.fallback


def test_an_answered_episode_executes_the_answer(compact):
    done = episode(compact, [call_text("get_market_data"), "<think>up</think>\n<answer>sell</answer>"], "answer")
    assert done.final_action is Action.SELL and done.executed_action is Action.SELL
    assert not done.fallback and done.parse_failures() == []
    assert done.decision().action is Action.SELL


def test_an_episode_without_an_answer_executes_the_fallback(compact):
    done = episode(compact, [call_text("get_market_data")] * 3 + ["<think>x</think><answer>maybe</answer>"],
                   "turn_limit")
    assert done.final_action is None and done.fallback and done.executed_action is Action.HOLD
    lines = done.parse_failures()
    assert lines == ["invalid_answer: turn 3: 'maybe' is not BUY, SELL or HOLD",
                     f"{NO_ANSWER}: ended by turn_limit; HOLD executed"]
    assert failure_counts(lines) == {"invalid_answer": 1, NO_ANSWER: 1}
    trace = done.trace()
    assert trace.fallback and trace.parse_failures == lines


def test_answer_as_end_reason_needs_an_answer(compact):
    with pytest.raises(ValidationError, match="needs a last turn with a valid answer"):
        episode(compact, [call_text("get_market_data")], "answer")


def test_the_trace_holds_messages_calls_tokens_and_extra(compact):
    done = episode(compact, [call_text("get_market_data"), call_text("get_news_data"),
                             "<think>news good</think>\n<answer>BUY</answer>"], "answer", lookahead_turns=(1,))
    trace = done.trace({"reward": {"total": 1.5}})
    assert [m["role"] for m in trace.messages] == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert trace.messages[3] == {"role": "tool", "name": "get_market_data", "tool_call_id": done.turns[0].step.calls[0].id,
                                 "content": "get_market_data result"}
    assert trace.messages[-1]["content"] == done.turns[-1].step.text
    assert [(c.name, c.lookahead) for c in trace.tool_calls] == [("get_market_data", False), ("get_news_data", True)]
    assert [c.prompt_tokens for c in trace.llm_calls] == [100, 100, 100]
    assert trace.extra == {"protocol": "compact", "end_reason": "answer", "reward": {"total": 1.5}}
    assert not trace.fallback


def test_the_token_record_must_align():
    TokenRecord(prompt_ids=[1, 2], completion_ids=[3, 4, 5], model_mask=[1, 0, 1], logprobs=[-0.1, None, -0.2])
    with pytest.raises(ValidationError, match="model_mask has 2 entries for 3 tokens"):
        TokenRecord(prompt_ids=[1], completion_ids=[3, 4, 5], model_mask=[1, 0])
    with pytest.raises(ValidationError, match="other than 0 and 1"):
        TokenRecord(prompt_ids=[1], completion_ids=[3], model_mask=[2])
    with pytest.raises(ValidationError, match="logprobs has 1 entries"):
        TokenRecord(prompt_ids=[1], completion_ids=[3, 4], model_mask=[1, 1], logprobs=[0.0])
