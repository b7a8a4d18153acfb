"""The as-needed router of AlphaMix: add expert groups until the router judges the mixture right.

Experts (groups) are ordered g = 1..G. For a stock with last-day features u (the window's last
row) and group logits ℓ_g ∈ R², the running mean after i groups is m_i = (1/i) Σ_{g≤i} ℓ_g. The
router is an MLP (Linear → ReLU → Linear) on [u, c·m_i] (c = `logit_scale`) whose output logit z_i
estimates P(the argmax of m_i is wrong) = σ(z_i). Inference (`as_needed`): the mixture of a
stock is m_i for the first i with σ(z_i) < `threshold` (judged right), or m_G when none is.

Training (`router_loss`): the experts are frozen; for every i the target is y_i = 1 when
argmax m_i differs from the label, and the loss is AlphaMix's weighted BCE with logits,

    L(z, y) = (1 − y)·z + w·softplus(−z),

which for w = 1 is the ordinary BCE and for w > 1 (the original's 1.5) weighs "wrong" more: the
router asks for another group more readily. The losses of i = 1..G are averaged.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class Router(nn.Module):
    """z = MLP([u, c·m]): the logit that the running mixture m is wrong for a stock with features u."""

    def __init__(self, feature_size: int, hidden: int = 32, logit_scale: float = 20.0):
        super().__init__()
        self.logit_scale = float(logit_scale)
        self.net = nn.Sequential(nn.Linear(feature_size + 2, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, last_features: torch.Tensor, mixture_logits: torch.Tensor) -> torch.Tensor:
        """[..., F] and [..., 2] → [...] logits."""
        return self.net(torch.cat([last_features, self.logit_scale * mixture_logits], dim=-1)).squeeze(-1)


def running_means(group_logits: torch.Tensor) -> torch.Tensor:
    """[G, B, 2] → [G, B, 2]: row i − 1 is the mean of groups 1..i."""
    counts = torch.arange(1, group_logits.shape[0] + 1, dtype=group_logits.dtype).reshape(-1, 1, 1)
    return group_logits.cumsum(dim=0) / counts


def as_needed(router: nn.Module, last_features: torch.Tensor, group_logits: torch.Tensor,
              threshold: float = 0.5) -> tuple[torch.Tensor, torch.Tensor]:
    """(mixture logits [B, 2], groups used [B]) for stocks with `last_features` [B, F] and
    `group_logits` [G, B, 2] (module docstring): the first i whose σ(z_i) < threshold, else G."""
    means = running_means(group_logits)
    features = last_features.expand(group_logits.shape[0], *last_features.shape)
    wrong = torch.sigmoid(router(features, means))
    right = wrong < threshold
    right[-1] = True
    used = right.float().argmax(dim=0) + 1
    return means[used - 1, torch.arange(group_logits.shape[1])], used


def weighted_bce(logits: torch.Tensor, targets: torch.Tensor, weight: float) -> torch.Tensor:
    """mean of (1 − y)·z + w·softplus(−z) (module docstring)."""
    return ((1 - targets) * logits + weight * F.softplus(-logits)).mean()


def router_loss(router: nn.Module, last_features: torch.Tensor, group_logits: torch.Tensor,
                labels: torch.Tensor, weight: float = 1.5) -> torch.Tensor:
    """The router's training loss over every prefix of the groups (module docstring)."""
    means = running_means(group_logits.detach())
    wrong = (means.argmax(dim=-1) != labels).float()
    features = last_features.expand(group_logits.shape[0], *last_features.shape)
    return weighted_bce(router(features, means), wrong, weight)
