"""The decoupled objective (training.decoupled_loss): the behaviour weights w = π_prox/π_behav and
the identity that applies AReaL's loss −w·min(u·Â, clip(u)·Â) through TRL's clipped loss with
advantages w·Â; plain clipped GRPO when behaviour = proximal."""

from __future__ import annotations

import math

import torch

from training.decoupled_loss import behaviour_weights, decoupled_advantages

EPS = 0.2


def clipped_token_loss(logps: torch.Tensor, anchor_logps: torch.Tensor, advantages: torch.Tensor,
                       epsilon_low: float, epsilon_high: float) -> torch.Tensor:
    """−min(u·Â, clip(u, 1−ε_low, 1+ε_high)·Â) per token, u = exp(logps − anchor_logps): the
    clipped surrogate in TRL's form, for checking the identity above."""
    ratio = torch.exp(logps - anchor_logps)
    return -torch.min(ratio * advantages, torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high) * advantages)


def batch(seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    proximal = -torch.rand(3, 6, generator=generator) * 4
    behaviour = proximal + torch.randn(3, 6, generator=generator) * 0.5
    logps = (proximal + torch.randn(3, 6, generator=generator) * 0.3).requires_grad_()
    mask = torch.ones(3, 6)
    mask[:, 4:] = 0                          # tool tokens: no behaviour log-probability recorded
    behaviour[:, 4:] = float("nan")
    return logps, proximal, behaviour, mask, torch.tensor([1.5, -0.7, 0.3])


def test_weights_are_the_ratio_of_proximal_to_behaviour_on_model_tokens():
    _, proximal, behaviour, mask, _ = batch()
    weights = behaviour_weights(proximal, behaviour, mask, cap=None)
    assert torch.allclose(weights[:, :4], torch.exp(proximal - behaviour)[:, :4])
    assert torch.all(weights[:, 4:] == 1)
    assert torch.all(behaviour_weights(proximal, proximal, mask, cap=None) == 1)


def test_the_cap_zeroes_the_weights_above_it():
    _, proximal, behaviour, mask, _ = batch()
    raw = behaviour_weights(proximal, behaviour, mask, cap=None)
    capped = behaviour_weights(proximal, behaviour, mask, cap=1.2)
    above = (raw > 1.2) & mask.bool()
    assert above.any() and torch.all(capped[above] == 0)
    assert torch.equal(capped[~above], raw[~above])


def test_trls_loss_with_weighted_advantages_is_areals_decoupled_loss():
    logps, proximal, behaviour, mask, advantages = batch()
    weights = behaviour_weights(proximal, behaviour, mask, cap=None)
    through_trl = clipped_token_loss(logps, proximal, decoupled_advantages(advantages, weights), EPS, EPS)
    ratio = torch.exp(logps - proximal)
    areal = -weights * torch.min(ratio * advantages[:, None], torch.clamp(ratio, 1 - EPS, 1 + EPS) * advantages[:, None])
    assert torch.allclose(through_trl, areal, atol=1e-6)
    grad_trl, = torch.autograd.grad((through_trl * mask).sum(), logps)
    grad_areal, = torch.autograd.grad((areal * mask).sum(), logps)
    assert torch.allclose(grad_trl, grad_areal, atol=1e-6)
    assert not torch.allclose(through_trl, clipped_token_loss(logps, proximal, advantages[:, None], EPS, EPS))


def test_with_behaviour_equal_to_proximal_it_is_plain_clipped_grpo():
    logps, proximal, _, mask, advantages = batch(1)
    weights = behaviour_weights(proximal, proximal, mask, cap=5.0)
    decoupled = clipped_token_loss(logps, proximal, decoupled_advantages(advantages, weights), EPS, EPS)
    plain = clipped_token_loss(logps, proximal, advantages[:, None], EPS, EPS)
    assert torch.equal(decoupled, plain)
    # at θ = θ_prox the ratio is 1 and the loss is −Â per token
    at_prox = clipped_token_loss(proximal, proximal, advantages[:, None], EPS, EPS)
    assert torch.allclose(at_prox, -advantages[:, None].expand(3, 6))
    assert math.isclose(float(weights[mask.bool()].mean()), 1.0)
