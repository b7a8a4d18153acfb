"""The grammar-constrained policy's log-probabilities (training/grammar_logprobs.py): the engine
stores the grammar's support at every chosen token, the normaliser is the mass of the allowed
tokens, the trainer's pass equals a masked log_softmax computed densely, and a GRPO run scores
its generation and loss passes with it."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest
import torch

import train_single_agent
from llm_backends.grammar import grammar_support
from llm_backends.tiny import TinySpec, ensure_tiny
from llm_backends.types import GrammarSupport, SamplingParams
from single_agent.grammar import max_turn_tokens
from training import agent_trainer
from training.config import ModelConfig
from training.grammar_logprobs import constrained_entropy, grammar_logps, log_normalisers, support_tensors
from training.policy_model import load_policy, rollout_engine
from training.rollouts import EpisodeRollouts
from training_runs import fast_config


def dense_mask(support: GrammarSupport | None, vocabulary: int) -> torch.Tensor:
    if support is None:
        return torch.ones(vocabulary, dtype=torch.bool)
    listed = torch.zeros(vocabulary, dtype=torch.bool)
    listed[list(support.ids)] = True
    return listed if support.allowed else ~listed


def test_a_support_keeps_the_smaller_side_of_the_mask():
    few = torch.zeros(10, dtype=torch.bool)
    few[[2, 7]] = True
    assert grammar_support(few) == GrammarSupport(allowed=True, ids=(2, 7))
    assert grammar_support(~few) == GrammarSupport(allowed=False, ids=(2, 7))
    assert torch.equal(dense_mask(grammar_support(~few), 10), ~few)


def test_the_normaliser_is_the_log_mass_of_the_allowed_tokens_and_the_entropy_the_policys():
    torch.manual_seed(0)
    log_probs = torch.log_softmax(torch.randn(2, 3, 10), dim=-1)
    supports = [[GrammarSupport(True, (1, 4)), None, GrammarSupport(False, (0, 2, 9))],
                [GrammarSupport(True, (3, 5, 6, 8)), GrammarSupport(False, (7,))]]
    kind, ids = support_tensors(supports, length=3)
    got = log_normalisers(log_probs, kind, ids)
    for r, row in enumerate(supports):
        for t in range(3):
            support = row[t] if t < len(row) else None
            want = 0.0 if support is None else float(torch.logsumexp(log_probs[r, t][dense_mask(support, 10)], dim=0))
            assert float(got[r, t]) == pytest.approx(want, abs=1e-6)
    entropy = constrained_entropy(log_probs, kind, ids, got)
    for r, row in enumerate(supports):
        for t in range(3):
            support = row[t] if t < len(row) else None
            policy = torch.log_softmax(log_probs[r, t].masked_fill(~dense_mask(support, 10), float("-inf")), dim=-1)
            want = -(policy.exp() * policy.nan_to_num(neginf=0.0)).sum()
            assert float(entropy[r, t]) == pytest.approx(float(want), abs=1e-5)
    with pytest.raises(ValueError, match="completion token 2 of 2"):
        support_tensors(supports, length=2)


@pytest.fixture(scope="module")
def policy(cache_root):
    """The tiny model and the rollout engine over it."""
    folder = ensure_tiny(TinySpec())
    model, tokenizer = load_policy(folder, ModelConfig(source="path", path=str(folder), device="cpu", dtype="float32"))
    return model, rollout_engine(model, tokenizer, "tiny")


@pytest.mark.slow
def test_the_pass_scores_the_policy_that_sampled(policy, compact, market):
    model, engine = policy
    params = SamplingParams(temperature=1.0, max_new_tokens=max_turn_tokens(compact))
    rows = [{"ticker": "ALFA", "date": f"{day:%Y-%m-%d}", "regime": "bullish"} for day in market.frame("ALFA").index[40:43]]
    trainer = SimpleNamespace(batch_rows=rows, state=SimpleNamespace(global_step=0), log_rollout=lambda stats: None)
    episodes = EpisodeRollouts(engine, compact, market, params, constrained=True, seed=3,
                               informative_tool="get_news_data")(rows, trainer)["episode"]
    vocabulary = model.config.vocab_size
    assert len(trainer.batch_grammar) == len(rows)
    for supports in trainer.batch_grammar:                    # both sides are stored, whichever is smaller
        assert any(s is not None and s.allowed for s in supports) and any(s is not None and not s.allowed for s in supports)
    for episode, supports in zip(episodes, trainer.batch_grammar):
        record = episode.tokens
        chosen = [int(m and not f) for m, f in zip(record.model_mask, record.forced)]
        assert [int(s is not None) for s in supports] == chosen   # a support exactly where the model chose
        for token, support in zip(record.completion_ids, supports):
            assert support is None or bool(dense_mask(support, vocabulary)[token])   # what was sampled was allowed
        ids = torch.tensor([record.prompt_ids + record.completion_ids])
        length = len(record.completion_ids)
        kind, stored = support_tensors([supports], length)
        with torch.no_grad():
            got, _ = grammar_logps(model, ids, torch.ones_like(ids), length, kind, stored, temperature=1.0)
            logits = model(ids).logits[0, -length - 1:-1].float()
        masks = torch.stack([dense_mask(s, vocabulary) for s in supports])
        want = torch.log_softmax(logits.masked_fill(~masks, float("-inf")), dim=-1)
        want = want.gather(-1, torch.tensor(record.completion_ids)[:, None]).squeeze(-1)
        assert torch.allclose(got[0], want, atol=1e-5)
        sampled = torch.tensor([lp if c else 0.0 for lp, c in zip(record.logprobs, chosen)])
        assert bool((got[0][torch.tensor(chosen).bool()] >= sampled[torch.tensor(chosen).bool()] - 1e-5).all())


@pytest.mark.slow
def test_a_grpo_run_scores_its_generation_and_loss_passes_with_the_grammar(cache_root, tmp_path, monkeypatch):
    calls = []

    def recording(model, input_ids, *args, **kwargs):
        calls.append((input_ids.size(0), torch.is_grad_enabled()))
        return grammar_logps(model, input_ids, *args, **kwargs)

    monkeypatch.setattr(agent_trainer, "grammar_logps", recording)
    train_single_agent.train(fast_config(tmp_path / "run", 2, "train.policy_logprobs=grammar",
                                         "train.optimisation.entropy_coef=0.05"))
    assert any(not grad for _, grad in calls) and any(grad for _, grad in calls)   # the reference pass and the loss
    steps = pd.read_csv(tmp_path / "run" / "steps.csv")
    assert len(steps) == 2 and steps["loss"].notna().all() and (steps["entropy"] > 0).all()
