"""Replay of transitions on `Paths`, stored as indices: (path n, bar t, previous action i, action j)
and, for the hyper-agent, the memory's target q_mem. The state, reward, next state and teacher
row follow from the indices (`paths` module), so a transition costs five numbers."""

from __future__ import annotations

import numpy as np


class IndexReplay:
    """A FIFO buffer of transition indices with uniform sampling."""

    def __init__(self, capacity: int):
        self.capacity = int(capacity)
        self.rows = np.zeros((capacity, 4), dtype=np.int64)
        self.memory = np.zeros(capacity, dtype=np.float32)
        self.size = 0
        self._next = 0

    def add(self, path: np.ndarray, step: int, previous: np.ndarray, action: np.ndarray,
            memory: np.ndarray | None = None) -> None:
        """Store one transition per path (arrays of equal length; `step` is the bar of all of them)."""
        count = len(path)
        where = (self._next + np.arange(count)) % self.capacity
        self.rows[where] = np.stack([path, np.full(count, step), previous, action], axis=1)
        self.memory[where] = 0.0 if memory is None else memory
        self._next = (self._next + count) % self.capacity
        self.size = min(self.size + count, self.capacity)

    def sample(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(rows (size, 4): path, bar, previous, action; memory targets (size,)), drawn uniformly."""
        pick = rng.integers(0, self.size, size)
        return self.rows[pick], self.memory[pick]
