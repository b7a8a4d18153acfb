"""The supervised answer probe (training/answer_probe.py): its examples stop right before the
expert's answer and carry that answer as the label; its accuracy is the argmax over the actions."""

from __future__ import annotations

import pandas as pd
import torch

from llm_backends.tiny import TinySpec, ensure_tiny
from market.decision import Action
from training.answer_probe import accuracy, answer_examples, first_answer_tokens
from training.config import ModelConfig
from training.demonstrations import demonstration_episodes
from training.policy_model import load_policy, rollout_engine


def test_examples_end_at_the_answer_and_accuracy_counts_argmax_hits(cache_root, compact, market):
    folder = ensure_tiny(TinySpec())
    model, tokenizer = load_policy(folder, ModelConfig(source="path", path=str(folder), device="cpu", dtype="float32"))
    days = pd.DataFrame([("ALFA", d) for d in market.frame("ALFA").index[40:46]], columns=["ticker", "date"])
    episodes = demonstration_episodes(rollout_engine(model, tokenizer, "tiny"), compact, market, days, count=6, seed=0,
                                      randomise=False, terse=True)
    examples = answer_examples(episodes, tokenizer)
    firsts = first_answer_tokens(tokenizer)
    predicted = []
    for (ids, label), episode in zip(examples, episodes):
        full = episode.tokens.prompt_ids + episode.tokens.completion_ids
        assert list(Action)[label] is episode.final_action
        assert ids.tolist() == full[:len(ids)] and tokenizer.decode(ids[-3:]).endswith("<answer>")
        assert full[len(ids)] == firsts[label]
        with torch.no_grad():
            predicted.append(int(model(ids[None]).logits[0, -1, firsts].argmax()))
    hits = sum(p == label for p, (_, label) in zip(predicted, examples))
    assert accuracy(model, examples, firsts) == hits / len(examples)

    regimes = {(episode.ticker, episode.date): regime
               for episode, regime in zip(episodes, ["bullish", "bearish", "sideways"] * 2)}
    relabelled = answer_examples(episodes, tokenizer, regimes)
    assert [list(Action)[label] for _, label in relabelled] == [Action.BUY, Action.SELL, Action.HOLD] * 2
    assert all(torch.equal(ids, same) for (ids, _), (same, _) in zip(relabelled, examples))
