"""The hyper-agent's episodic memory (the original's `RL/util/memory.py`).

A FIFO buffer of `capacity` entries (key e = the hyper-agent's `encode`, action a, one-step return
q = r + γ·(1 − done)·max_a' Q_mix(s', a')). A query (key e, action a), once the buffer is full:

    κ_i = 1 / (‖e − e_i‖² + 10⁻³)                       (the original's kernel)
    K   = the k entries with the largest κ_i
    q_mem(e, a) = Σ_{i∈K, a_i = a} κ_i q_i / Σ_{i∈K, a_i = a} κ_i

NaN while the buffer is not yet full or when no neighbour took action a; the trainer then uses
the transition's own q, as the original does. Queries are batched (one row per parallel path).
"""

from __future__ import annotations

import numpy as np

KERNEL_EPS = 1e-3


class EpisodicMemory:
    """FIFO memory with kernel-weighted top-k lookup (module docstring)."""

    def __init__(self, capacity: int, k: int, key_dim: int):
        if capacity < k or k < 1:
            raise ValueError(f"episodic memory needs 1 <= k <= capacity, got k={k}, capacity={capacity}")
        self.capacity, self.k = int(capacity), int(k)
        self.keys = np.zeros((capacity, key_dim), dtype=np.float32)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.values = np.zeros(capacity, dtype=np.float64)
        self.size = 0
        self._next = 0

    def add(self, keys: np.ndarray, actions: np.ndarray, values: np.ndarray) -> None:
        """Append rows (B, key_dim), (B,), (B,), overwriting the oldest entries once full."""
        for key, action, value in zip(keys, actions, values):
            self.keys[self._next], self.actions[self._next], self.values[self._next] = key, action, value
            self._next = (self._next + 1) % self.capacity
            self.size = min(self.size + 1, self.capacity)

    def query(self, keys: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """q_mem (B,) for query keys (B, key_dim) and actions (B,) (module docstring)."""
        if self.size < self.capacity:
            return np.full(len(keys), np.nan)
        keys = np.asarray(keys, dtype=np.float32)
        stored = self.keys
        distance = np.maximum((keys ** 2).sum(axis=1)[:, None] - 2.0 * keys @ stored.T + (stored ** 2).sum(axis=1)[None, :],
                              0.0)
        kernel = 1.0 / (distance + KERNEL_EPS)
        top = np.argpartition(-kernel, self.k - 1, axis=1)[:, :self.k]
        weights = np.take_along_axis(kernel, top, axis=1) * (self.actions[top] == np.asarray(actions)[:, None])
        total = weights.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, (weights * self.values[top]).sum(axis=1) / total, np.nan)
