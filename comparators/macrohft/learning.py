"""Pieces both MacroHFT learners share (the original's `update` methods and `LinearDecaySchedule`).

- ε-greedy schedule: ε_e = max(ε_end, ε_start − (ε_start − ε_end)·e / decay) after e epochs.
- Soft target update: θ' ← τ θ + (1 − τ) θ'.
- Teacher term: KL(softmax Q_DP ‖ softmax Q) per state, averaged over the batch, with the
  original's 1e-8 floors: Σ_a p_a (log p_a − log(q_a + 1e-8)), p = softmax(Q_DP) + 1e-8.
- ε-greedy actions drawn from a numpy generator seeded by the run's seed.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def epsilon(schedule: tuple[float, float, int], epoch: int) -> float:
    start, end, decay = schedule
    return max(end, start - (start - end) * epoch / max(decay, 1))


def soft_update(online: nn.Module, target: nn.Module, tau: float) -> None:
    with torch.no_grad():
        for param, target_param in zip(online.parameters(), target.parameters()):
            target_param.mul_(1.0 - tau).add_(param, alpha=tau)


def teacher_kl(q: torch.Tensor, teacher_q: torch.Tensor) -> torch.Tensor:
    """KL(softmax teacher_q ‖ softmax q), batch mean (module docstring)."""
    return F.kl_div((q.softmax(dim=-1) + 1e-8).log(), teacher_q.softmax(dim=-1) + 1e-8, reduction="batchmean")


def explore(greedy: np.ndarray, eps: float, actions: int, rng: np.random.Generator) -> np.ndarray:
    """Each greedy action replaced with probability ε by a uniform one."""
    random = rng.random(len(greedy)) < eps
    return np.where(random, rng.integers(0, actions, len(greedy)), greedy)
