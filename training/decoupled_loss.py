"""AReaL's decoupled PPO objective, expressed through TRL's clipped GRPO loss.

AReaL (Fu et al. 2025, arXiv 2505.24298, the decoupled PPO objective; its code's `ppo_actor_loss_fn` with
`behav_imp_weight_cap`) separates the behaviour policy π_behav, which sampled the tokens, from
the proximal policy π_prox, the trust-region anchor (the policy at the start of the update).
Per model token t, with u_t = π_θ/π_prox and w_t = π_prox/π_behav (w_t = 0 where w_t exceeds the
cap, when one is set; the token still counts in the normaliser):

    loss_t = −w_t · min(u_t·Â_t, clip(u_t, 1−ε_low, 1+ε_high)·Â_t)

w_t is a constant (no gradient) and non-negative, so w·min(a, b) = min(w·a, w·b): the decoupled
loss is TRL's own clipped loss −min(u·Â′, clip(u)·Â′) with per-token advantages Â′_t = w_t·Â_t
and `old_per_token_logps` = log π_prox. That is how it is applied (TRL 1.16's `_compute_loss`
accepts advantages of shape (B, T)), so the normalisation (`loss_type`), the KL term and every
metric stay TRL's. With π_behav = π_prox, w = 1 and it is plain clipped GRPO.

What is ours: w from the log-probabilities the rollout recorded (π_behav) and a no-grad forward
pass of the trainer's policy before the update (π_prox), as AReaL recomputes them.
"""

from __future__ import annotations

import torch


def behaviour_weights(proximal_logps: torch.Tensor, behaviour_logps: torch.Tensor, mask: torch.Tensor,
                      cap: float | None) -> torch.Tensor:
    """w = exp(log π_prox − log π_behav) per token, (B, T); 1 outside `mask` (tool, template and
    padding tokens, whose behaviour log-probability is not recorded); 0 where w > `cap`."""
    inside = mask.bool()
    log_w = torch.where(inside, proximal_logps - torch.nan_to_num(behaviour_logps, nan=0.0), 0.0)
    weights = torch.exp(log_w)
    if cap is not None:
        weights = torch.where(inside & (weights > cap), 0.0, weights)
    return weights


def decoupled_advantages(advantages: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Â′ = w·Â, (B, T), from per-sequence advantages (B,) or per-token ones (B, T)."""
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(1)
    return advantages * weights

