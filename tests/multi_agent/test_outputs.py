"""Reading the deciders' answers: JSON, free text, failures."""

from __future__ import annotations

import pytest

from multi_agent.outputs import (PortfolioDecision, Rating, ResearchPlan, TraderAction, TraderProposal,
                                 output_instructions, parse_output, render_output)


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
