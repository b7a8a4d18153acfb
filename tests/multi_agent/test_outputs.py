"""Reading the deciders' answers: JSON, free text, failures."""

from __future__ import annotations

import pytest

from llm_backends.build import build_engine, engine_config
from llm_backends.grammar import json_schema_grammar
from llm_backends.types import SamplingParams
from multi_agent.outputs import (OUTPUTS, PortfolioDecision, Rating, ResearchPlan, TraderAction, TraderProposal,
                                 answer_schema, output_instructions, parse_output, render_output)


@pytest.mark.parametrize(("text", "rating"), [
    ('{"rating": "Overweight", "executive_summary": "add slowly"}', Rating.OVERWEIGHT),
    ('Here it is: ```json\n{"rating": "sell"}\n```', Rating.SELL),
    ('{"rating": "**BUY**", "investment_thesis": "strong"}', Rating.BUY),
])
def test_json_answers_validate_case_and_markup_insensitively(text, rating):
    parsed = parse_output(text, PortfolioDecision)
    assert (parsed.output.rating, parsed.how, parsed.failure) == (rating, "json", None)


@pytest.mark.parametrize(("text", "rating"), [
    ("Rating: Underweight. The risks dominate.", Rating.UNDERWEIGHT),
    ("I would hold here, the buy case is weak. Final rating - **Hold**", Rating.HOLD),
    ("Everything points up, so Buy.", Rating.BUY),
    ('{"rating": "Strong buy"} ... rating: Buy', Rating.BUY),
])
def test_free_text_with_one_rating_is_read(text, rating):
    parsed = parse_output(text, PortfolioDecision)
    assert (parsed.output.rating, parsed.how) == (rating, "text")
    assert parsed.output.executive_summary == text.strip()


@pytest.mark.parametrize(("text", "reason"), [
    ("buy or sell, hard to say", "no JSON object and no single rating in the answer"),
    ("", "no JSON object and no single rating in the answer"),
    ('{"rating": "Accumulate"}', "rating: Input should be 'Buy', 'Overweight', 'Hold', 'Underweight' or 'Sell'"),
])
def test_an_answer_without_one_rating_fails_with_the_reason(text, reason):
    parsed = parse_output(text, PortfolioDecision)
    assert parsed.output is None and parsed.how == "failed"
    assert parsed.failure.startswith(reason)


def test_the_trader_has_three_tiers_and_the_plan_five():
    assert parse_output("Action: Overweight", TraderProposal).output is None
    assert parse_output('{"action": "SELL", "stop_loss": 95.5}', TraderProposal).output == TraderProposal(
        action=TraderAction.SELL, stop_loss=95.5)
    assert parse_output("Recommendation: Overweight", ResearchPlan).output.recommendation == Rating.OVERWEIGHT


def test_instructions_and_rendering_come_from_the_schema():
    instructions = output_instructions(TraderProposal)
    assert '"action" (Buy, Hold, Sell)' in instructions and '"stop_loss" (number or null)' in instructions
    for name, field in TraderProposal.model_fields.items():
        assert field.description in instructions, name
    plan = ResearchPlan(recommendation=Rating.HOLD, rationale="balanced", strategic_actions="")
    assert render_output(plan) == "Recommendation: Hold\nRationale: balanced"


def test_the_answer_schema_asks_for_the_rating_first_and_bounded_prose():
    schema = answer_schema(TraderProposal, 50)
    assert list(schema["properties"]) == schema["required"] == ["action", "reasoning"]
    assert schema["properties"]["action"] == {"enum": ["Buy", "Hold", "Sell"]}
    assert schema["properties"]["reasoning"] == {"type": "string", "maxLength": 50}
    assert list(answer_schema(PortfolioDecision, 50)["properties"]) == ["rating", "executive_summary", "investment_thesis"]
    constrained = output_instructions(TraderProposal, constrained=True)
    assert '"reasoning" (text)' in constrained and "stop_loss" not in constrained


@pytest.mark.parametrize("kind", list(OUTPUTS))
def test_the_tiny_model_under_the_grammar_always_answers_a_valid_output(kind):
    """Random weights write noise; under the grammar every sampled answer still validates."""
    schema = OUTPUTS[kind]
    engine = build_engine(engine_config("tiny"))
    grammar = json_schema_grammar(answer_schema(schema, 20))
    params = [SamplingParams(temperature=1.0, seed=seed, max_new_tokens=160, grammar=grammar) for seed in range(6)]
    results = engine.generate([[{"role": "user", "content": f"Your {kind}, please."}]] * 6, params=params)
    for result in results:
        parsed = parse_output(result.text, schema)
        assert parsed.how == "json", result.text
        assert len(getattr(parsed.output, schema.text_field)) <= 20
