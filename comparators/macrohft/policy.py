"""Greedy action paths: MacroHFT acts by argmax_a Q(s_t, a_{t−1}, a), its own previous action fed back.

The states of a path do not depend on the actions, so the Q-values of every bar and every
previous action come from one batched network call, `q_table` (T, P, A), and the greedy path is
a recursion over that table, `greedy_path`: a_t = argmax_a Q[t, a_{t−1}, a] from a given a_{−1}
(ties: the lowest index). `path_rewards` scores a path on `Paths` rewards.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

QFunction = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
"""(single (B, F_s), trend (B, F_t), context (B, F_c), previous (B,)) -> Q (B, A)."""

CHUNK_ROWS = 65_536


def q_table(q: QFunction, single: torch.Tensor, trend: torch.Tensor, context: torch.Tensor,
            actions: int) -> np.ndarray:
    """Q[t, i, a] (T, P, A) for the T bars' states and every previous action i (module docstring)."""
    rows = single.shape[0]
    out = np.empty((rows, actions, actions), dtype=np.float32)
    with torch.no_grad():
        for lo in range(0, rows, max(1, CHUNK_ROWS // actions)):
            hi = min(rows, lo + max(1, CHUNK_ROWS // actions))
            n = hi - lo
            previous = torch.arange(actions).repeat_interleave(n)
            values = q(single[lo:hi].repeat(actions, 1), trend[lo:hi].repeat(actions, 1),
                       context[lo:hi].repeat(actions, 1), previous)
            out[lo:hi] = values.reshape(actions, n, actions).permute(1, 0, 2).numpy()
    return out


def greedy_path(table: np.ndarray, start: int) -> np.ndarray:
    """a_0 .. a_{T−1} by a_t = argmax_a table[t, a_{t−1}, a], a_{−1} = start."""
    best = table.argmax(axis=2)
    path = np.empty(len(table), dtype=np.int64)
    previous = int(start)
    for t in range(len(table)):
        previous = int(best[t, previous])
        path[t] = previous
    return path


def path_rewards(rewards: np.ndarray, path: np.ndarray, start: int) -> float:
    """Σ_t r(t, a_{t−1}, a_t) over the path's decisions (rewards (T−1, P, P); path of ≥ T−1 actions)."""
    steps = rewards.shape[0]
    previous = np.concatenate([[start], path[:steps - 1]])
    return float(rewards[np.arange(steps), previous, path[:steps]].sum())
