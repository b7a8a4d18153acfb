"""The answer probe (training/answer_probe.py): its examples stop right before the expert's answer
and carry that answer as the label; its accuracy is the argmax over the actions; its reinforce
learner rewards sampled answers with the recipe's R_result and climbs towards the rewarded one."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from llm_backends.tiny import TinySpec, ensure_tiny
from market.decision import Action
from single_agent.rewards import load_reward_config
from training.answer_probe import (accuracy, answer_examples, first_answer_tokens, reinforce_loss, reward_table,
                                   scores)
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
    predicted, label_probs = [], []
    for (ids, label), episode in zip(examples, episodes):
        full = episode.tokens.prompt_ids + episode.tokens.completion_ids
        assert list(Action)[label] is episode.final_action
        assert ids.tolist() == full[:len(ids)] and tokenizer.decode(ids[-3:]).endswith("<answer>")
        assert full[len(ids)] == firsts[label]
        with torch.no_grad():
            logits = model(ids[None]).logits[0, -1, firsts]
        predicted.append(int(logits.argmax()))
        label_probs.append(float(torch.softmax(logits, dim=-1)[label]))
    hits = sum(p == label for p, (_, label) in zip(predicted, examples))
    assert accuracy(model, examples, firsts) == hits / len(examples)
    measured = scores(model, examples, firsts)
    assert measured["sampled"] == pytest.approx(sum(label_probs) / len(label_probs), abs=1e-6)
    assert sum(measured[action.value] for action in Action) == pytest.approx(1.0)
    with torch.no_grad():
        legal = [float(torch.softmax(model(ids[None]).logits[0, -1], dim=-1)[firsts].sum()) for ids, _ in examples]
    assert measured["legal"] == pytest.approx(sum(legal) / len(legal), abs=1e-6)

    regimes = {(episode.ticker, episode.date): regime
               for episode, regime in zip(episodes, ["bullish", "bearish", "sideways"] * 2)}
    relabelled = answer_examples(episodes, tokenizer, regimes)
    assert [list(Action)[label] for _, label in relabelled] == [Action.BUY, Action.SELL, Action.HOLD] * 2
    assert all(torch.equal(ids, same) for (ids, _), (same, _) in zip(relabelled, examples))


def test_the_reward_table_is_the_recipes_result_matrix():
    reward = load_reward_config("compact")
    table = reward_table(reward)
    for row, regime in enumerate(["bullish", "bearish", "sideways"]):
        assert table[row].tolist() == [reward.result_matrix[regime][action] for action in Action]
        assert int(table[row].argmax()) == row          # the regime's own action earns the most


def test_the_policy_gradient_climbs_to_the_rewarded_answer_without_a_label_and_stays_put_without_signal():
    rewards = reward_table(load_reward_config("compact"))
    labels = torch.tensor([0, 1, 2, 0])                   # bullish, bearish, sideways, bullish days
    logits = torch.zeros(4, 3, requires_grad=True)
    optimizer = torch.optim.SGD([logits], lr=1.0)
    generator = torch.Generator().manual_seed(0)
    for _ in range(60):
        optimizer.zero_grad()
        reinforce_loss(logits, labels, rewards, generations=8, generator=generator).backward()
        optimizer.step()
    chosen = torch.softmax(logits, dim=-1)[torch.arange(4), labels]
    assert (chosen > 0.6).all()                           # from 1/3 each

    flat = torch.zeros(2, 3, requires_grad=True)          # every answer earns the same: no advantage
    reinforce_loss(flat, torch.tensor([0, 1]), torch.ones(3, 3), generations=8, generator=generator).backward()
    assert flat.grad.abs().max() == 0


def test_with_no_draws_the_loss_is_the_expected_reward_whose_gradient_the_draws_estimate():
    rewards = reward_table(load_reward_config("compact"))
    labels = torch.tensor([0, 2, 1])
    logits = torch.tensor([[0.5, -0.2, 0.1], [0.0, 0.3, -0.4], [1.0, 0.2, 0.0]], requires_grad=True)
    exact = reinforce_loss(logits, labels, rewards, generations=0, generator=torch.Generator())
    expected = -(torch.softmax(logits, dim=-1) * rewards[labels]).sum(dim=-1).mean()
    assert float(exact) == pytest.approx(float(expected))
    exact_grad, = torch.autograd.grad(exact, logits)
    sampled = reinforce_loss(logits, labels, rewards, generations=20000, generator=torch.Generator().manual_seed(1),
                             scale=False)
    sampled_grad, = torch.autograd.grad(sampled, logits)
    assert torch.nn.functional.cosine_similarity(exact_grad.flatten(), sampled_grad.flatten(), dim=0) > 0.99
