"""Self-consistency: the majority answer of k episodes, ties to the earliest, the cost of all k in the trace."""

from __future__ import annotations

from episode_builders import call_text, episode

from market.decision import Action
from single_agent.self_consistency import consensus_decision, majority, shown_episode


def answered(protocol, action: str, calls: int = 1):
    return episode(protocol, [call_text("get_market_data")] * calls + [f"<think>x</think>\n<answer>{action}</answer>"],
                   "answer")


def unanswered(protocol):
    return episode(protocol, ["<think>x</think>\nno idea"], "parse_failure")


def test_the_most_common_answer_wins_and_ties_go_to_the_earliest(compact):
    assert majority([answered(compact, "SELL"), answered(compact, "BUY"), answered(compact, "BUY")]) is Action.BUY
    assert majority([answered(compact, "SELL"), answered(compact, "BUY")]) is Action.SELL
    assert majority([unanswered(compact), answered(compact, "HOLD"), unanswered(compact)]) is Action.HOLD
    assert majority([unanswered(compact)]) is None


def test_the_trace_reads_as_the_chosen_episode_and_counts_every_one(compact):
    episodes = [answered(compact, "SELL", calls=2), unanswered(compact), answered(compact, "BUY"),
                answered(compact, "BUY", calls=3)]
    assert shown_episode(episodes) is episodes[2]
    decision = consensus_decision(episodes, {"reward": {"format": 0.1}})
    assert decision.action is Action.BUY and not decision.trace.fallback
    assert decision.trace.messages == episodes[2].messages()
    assert len(decision.trace.llm_calls) == 3 + 1 + 2 + 4 and len(decision.trace.tool_calls) == 2 + 0 + 1 + 3
    assert decision.trace.extra["votes"] == {"SELL": 1, "BUY": 2} and decision.trace.extra["samples"] == 4
    assert decision.trace.extra["reward"] == {"format": 0.1}
    assert any(line.startswith("no_answer") for line in decision.trace.parse_failures)


def test_without_any_valid_answer_the_fallback_is_executed(compact):
    episodes = [unanswered(compact), unanswered(compact)]
    decision = consensus_decision(episodes)
    assert decision.action is Action.HOLD and decision.trace.fallback
    assert decision.trace.extra["votes"] == {} and decision.trace.messages == episodes[0].messages()
