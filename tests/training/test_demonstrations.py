"""Warm-start demonstrations: the randomised expert's episodes in the policy's tokens, terse or not."""

from __future__ import annotations

import pandas as pd
import pytest

from llm_backends.tiny import TinySpec, ensure_tiny
from single_agent.parser import parse_step
from training.config import ModelConfig
from training.demonstrations import demonstration_episodes, supervised_dataset, terse_turn
from training.policy_model import load_policy, rollout_engine


@pytest.fixture(scope="module")
def renderer(cache_root):
    folder = ensure_tiny(TinySpec())
    model, tokenizer = load_policy(folder, ModelConfig(source="path", path=str(folder), device="cpu", dtype="float32"))
    return rollout_engine(model, tokenizer, "tiny")


@pytest.fixture(scope="module")
def days(market, tickers):
    return pd.DataFrame([(t, d) for t in tickers for d in market.frame(t).index[40:70]], columns=["ticker", "date"])


def test_a_terse_turn_keeps_the_step(compact):
    call = parse_step(terse_turn('<think>last_close 92.7</think>\n<tool_call>\n{"name": "get_news_data", '
                                 '"arguments": {"ticker": "ALFA"}}\n</tool_call>', compact), compact.tools)
    assert call.think == "Next: get_news_data." and call.calls[0].name == "get_news_data" and not call.failures
    answer = "<think>get_news_data says: mean_sentiment -0.3. I sell.</think>\n<answer>SELL</answer>"
    assert terse_turn(answer, compact) == answer


@pytest.mark.parametrize("terse", [False, True])
def test_randomised_demonstrations_follow_the_plan_and_mask_only_the_expert(renderer, compact, market, days, terse):
    episodes = demonstration_episodes(renderer, compact, market, days, count=12, seed=5, randomise=True, terse=terse)
    assert len(episodes) == 12 and len({(e.ticker, e.date) for e in episodes}) == 12
    for episode in episodes:
        names = [x.call.name for x in episode.exchanges]
        assert names[:2] == list(compact.required_tools) and len(names) == 3
        assert episode.end_reason == "answer" and not episode.parse_failures()
    call_thinks = [turn.step.think for e in episodes for turn in e.turns if turn.step.calls]
    assert all(t.startswith("Next: ") for t in call_thinks) == terse
    assert all(e.turns[-1].step.think.startswith(f"{e.exchanges[-1].call.name} says: ") for e in episodes)
    examples = supervised_dataset(episodes)
    for example, episode in zip(examples, episodes):
        assert len(example["input_ids"]) == len(example["assistant_masks"])
        taught = [i for i, m in zip(example["input_ids"], example["assistant_masks"]) if m]
        assert taught == [i for i, m in zip(episode.tokens.completion_ids, episode.tokens.model_mask) if m]


def test_randomised_answers_and_tools_do_not_follow_the_news(renderer, compact, market, days):
    """Over many days the randomised expert reads news about half the time and answers all three actions."""
    episodes = demonstration_episodes(renderer, compact, market, days, count=60, seed=1, randomise=True, terse=True)
    reads = sum(any(x.call.name == "get_news_data" for x in e.exchanges) for e in episodes)
    answers = {e.final_action.value for e in episodes}
    assert 15 <= reads <= 45 and answers == {"BUY", "SELL", "HOLD"}
