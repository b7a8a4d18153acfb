"""The scripted expert: protocol-valid text, the plan it follows, its seeded random variant, and
that its answers from news beat chance against the regime label on a synthetic market."""

from __future__ import annotations

import llguidance
import llguidance.hf
import numpy as np
import pandas as pd
import pytest
from expert_episodes import play, step_once

from llm_backends.tool_calls import render_tool_call
from market.decision import Action
from market.regime import ACTION_OF_REGIME, regime_labels
from market.synthetic import generate_market
from market.view import MarketView
from single_agent.episode import Episode
from single_agent.expert import ExpertConfig, ScriptedExpert, summary_values
from single_agent.grammar import protocol_grammar
from single_agent.offered_tools import protocol_toolset
from single_agent.rewards import episode_rewards, regime_label

MARKET = generate_market(tickers=["ALFA", "BRVO", "CHRL", "DLTA"], days=300, seed=0)
"""`data=synthetic`'s market (default knobs: only the news channel is informative), four tickers."""


def days_of(ticker: str, every: int) -> pd.DatetimeIndex:
    labelled = regime_labels(MARKET.frame(ticker)["close"]).dropna().index
    return labelled[20::every]


@pytest.mark.slow
def test_expert_turns_are_clean_grammar_valid_and_follow_the_plan(compact, compact_reward, smollm2_tokenizer):
    expert = ScriptedExpert(compact)
    ll = llguidance.hf.from_tokenizer(smollm2_tokenizer)
    for day in days_of("ALFA", 40):
        episode = play(expert, MARKET, "ALFA", day)
        assert episode.end_reason == "answer" and episode.parse_failures() == []
        assert [e.call.name for e in episode.exchanges] == ["get_market_data", "get_stock_indicators", "get_news_data"]
        assert not any(e.record.error for e in episode.exchanges)
        grammar = llguidance.LLMatcher.grammar_from_lark(protocol_grammar(compact, ticker="ALFA"))
        for turn in episode.turns:
            matcher = llguidance.LLMatcher(ll, grammar, log_level=0)
            ids = smollm2_tokenizer.encode(turn.step.text, add_special_tokens=False)
            assert matcher.consume_tokens(ids) and matcher.consume_token(smollm2_tokenizer.eos_token_id), turn.step.text
        rewards = episode_rewards(episode, regime_label(MARKET.frame("ALFA")["close"], day, compact_reward),
                                  compact_reward, lambda text: len(smollm2_tokenizer.encode(text)))
        assert rewards.tool == 0.0 and rewards.format > 0


def test_the_answer_follows_the_news_it_read(compact):
    expert = ScriptedExpert(compact, ExpertConfig(threshold=0.1))
    seen = set()
    for day in days_of("BRVO", 10):
        episode = play(expert, MARKET, "BRVO", day)
        sentiment = summary_values(episode.exchanges[-1].response).get("mean_sentiment")
        expected = Action.HOLD if sentiment is None or abs(sentiment) <= 0.1 else \
            Action.BUY if sentiment > 0 else Action.SELL
        assert episode.final_action is expected
        seen.add(expected)
    assert seen == set(Action)


def test_summary_values():
    text = "AAA news: 3 items\ntime,sentiment\nsummary: count=3, mean_sentiment=-0.25, note=na, big=1.5M"
    assert summary_values(text) == {"count": 3.0, "mean_sentiment": -0.25}
    assert summary_values("AAA news: 0 items") == {}


def test_the_random_expert_is_seeded_and_carries_no_information(paper):
    days = days_of("CHRL", 5)
    runs = {seed: ScriptedExpert(paper, ExpertConfig(randomise=True, seed=seed)) for seed in (0, 1)}
    plans = {seed: [tuple(expert.plan(Episode.start(paper, "CHRL", day))) for day in days] for seed, expert in runs.items()}
    assert plans[0] == [tuple(runs[0].plan(Episode.start(paper, "CHRL", day))) for day in days]
    assert plans[0] != plans[1]
    for plan in plans[0]:
        assert plan[:2] == paper.required_tools and 3 <= len(plan) <= paper.max_tool_calls
        assert len(set(plan)) == len(plan)
    assert len({plan[2] for plan in plans[0]}) > 3  # the optional tools vary
    answers = [runs[0].decide(Episode.start(paper, "CHRL", day))[0] for day in days]
    assert set(answers) == set(Action)
    episode = play(runs[0], MARKET, "CHRL", days[0])
    assert episode.parse_failures() == [] and [e.call.name for e in episode.exchanges] == list(plans[0][0])
    assert "sentiment" not in episode.turns[-1].step.text
    assert episode.final_action is answers[0]  # what it read did not change the answer


def news_action(expert: ScriptedExpert, ticker: str, day: pd.Timestamp) -> Action:
    """The expert's answer after reading only the news, through the protocol's call."""
    episode = Episode.start(expert.protocol, ticker, day)
    toolset = protocol_toolset(expert.protocol, MarketView(MARKET, day))
    step_once(episode, f"<think>news</think>\n{render_tool_call('get_news_data', {'ticker': ticker})}",
              expert.protocol, toolset)
    return expert.decide(episode)[0]


@pytest.mark.slow
def test_answers_from_news_beat_chance_against_the_regime_label(compact):
    """Accuracy against the label, compared with the same answers shifted in time within each ticker
    (a circular shift keeps both series' autocorrelation and breaks only their alignment)."""
    expert = ScriptedExpert(compact)
    actions, labels = {}, {}
    for ticker in MARKET.tickers:
        days = days_of(ticker, 1)
        actions[ticker] = np.array([news_action(expert, ticker, day).value for day in days])
        labels[ticker] = regime_labels(MARKET.frame(ticker)["close"])[days].map(ACTION_OF_REGIME).to_numpy()

    def accuracy(shift: int) -> float:
        return float(np.mean(np.concatenate([np.roll(actions[t], shift) == labels[t] for t in actions])))

    shifts = np.random.default_rng(0).integers(20, len(actions["ALFA"]) - 20, 400)
    null = np.array([accuracy(int(shift)) for shift in shifts])
    observed = accuracy(0)
    p_value = (1 + np.sum(null >= observed)) / (1 + len(null))
    assert p_value < 0.05, (observed, null.mean())
    assert observed > null.mean() + 0.03
