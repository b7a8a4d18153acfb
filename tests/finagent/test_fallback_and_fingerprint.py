"""Nonsense answers are recorded parse failures with the fallback; the fingerprint covers prompts and grammar."""

from __future__ import annotations

import shutil

import pytest
from finagent_runs import make_agent, run

from finagent import prompting
from finagent.outputs import LatestIntelligence, TradeDecision, parse_answer
from market.decision import Action


def test_answers_that_are_not_the_schema_are_failures_naming_the_step():
    assert parse_answer("I think BUY", TradeDecision, "decision").failure == "decision: no JSON object in the answer 'I think BUY'"
    failure = parse_answer('{"analysis": "up", "action": "MAYBE", "reasoning": "x"}', TradeDecision, "decision").failure
    assert failure.startswith("decision: action:")
    answer = '{"items": [], "summary": "s", "short_term_query": "a", "medium_term_query": "b", "long_term_query": "c"}'
    assert parse_answer(answer, LatestIntelligence, "latest_intelligence", items=2).failure == \
        "latest_intelligence: 0 item readings for 2 news items"
    assert parse_answer('x {"analysis": "a", "action": "SELL", "reasoning": "r"} y', TradeDecision, "decision").answer.action == "SELL"


@pytest.mark.slow
def test_a_model_answering_nonsense_gets_recorded_failures_and_the_fallback(market, tmp_path):
    """The tiny random model decoding freely writes no JSON: every decision is the fallback, the run goes on."""
    result = run(market, make_agent(constrained=False, answer_chars=16, fallback_action="HOLD"), tmp_path / "j.sqlite")
    assert len(result.decisions) == 8 and result.failed == 0
    for entry in result.decisions:
        trace = entry.decision.trace
        assert entry.decision.action == Action.HOLD and trace.fallback
        assert any(f.startswith("decision: ") for f in trace.parse_failures)
        assert trace.extra["answers"]["decision"] == "invalid"


@pytest.mark.slow
def test_constrained_answers_of_the_tiny_model_all_parse(market, tmp_path):
    result = run(market, make_agent(), tmp_path / "j.sqlite")
    statuses = [s for e in result.decisions for s in e.decision.trace.extra["answers"].values()]
    assert "invalid" not in statuses and statuses.count("valid") > len(result.decisions)
    assert not any(e.decision.trace.fallback for e in result.decisions)


@pytest.mark.slow
def test_the_fingerprint_changes_with_a_prompt_file_the_grammar_and_the_settings(tmp_path, monkeypatch):
    agent = make_agent()
    first = agent.fingerprint()
    assert make_agent().fingerprint() == first
    assert make_agent(answer_chars=64).fingerprint() != first  # the grammars bound text fields by it
    assert make_agent(tools=False).fingerprint() != first
    assert make_agent(constrained=False).fingerprint() != first
    edited = tmp_path / "prompts"
    shutil.copytree(prompting.PROMPTS, edited)
    (edited / "decision.md").write_text((edited / "decision.md").read_text() + "\nThink twice.")
    monkeypatch.setattr(prompting, "PROMPTS", edited)
    assert agent.fingerprint() != first
