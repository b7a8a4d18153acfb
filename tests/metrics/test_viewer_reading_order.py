"""`metrics.viewer.reading_order`: journaled traces as the blocks of a decision page."""

from __future__ import annotations

import pytest
from expert_episodes import play

from market.decision import LLMCallRecord, ToolCallRecord, Trace
from market.synthetic import generate_market
from metrics.viewer.export import action_text
from metrics.viewer.reading_order import reading_order, segments
from multi_agent.pipeline import transcript
from single_agent.expert import ScriptedExpert
from single_agent.protocol import load_protocol
from single_agent.self_consistency import consensus_decision

MARKET = generate_market(tickers=["ALFA"], days=120, seed=0)
DAY = MARKET.frame("ALFA").index[100]


@pytest.mark.parametrize("text", [
    "<think>a</think>\n<tool_call>{}</tool_call>", "<think>open but never closed", "plain", "",
    "x<answer>BUY</answer>y<think>t</think>", "<think><answer>HOLD</answer></think>"])
def test_segments_rejoin_to_the_raw_text(text):
    parts = segments(text)
    assert "".join(piece for _, piece in parts) == text
    assert {kind for kind, _ in parts} <= {"text", "think", "tool_call", "answer"}


def test_segments_name_the_protocol_blocks():
    assert segments("<think>why</think>\n<answer>SELL</answer>") == [
        ("think", "<think>why</think>"), ("text", "\n"), ("answer", "<answer>SELL</answer>")]


def test_a_single_agent_episode_reads_turn_by_turn_with_its_calls_and_results():
    episode = play(ScriptedExpert(load_protocol("compact")), MARKET, "ALFA", DAY)
    trace = episode.trace({"reward": {"format": 0.1, "tool": 0.0}, "reward_config": "compact"})
    reading = reading_order(trace.model_dump(mode="json"))
    assert reading["shape"] == "conversation"
    kinds = [block["type"] for block in reading["blocks"]]
    assert kinds == ["prompt", *["turn"] * len(episode.turns), "outcome"]
    turns = reading["blocks"][1:-1]
    for turn, played in zip(turns, episode.turns):
        assert "".join(piece for _, piece in turn["segments"]) == played.step.text
        assert [c["record"]["name"] for c in turn["calls"]] == [e.record.name for e in played.exchanges]
        assert [c["result"] for c in turn["calls"]] == [e.response for e in played.exchanges]
        assert turn["llm"] == played.llm.model_dump(mode="json")
    assert turns[-1]["answer"] == episode.final_action.value
    outcome = reading["blocks"][-1]
    assert outcome["reward"] == {"format": 0.1, "tool": 0.0} and outcome["end_reason"] == "answer"
    assert outcome["extra"] == {"protocol": "compact", "reward_config": "compact"}
    assert outcome["llm_calls"] == outcome["tool_calls"] == outcome["failures"] == []


def test_parse_failures_sit_on_their_turn_and_episode_failures_under_the_outcome():
    episode = play(ScriptedExpert(load_protocol("compact")), MARKET, "ALFA", DAY)
    trace = episode.trace().model_dump(mode="json")
    trace["parse_failures"] = ["missing_think: turn 1: no <think> block", "no_answer: ended by turn_limit; HOLD executed"]
    blocks = reading_order(trace)["blocks"]
    assert blocks[2]["failures"] == ["missing_think: turn 1: no <think> block"]
    assert blocks[-1]["failures"] == ["no_answer: ended by turn_limit; HOLD executed"]


def test_a_self_consistency_trace_lists_the_calls_it_cannot_pair():
    episodes = [play(ScriptedExpert(load_protocol("compact")), MARKET, "ALFA", DAY) for _ in range(2)]
    trace = consensus_decision(episodes).trace
    reading = reading_order(trace.model_dump(mode="json"))
    turns = [b for b in reading["blocks"] if b["type"] == "turn"]
    assert all(t["llm"] is None for t in turns) and all(c["record"] is None for t in turns for c in t["calls"])
    outcome = reading["blocks"][-1]
    assert len(outcome["llm_calls"]) == len(trace.llm_calls) and len(outcome["tool_calls"]) == len(trace.tool_calls)
    assert outcome["extra"]["votes"] == trace.extra["votes"]


def debate_trace() -> Trace:
    """A debate's trace as `multi_agent.pipeline` records it (its transcript function), the market
    analyst having called a tool over two rounds and the trader's answer cut short."""
    final = {
        "reports": {"news": "News report.", "market": "Market report."},
        "debate": [{"speaker": "bull_researcher", "text": "Up."}, {"speaker": "bear_researcher", "text": "Down."},
                   {"speaker": "bull_researcher", "text": "Up again."}],
        "plan_text": "Recommendation: Buy", "proposal_text": "Action: Sell",
        "risk_debate": [{"speaker": "aggressive_analyst", "text": "Go."}],
        "decision_text": "Rating: Overweight",
    }
    roles = ["market_analyst", "market_analyst", "news_analyst", "bull_researcher", "bear_researcher",
             "bull_researcher", "research_manager", "trader", "aggressive_analyst", "portfolio_manager"]
    return Trace(
        messages=transcript(final),
        llm_calls=[LLMCallRecord(role=role, prompt_tokens=10 + i, completion_tokens=i) for i, role in enumerate(roles)],
        tool_calls=[ToolCallRecord(name="get_market_data", arguments={"ticker": "ALFA"}, result_chars=300)],
        parse_failures=["tool_call: news_analyst: tool call 0: invalid JSON", "proposal: cut short"],
        extra={"rating": "Overweight", "plan_recommendation": "Buy", "trader_action": "Sell",
               "parsed_as": {"plan": "json", "proposal": "cut", "decision": "json"},
               "raw_answers": {"plan": '{"recommendation": "Buy"}', "proposal": '{"action": "Sell", "reas',
                               "decision": '{"rating": "Overweight"}'}})


def test_a_debate_reads_node_by_node_in_graph_order():
    trace = debate_trace()
    reading = reading_order(trace.model_dump(mode="json"), {"get_market_data": "market_analyst"})
    assert reading["shape"] == "debate"
    nodes = [b for b in reading["blocks"] if b["type"] == "node"]
    assert [n["role"] for n in nodes] == [m["role"] for m in trace.messages]
    assert [n["stage"] for n in nodes][:3] == ["Analyst reports", "Analyst reports", "Bull / bear debate"]
    market, news, bull, _, bull_again = nodes[:5]
    assert [c["prompt_tokens"] for c in market["llm"]] == [10, 11], "both tool rounds on the one report"
    assert [c["name"] for c in market["calls"]] == ["get_market_data"] and market["offered"] == ["get_market_data"]
    assert bull["offered"] == []
    assert news["failures"] == ["tool_call: news_analyst: tool call 0: invalid JSON"]
    assert [c["prompt_tokens"] for c in bull["llm"]] == [13] and [c["prompt_tokens"] for c in bull_again["llm"]] == [15]
    trader = next(n for n in nodes if n["role"] == "trader")
    assert trader["parsed"] == {"output": "proposal", "value": "Sell", "how": "cut", "raw": '{"action": "Sell", "reas'}
    assert trader["failures"] == ["proposal: cut short"]
    outcome = reading["blocks"][-1]
    assert outcome["extra"] == {} and outcome["failures"] == [] and outcome["tool_calls"] == []


def test_without_the_analysts_tool_map_the_debates_tool_calls_go_under_the_outcome():
    outcome = reading_order(debate_trace().model_dump(mode="json"))["blocks"][-1]
    assert [c["name"] for c in outcome["tool_calls"]] == ["get_market_data"]


def test_a_rules_trace_has_no_blocks_and_an_unknown_shape_is_shown_as_it_is():
    assert reading_order(Trace().model_dump(mode="json")) == {"shape": "none", "blocks": []}
    trace = Trace(messages=[{"role": "planner", "content": "plan"}], extra={"note": 1}).model_dump(mode="json")
    trace["chain_hash"] = "ab12"  # a field of a newer journal format
    reading = reading_order(trace)
    assert reading["shape"] == "generic"
    assert reading["blocks"][0] == {"type": "message", "role": "planner", "name": None, "text": "plan"}
    assert reading["blocks"][-1]["other"] == {"chain_hash": "ab12"}
    assert reading["blocks"][-1]["extra"] == {"note": 1}


@pytest.mark.parametrize(("decision", "text"), [
    ({"action": "BUY"}, "BUY"), ({"action": None, "target": -0.5}, "target -0.50"),
    ({"action": None, "target": None, "weights": {"AAA": 0.25, "BBB": 0.75}}, "weights AAA 0.25, BBB 0.75"),
    ({"action": None}, "none")])
def test_a_decision_is_shown_by_its_action_target_or_weights(decision, text):
    assert action_text(decision) == text
