"""Warm-start demonstrations: the randomised expert's episodes in the policy's tokens, terse or not."""

from __future__ import annotations

import pandas as pd
import pytest

from llm_backends.tiny import TinySpec, ensure_tiny
from single_agent.expert import TERSE_ANSWER_THINK
from training.config import ModelConfig
from training.demonstrations import demonstration_episodes, supervised_dataset
from training.policy_model import load_policy, rollout_engine


@pytest.fixture(scope="module")
def renderer(cache_root):
    folder = ensure_tiny(TinySpec())
    model, tokenizer = load_policy(folder, ModelConfig(source="path", path=str(folder), device="cpu", dtype="float32"))
    return rollout_engine(model, tokenizer, "tiny")


@pytest.fixture(scope="module")
def days(market, tickers):
    return pd.DataFrame([(t, d) for t in tickers for d in market.frame(t).index[40:70]], columns=["ticker", "date"])


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
    answer_thinks = [e.turns[-1].step.think for e in episodes]
    if terse:
        assert set(answer_thinks) == {TERSE_ANSWER_THINK}
    else:
        assert all(t.startswith(f"{e.exchanges[-1].call.name} says: ") for t, e in zip(answer_thinks, episodes))
        assert all("I buy" in t or "I sell" in t or "I hold" in t for t in answer_thinks)
    examples = supervised_dataset(episodes)
    for example, episode in zip(examples, episodes):
        assert len(example["input_ids"]) == len(example["assistant_masks"])
        taught = [i for i, m in zip(example["input_ids"], example["assistant_masks"]) if m]
        assert taught == [i for i, m in zip(episode.tokens.completion_ids, episode.tokens.model_mask) if m]
    with_results = supervised_dataset(episodes, results_loss=True)
    for example, episode in zip(with_results, episodes):
        prompt = len(episode.tokens.prompt_ids)
        assert example["assistant_masks"] == [0] * prompt + [1] * len(episode.tokens.completion_ids)
        assert 0 in episode.tokens.model_mask


@pytest.mark.slow
def test_randomised_answers_and_tools_do_not_follow_the_news(renderer, compact, market, days):
    """Over many days the randomised expert reads news about half the time and answers all three actions."""
    episodes = demonstration_episodes(renderer, compact, market, days, count=60, seed=1, randomise=True, terse=True)
    reads = sum(any(x.call.name == "get_news_data" for x in e.exchanges) for e in episodes)
    answers = {e.final_action.value for e in episodes}
    assert 15 <= reads <= 45 and answers == {"BUY", "SELL", "HOLD"}
