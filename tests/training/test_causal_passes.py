"""The exact fast paths of the trainers' log-prob passes (training.causal_passes) on the cpu_tiny
model: a right-padded batch without a mask gives the masked path's log-probabilities, a batch
with left pads is packed, one with an interior pad keeps the mask, and the shared prefix
computed once gives the full pass's log-probabilities and gradients."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from transformers import AutoModelForCausalLM
from trl.trainer.utils import add_fused_lm_head

from llm_backends.tiny import TinySpec, ensure_tiny
from training.causal_passes import fused_logps, leading_pads, right_padded, rotate
from training.config import FastPaths
from training.warm_start import WARM_START_DIR, UnmaskedCall
from training_runs import fast_config

SHARED = 40
"""Leading tokens every row of the test batches shares (the system prompt's part)."""


@pytest.fixture(scope="module")
def model(cache_root):
    """The cpu_tiny recipe's model shape with TRL's fused LM head (log-probs and entropies)."""
    spec = TinySpec(num_hidden_layers=4, hidden_size=128, intermediate_size=256, initializer_range=0.02)
    policy = AutoModelForCausalLM.from_pretrained(ensure_tiny(spec))
    assert policy.config._attn_implementation == "sdpa"
    add_fused_lm_head(policy, outputs=("log_probs", "entropy"))
    return policy


class Spy:
    """`model`, recording each call's batch size, length and whether it got an attention mask."""

    def __init__(self, model):
        self.model = model
        self.calls: list[tuple[int, int, bool]] = []

    def __call__(self, **kwargs):
        ids = kwargs["input_ids"]
        self.calls.append((ids.size(0), ids.size(1), kwargs.get("attention_mask") is not None))
        return self.model(**kwargs)


def grpo_batch(vocab: int, prompt_lengths: list[int], completion_lengths: list[int], seed: int = 0):
    """A GRPO-shaped batch: prompts (sharing their first SHARED tokens) left-padded, completions
    right-padded; (ids, mask, completion width)."""
    generator = torch.Generator().manual_seed(seed)
    width_p, width_c = max(prompt_lengths), max(completion_lengths)
    shared = torch.randint(3, vocab, (SHARED,), generator=generator)
    ids = torch.zeros(len(prompt_lengths), width_p + width_c, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, (p, c) in enumerate(zip(prompt_lengths, completion_lengths)):
        ids[row, width_p - p:width_p] = torch.cat([shared, torch.randint(3, vocab, (p - SHARED,), generator=generator)])
        ids[row, width_p:width_p + c] = torch.randint(3, vocab, (c,), generator=generator)
        mask[row, width_p - p:width_p + c] = 1
    return ids, mask, width_c


def passes(model, ids, mask, width, **paths):
    with torch.no_grad():
        return fused_logps(model, ids, mask, width, **paths)


def test_a_right_padded_batch_without_a_mask_gives_the_masked_log_probs(model):
    ids, mask, width = grpo_batch(model.config.vocab_size, [60, 60, 60, 60], [30, 12, 25, 7])
    assert right_padded(mask)
    masked, masked_entropy = passes(model, ids, mask, width, unmasked=False, shared_prefix=False)
    spy = Spy(model)
    fast, fast_entropy = passes(spy, ids, mask, width, unmasked=True, shared_prefix=False)
    assert spy.calls == [(4, ids.size(1), False)]
    real = mask[:, -width:].bool()
    assert (fast - masked)[real].abs().max() <= 1e-6
    assert (fast_entropy - masked_entropy)[real].abs().max() <= 1e-6
    assert torch.all(fast[~real] == 0) and torch.all(masked[~real] == 0)


def test_a_left_padded_batch_is_packed_and_keeps_its_log_probs(model):
    ids, mask, width = grpo_batch(model.config.vocab_size, [60, 55, 58, 60], [30, 12, 25, 7])
    assert not right_padded(mask)
    masked, _ = passes(model, ids, mask, width, unmasked=False, shared_prefix=False)
    spy = Spy(model)
    fast, _ = passes(spy, ids, mask, width, unmasked=True, shared_prefix=False)
    assert spy.calls == [(4, ids.size(1), False)]
    real = mask[:, -width:].bool()
    assert (fast - masked)[real].abs().max() <= 1e-5     # positions shifted by a constant: RoPE, rounding only
    assert torch.all(fast[~real] == 0)


def test_a_batch_with_an_interior_pad_takes_the_masked_path(model):
    ids, mask, width = grpo_batch(model.config.vocab_size, [60, 60, 60, 60], [30, 12, 25, 7])
    mask[1, -width + 3] = 0                               # a hole inside row 1's completion
    assert leading_pads(mask) is None and not right_padded(mask)
    masked, _ = passes(model, ids, mask, width, unmasked=False, shared_prefix=False)
    spy = Spy(model)
    fast, _ = passes(spy, ids, mask, width, unmasked=True, shared_prefix=True)
    assert spy.calls == [(4, ids.size(1), True)]
    assert torch.equal(fast, masked)


def test_the_shared_prefix_computed_once_gives_the_full_log_probs(model):
    ids, mask, width = grpo_batch(model.config.vocab_size, [60, 55, 58, 60], [30, 12, 25, 7])
    full, full_entropy = passes(model, ids, mask, width, unmasked=False, shared_prefix=False)
    spy = Spy(model)
    fast, fast_entropy = passes(spy, ids, mask, width, unmasked=True, shared_prefix=True)
    assert spy.calls == [(1, SHARED, False), (4, ids.size(1) - SHARED, False)]
    real = mask[:, -width:].bool()
    assert (fast - full)[real].abs().max() <= 1e-5
    assert (fast_entropy - full_entropy)[real].abs().max() <= 1e-5
    assert torch.all(fast[~real] == 0)


def test_the_shared_prefix_gives_the_full_pass_gradients(model):
    ids, mask, width = grpo_batch(model.config.vocab_size, [60, 55, 58, 60], [30, 12, 25, 7], seed=1)
    weights = torch.linspace(-1.0, 1.0, width)        # a loss with advantages of both signs

    def gradients(**paths):
        model.zero_grad()
        logps, _ = fused_logps(model, ids, mask, width, **paths)
        (logps * weights).sum().backward()
        return {name: p.grad.clone() for name, p in model.named_parameters()}

    full = gradients(unmasked=False, shared_prefix=False)
    fast = gradients(unmasked=True, shared_prefix=True)
    model.zero_grad()
    assert full.keys() == fast.keys()
    for name in full:
        scale = float(full[name].abs().max())
        assert scale > 0, name                          # the prefix's parameters get gradient on both paths
        assert float((fast[name] - full[name]).abs().max()) <= 1e-5 * max(1.0, scale), name


def test_under_activation_checkpointing_the_shared_prefix_falls_back_to_the_full_pass(cache_root):
    """transformers drops the cache in checkpointed layers while gradients are on: the prefix's
    keys and values are then not kept, and the pass runs whole (no silent wrong positions)."""
    spec = TinySpec(num_hidden_layers=4, hidden_size=128, intermediate_size=256, initializer_range=0.02)
    policy = AutoModelForCausalLM.from_pretrained(ensure_tiny(spec))
    add_fused_lm_head(policy, outputs=("log_probs", "entropy"))
    policy.activation_checkpointing_enable()
    policy.train()
    ids, mask, width = grpo_batch(policy.config.vocab_size, [60, 55, 58, 60], [30, 12, 25, 7])
    full, _ = fused_logps(policy, ids, mask, width, unmasked=False, shared_prefix=False)
    spy = Spy(policy)
    fast, _ = fused_logps(spy, ids, mask, width, unmasked=True, shared_prefix=True)
    assert spy.calls == [(1, SHARED, False), (4, ids.size(1), False)]
    real = mask[:, -width:].bool()
    assert (fast - full)[real].abs().max() <= 1e-5


def test_rows_rotate_back_and_forth():
    values = torch.arange(12).reshape(2, 6)
    shift = torch.tensor([2, 0])
    assert rotate(values, shift).tolist() == [[2, 3, 4, 5, 0, 1], [6, 7, 8, 9, 10, 11]]
    assert torch.equal(rotate(rotate(values, shift), -shift), values)
    assert leading_pads(torch.tensor([[0, 0, 1, 1, 0], [1, 1, 1, 0, 0]])).tolist() == [2, 0]


def test_the_warm_start_drops_only_a_right_padded_mask(model):
    ids, mask, _ = grpo_batch(model.config.vocab_size, [60, 60, 60, 60], [30, 12, 25, 7])
    labels = ids.masked_fill(mask == 0, -100)
    spy = Spy(model)
    call = UnmaskedCall(spy)
    with torch.no_grad():
        fast = call(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
        masked = model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
        left = mask.flip(1)
        call(input_ids=ids.flip(1), attention_mask=left, labels=labels.flip(1), fused_lm_head=True)
    assert [has_mask for *_, has_mask in spy.calls] == [False, True]
    assert abs(float(fast.loss) - float(masked.loss)) <= 1e-6
    assert (fast.log_probs - masked.log_probs).abs().max() <= 1e-6


@pytest.mark.slow
def test_the_warm_start_without_masks_has_the_masked_loss_and_gradient(cache_root, tmp_path, monkeypatch):
    """One SFT step of the warm start (8 randomised-expert episodes), with and without the fast
    path: its loss and gradient norm, both computed before any update, agree to rounding, and the
    fast run's batches did drop their mask."""
    import train_single_agent
    from training import warm_start

    checked: list[bool] = []

    def recorded(mask):
        checked.append(right_padded(mask))
        return checked[-1]

    monkeypatch.setattr(warm_start, "right_padded", recorded)

    warm = ["train.warm_start.enabled=true", "train.warm_start.episodes=8", "train.warm_start.epochs=1",
            "train.warm_start.batch_size=8", "train.warm_start.micro_batch_size=8"]
    logs = {}
    for name, unmasked in [("masked", "false"), ("unmasked", "true")]:
        paths = [f"train.fast_paths.unmasked_causal={unmasked}", f"train.fast_paths.shared_prefix={unmasked}"]
        output = train_single_agent.train(fast_config(tmp_path / name, 1, *warm, *paths))
        logs[name] = pd.read_csv(output / WARM_START_DIR / "steps.csv").iloc[0]
    assert checked and all(checked)                     # only the fast run checks, and its batches were right-padded
    for column in ["loss", "grad_norm"]:
        masked, unmasked = float(logs["masked"][column]), float(logs["unmasked"][column])
        assert masked > 0
        assert abs(unmasked - masked) <= 1e-5 * masked, column


@pytest.mark.slow
def test_a_grpo_step_with_the_fast_paths_has_the_masked_step_gradient(cache_root, tmp_path):
    """The first GRPO step (same seed, so the same episodes from the same weights) with TRL's masked
    passes and with both fast paths: the same gradient norm and entropy, to rounding (its loss
    carries no information here: the ratio π/π_old is exactly 1 on the first step)."""
    import train_single_agent

    logs = {}
    for name, on in [("masked", "false"), ("fast", "true")]:
        paths = [f"train.fast_paths.unmasked_causal={on}", f"train.fast_paths.shared_prefix={on}"]
        output = train_single_agent.train(fast_config(tmp_path / name, 1, *paths))
        logs[name] = pd.read_csv(output / "steps.csv").iloc[0]
    assert logs["masked"]["completions/mean_length"] == logs["fast"]["completions/mean_length"]
    for column in ["grad_norm", "entropy"]:
        masked, fast = float(logs["masked"][column]), float(logs["fast"][column])
        assert masked > 0
        assert abs(fast - masked) <= 1e-5 * masked, column


def test_the_shared_prefix_needs_the_unmasked_path():
    with pytest.raises(ValueError, match="needs fast_paths.unmasked_causal"):
        FastPaths(unmasked_causal=False, shared_prefix=True)
