"""Top-k trading scores and AlphaMix's greedy selective ensemble.

The trading score of up-probabilities p [T, N] on days with realised returns R [T, N] is the
original's validation profit: the mean over days of the equal-weight return of the k stocks with
the highest p (no fees), `top_k_profit`. The greedy selective ensemble starts from the expert
with the best score alone and walks the others in order of their own score, keeping an expert
when the mean of the kept experts' logits scores higher with it than without (forward selection
on predictions; the original's commented "model soup" variant averaged weights instead).
"""

from __future__ import annotations

import numpy as np
import torch


def top_k_profit(up: np.ndarray, returns: np.ndarray, k: int) -> float:
    """mean_t of mean(R[t, top-k of p[t]]) (module docstring); p and R are [T, N]."""
    k = min(k, up.shape[1])
    chosen = np.argsort(-up, axis=1, kind="stable")[:, :k]
    return float(np.take_along_axis(returns, chosen, axis=1).mean())


def up_probability(logits: torch.Tensor) -> torch.Tensor:
    """softmax(logits)[..., 1]: the probability of "up"."""
    return torch.softmax(logits, dim=-1)[..., 1]


def greedy_selection(expert_logits: torch.Tensor, returns: np.ndarray, k: int) -> list[int]:
    """Indices of the kept experts (module docstring); `expert_logits` [E, T, N, 2], `returns` [T, N]."""
    def score(members: list[int]) -> float:
        return top_k_profit(up_probability(expert_logits[members].mean(dim=0)).numpy(), returns, k)

    order = sorted(range(expert_logits.shape[0]), key=lambda e: -score([e]))
    kept, best = [order[0]], score([order[0]])
    for expert in order[1:]:
        trial = score([*kept, expert])
        if trial > best:
            kept, best = [*kept, expert], trial
    return kept
