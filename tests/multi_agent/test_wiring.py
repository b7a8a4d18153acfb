"""The debate graph's wiring, driven by a scripted engine: rounds, order, parallel analysts,
routing variants, accounting, failures and fallbacks."""

from __future__ import annotations

import itertools

import pytest
from scripted import DECIDERS, default_script, json_answer

from market.decision import Action
from multi_agent.outputs import output_instructions
from multi_agent.roles.deciders import answer_grammar
from multi_agent.roles.analysts import ANALYST_INSTRUCTIONS
from multi_agent.roles.debaters import DEBATER_INSTRUCTIONS
from multi_agent.routing import RESEARCHERS, RISK_ANALYSTS

ANALYST_ROLES = ["market_analyst", "social_analyst", "news_analyst", "fundamentals_analyst"]
DAY = ("MSFT", "2020-02-03")


@pytest.mark.parametrize(("debate_rounds", "risk_rounds"), [(1, 1), (2, 3), (3, 2)])
def test_the_configured_rounds_are_exactly_what_runs(run, contexts, debate_rounds, risk_rounds):
    (decision,), engine = run(contexts(DAY), max_debate_rounds=debate_rounds, max_risk_rounds=risk_rounds)
    roles = engine.roles()
    assert sorted(roles[:4]) == sorted(ANALYST_ROLES)
    debate = roles[4:4 + 2 * debate_rounds]
    risk = roles[6 + 2 * debate_rounds:-1]
    assert debate == list(RESEARCHERS) * debate_rounds
    assert roles[4 + 2 * debate_rounds:6 + 2 * debate_rounds] == ["research_manager", "trader"]
    assert risk == list(RISK_ANALYSTS) * risk_rounds
    assert roles[-1] == "portfolio_manager"
    assert decision.action == Action.BUY and not decision.trace.fallback


def test_each_speaker_reads_the_debate_so_far(run, contexts):
    _, engine = run(contexts(DAY), max_debate_rounds=2)
    bear_turns = [c for c in engine.calls if c.role == "bear_researcher"]
    assert "Bull researcher: bull_researcher says" in bear_turns[0].prompt
    assert bear_turns[1].prompt.count("Bear researcher: bear_researcher says") == 1
    manager = next(c for c in engine.calls if c.role == "research_manager")
    assert manager.prompt.count("researcher says") == 4


@pytest.mark.slow
def test_the_analysts_run_in_parallel_and_the_debate_waits_for_all(run, contexts):
    _, engine = run(contexts(DAY), delay_s=0.5)
    analysts = [c for c in engine.calls if c.role in ANALYST_ROLES]
    assert len(analysts) == 4
    assert max(c.start for c in analysts) < min(c.end for c in analysts), "analyst calls did not overlap"
    bull = next(c for c in engine.calls if c.role == "bull_researcher")
    assert bull.start >= max(c.end for c in analysts)
    assert all(f"[{name}]" in bull.prompt for name in ("market", "social", "news", "fundamentals"))


@pytest.mark.slow
def test_many_graphs_run_concurrently(run, contexts):
    days = [("MSFT", d) for d in ("2020-02-03", "2020-02-04", "2020-02-05")]
    decisions, engine = run(contexts(*days), delay_s=1.0)
    first_calls = [min((c for c in engine.calls if date in c.prompt), key=lambda c: c.start) for _, date in days]
    assert len(decisions) == 3
    assert max(c.start for c in first_calls) < min(c.end for c in first_calls), "the graphs ran one after another"


def test_without_the_risk_team_the_trader_hands_to_the_portfolio_manager(run, contexts):
    _, engine = run(contexts(DAY), risk_team=False, analysts=("market",))
    assert engine.roles() == ["market_analyst", *RESEARCHERS, "research_manager", "trader", "portfolio_manager"]
    manager = engine.calls[-1]
    assert "The trader's proposal:\nAction: Buy" in manager.prompt and "risk debate" not in manager.prompt


def test_the_portfolio_manager_reads_plan_proposal_and_risk_debate(run, contexts):
    _, engine = run(contexts(DAY))
    prompt = engine.calls[-1].prompt
    for heading in ("The research manager's plan:\nRecommendation: Buy", "The trader's proposal:\nAction: Buy",
                    "The risk debate:\nAggressive analyst:", "Conservative analyst:", "Neutral analyst:"):
        assert heading in prompt


def test_every_llm_call_is_booked_under_its_node(run, contexts):
    (decision,), engine = run(contexts(DAY))
    calls = decision.trace.llm_calls
    assert sorted(c.role for c in calls) == sorted(engine.roles())
    assert [(c.prompt_tokens, c.completion_tokens) for c in sorted(calls, key=lambda c: c.role)] == [
        (sum(len(str(m["content"]).split()) for m in e.conversation), len(default_script(e).split()))
        for e in sorted(engine.calls, key=lambda e: e.role)]
    assert all(c.model == "scripted" and c.latency_s >= 0 for c in calls)


def test_sampling_is_seeded_per_decision_and_sized_per_tier(run, contexts):
    _, engine = run(contexts(DAY, seed=7), quick={"max_new_tokens": 40}, deep={"max_new_tokens": 70},
                    first_tool_call="auto")
    assert {(c.role in ("research_manager", "portfolio_manager"), c.params.max_new_tokens, c.params.seed)
            for c in engine.calls} == {(False, 40, 7), (True, 70, 7)}


@pytest.mark.parametrize("constrained", [True, False])
def test_the_deciders_alone_decode_under_their_answer_grammars(run, contexts, constrained):
    _, engine = run(contexts(DAY), constrained=constrained, answer_chars=90, first_tool_call="auto")
    for call in engine.calls:
        expected = answer_grammar(DECIDERS[call.role], 90) if constrained and call.role in DECIDERS else None
        assert call.params.grammar == expected, call.role
    assert all(call.params.grammar for call in engine.calls if call.role in DECIDERS) == constrained


def test_a_constrained_answer_cut_short_still_gives_its_rating(run, contexts):
    def script(call):
        return '{"rating": "Sell", "executive_summary": "buy the dip' if call.role == "portfolio_manager" \
            else default_script(call)

    (decision,), _ = run(contexts(DAY), script)
    assert decision.action == Action.SELL and not decision.trace.fallback
    assert decision.trace.extra["parsed_as"]["decision"] == "cut" and decision.trace.parse_failures == []
    assert decision.trace.extra["raw_answers"]["decision"] == '{"rating": "Sell", "executive_summary": "buy the dip'


@pytest.mark.parametrize(("tier", "action"), [("Buy", Action.BUY), ("Overweight", Action.BUY), ("Hold", Action.HOLD),
                                              ("Underweight", Action.SELL), ("Sell", Action.SELL)])
def test_the_five_tier_rating_is_recorded_and_mapped(run, contexts, tier, action):
    def script(call):
        return json_answer(call.role, tier) if call.role == "portfolio_manager" else default_script(call)

    (decision,), _ = run(contexts(DAY), script)
    assert decision.action == action
    assert decision.trace.extra["rating"] == tier and decision.trace.extra["parsed_as"]["decision"] == "json"


def test_the_rating_map_is_configuration(run, contexts):
    def script(call):
        return json_answer(call.role, "Overweight") if call.role == "portfolio_manager" else default_script(call)

    (decision,), _ = run(contexts(DAY), script, rating_actions={"Buy": "BUY", "Overweight": "HOLD", "Hold": "HOLD",
                                                                "Underweight": "SELL", "Sell": "SELL"})
    assert decision.action == Action.HOLD


def test_a_final_answer_in_free_text_is_read_tolerantly(run, contexts):
    def script(call):
        return "After the debate, my rating: **UNDERWEIGHT**." if call.role == "portfolio_manager" else default_script(call)

    (decision,), _ = run(contexts(DAY), script)
    assert decision.action == Action.SELL and not decision.trace.fallback
    assert decision.trace.extra["parsed_as"]["decision"] == "text" and decision.trace.parse_failures == []


def test_a_final_answer_that_does_not_parse_gets_the_configured_fallback(run, contexts):
    def script(call):
        return "Both sides have merit; buy or sell." if call.role == "portfolio_manager" else default_script(call)

    (decision,), _ = run(contexts(DAY), script, fallback_action="SELL")
    assert decision.action == Action.SELL and decision.trace.fallback and decision.trace.error is None
    (failure,) = decision.trace.parse_failures
    assert failure.startswith("decision: no JSON object and no single rating")
    assert decision.trace.extra["rating"] is None
    assert decision.trace.messages[-1] == {"role": "portfolio_manager", "content": "Both sides have merit; buy or sell."}


def test_an_unparsed_plan_is_recorded_and_passed_on_as_written(run, contexts):
    def script(call):
        return "No idea at all." if call.role == "research_manager" else default_script(call)

    (decision,), engine = run(contexts(DAY), script)
    assert decision.trace.parse_failures == ["plan: no JSON object and no single recommendation in the answer: 'No idea at all.'"]
    assert not decision.trace.fallback and decision.action == Action.BUY
    trader = next(c for c in engine.calls if c.role == "trader")
    assert "The research manager's plan:\nNo idea at all." in trader.prompt


def test_a_node_that_raises_fails_its_decision_alone(run, contexts):
    def script(call):
        if call.role == "trader" and "NVDA" in call.prompt:
            raise RuntimeError("trader crashed")
        return default_script(call)

    decisions, engine = run(contexts(DAY, ("NVDA", "2020-02-03")), script, fallback_action="HOLD")
    ok, failed = decisions
    assert ok.action == Action.BUY and not ok.trace.fallback and ok.trace.error is None
    assert failed.action == Action.HOLD and failed.trace.fallback
    assert failed.trace.error == "RuntimeError: trader crashed"
    booked = {c.role for c in failed.trace.llm_calls}
    assert booked == {*ANALYST_ROLES, *RESEARCHERS, "research_manager"}, "calls before the failure stay booked"


def test_every_role_reads_its_instructions_last(run, contexts):
    _, engine = run(contexts(DAY))
    for role, schema in DECIDERS.items():
        prompt = next(c for c in engine.calls if c.role == role).prompt
        assert prompt.endswith(output_instructions(schema, constrained=True)) and f'"{schema.tier_field}" (' in prompt
    assert all(c.prompt.endswith(ANALYST_INSTRUCTIONS) for c in engine.calls if c.role in ANALYST_ROLES)
    assert all(c.prompt.endswith(DEBATER_INSTRUCTIONS) for c in engine.calls if c.role in RESEARCHERS + RISK_ANALYSTS)


def test_system_prompts_name_no_stock_or_date(run, contexts):
    _, engine = run(contexts(DAY, ("NVDA", "2020-02-04")))
    by_role = itertools.groupby(sorted(engine.calls, key=lambda c: c.role), key=lambda c: c.role)
    for role, calls in by_role:
        systems = {c.conversation[0]["content"] for c in calls}
        assert len(systems) == 1, f"{role}: the system prompt varies between decisions"
        assert "MSFT" not in systems.pop()
