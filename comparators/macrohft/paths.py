"""Bar paths as MacroHFT's environment: states, rewards and the DP teacher, for many paths at once.

The market does not answer the agent (a fill moves no price), so an episode over a chunk is fixed
by its bars: the state at bar t is (s_single_t, s_trend_t, s_context_t, a_{t−1}), action a_t sets
the position x_{a_t} held to the next close, the reward is r(t, a_{t−1}, a_t) of
`comparators.dp_teacher.step_rewards` (fee `fee`, scale `reward_scale`) and the next state is bar
t+1 with a_t as previous action; the episode ends at the chunk's last bar. `Paths` holds N chunks
of T bars side by side, so that N episodes step together (one network call per bar for all of
them, as vectorised environments do), with the teacher's Q(t, i, ·) (`dp_teacher`, fee
`teacher_fee`) for the KL targets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from comparators.dp_teacher import dp_teacher, step_rewards


@dataclass
class Paths:
    """N paths of T bars: single (N, T, F_s), trend (N, T, F_t), context (N, T, F_c) float32 tensors;
    rewards and teacher (N, T−1, P, P) float32 tensors (module docstring)."""

    single: torch.Tensor
    trend: torch.Tensor
    context: torch.Tensor
    rewards: torch.Tensor
    teacher: torch.Tensor

    @property
    def count(self) -> int:
        return self.single.shape[0]

    @property
    def steps(self) -> int:
        """Decisions per path: T − 1."""
        return self.rewards.shape[1]


def build_paths(states: dict[str, np.ndarray], close: np.ndarray, firsts: list[int], length: int,
                positions: np.ndarray, fee: float, teacher_fee: float, scale: float, gamma: float) -> Paths:
    """The paths of `length` bars starting at each position in `firsts` of the per-bar `states`
    (`features.StateScaling.states`) and closes."""
    if not firsts:
        raise ValueError("build_paths: no paths")
    pick = np.array([np.arange(first, first + length) for first in firsts])
    rewards, teacher = [], []
    for first in firsts:
        closes = close[first:first + length]
        rewards.append(step_rewards(closes, positions, fee, scale))
        teacher.append(dp_teacher(closes, positions, teacher_fee, gamma, scale).q)
    return Paths(*(torch.from_numpy(states[name][pick]) for name in ("single", "trend", "context")),
                 rewards=torch.from_numpy(np.stack(rewards).astype(np.float32)),
                 teacher=torch.from_numpy(np.stack(teacher).astype(np.float32)))
