"""The dynamic-programming teacher: optimal positions over a known price path, with fees.

MacroHFT (`tools/demonstration.py`, `make_q_table_reward`) and FineFT distil from a teacher that
sees the whole chunk: the Q-table of the best position path over its bars. Here over a grid of
P target positions x_0 .. x_{P-1} (leverage: position notional / equity; MacroHFT's two actions
are x = (0, 1), FineFT's nine x from −M to M), for closes p_0 .. p_{T−1}:

    decision t = 0 .. T−2 at the close of bar t, held from p_t to p_{t+1} (filled at p_t),
    r(t, i, j)   = s · ( x_j · (p_{t+1} / p_t − 1) − f · |x_j − x_i| )      [reward units]
    Q(t, i, j)   = r(t, i, j) + γ · V(t+1, j),   V(t, j) = max_k Q(t, j, k),   V(T−1, j) = 0

with i the position held before the decision (the previous action), j the one chosen, f the
fee per unit of traded notional (a fraction: 5 bps = 5e-4) and s a reward scale. Returns add
linearly (no compounding): the teacher ranks paths by Σ_t γ^t r(t), which is what a Q-learner
with that reward and γ estimates. One backward pass over t with a P×P step each: O(T·P²) time,
O(T·P²) memory for the table (MacroHFT's table is the same shape, `len(df) × A × A`).

`optimal_path` follows argmax_j Q(t, i, j) forward from a start position; `teacher_targets`
gives, per visited (t, i), the row Q(t, i, ·), the distribution that the learners' KL term
softmax(Q_DP) ‖ softmax(Q) compares with (MacroHFT's `demo_action`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import ConfigError


@dataclass(frozen=True)
class TeacherTable:
    """The teacher's table over one price path.

    q: (T−1, P, P), q[t, i, j] = Q(t, i, j) (module docstring); values: (T, P), values[t, j] =
    V(t, j), the best discounted reward from bar t holding x_j; positions: (P,) the grid."""

    q: np.ndarray
    values: np.ndarray
    positions: np.ndarray

    def optimal_path(self, start: int) -> np.ndarray:
        """Indices a_0 .. a_{T−2} of the optimal positions from position index `start` held before
        bar 0: a_t = argmax_j Q(t, a_{t−1}, j), a_{−1} = start (ties: the lowest index)."""
        if not 0 <= start < len(self.positions):
            raise ConfigError(f"dp_teacher: start index {start} outside the {len(self.positions)} positions")
        path = np.empty(len(self.q), dtype=np.int64)
        previous = start
        for t in range(len(self.q)):
            previous = int(np.argmax(self.q[t, previous]))
            path[t] = previous
        return path

    def teacher_targets(self, previous: np.ndarray) -> np.ndarray:
        """Q(t, previous[t], ·) for t = 0 .. len(previous)−1: (len(previous), P), the KL targets of
        the states visited with those previous position indices."""
        steps = np.arange(len(previous))
        return self.q[steps, np.asarray(previous, dtype=np.int64)]


def step_rewards(close: np.ndarray, positions: np.ndarray, fee: float, scale: float = 1.0) -> np.ndarray:
    """r(t, i, j) of the module docstring: (T−1, P, P) for closes (T,) and the position grid (P,)."""
    close = np.asarray(close, dtype=np.float64)
    grid = np.asarray(positions, dtype=np.float64)
    if close.ndim != 1 or len(close) < 2:
        raise ConfigError(f"dp_teacher: needs a 1-d path of at least 2 closes, got shape {close.shape}")
    if not np.all(np.isfinite(close)) or np.any(close <= 0):
        raise ConfigError("dp_teacher: closes must be finite and positive")
    if grid.ndim != 1 or len(grid) < 2:
        raise ConfigError(f"dp_teacher: needs at least 2 positions, got {grid.tolist()}")
    if fee < 0:
        raise ConfigError(f"dp_teacher: fee {fee} is negative")
    growth = close[1:] / close[:-1] - 1.0
    held = grid[None, None, :] * growth[:, None, None]
    traded = np.abs(grid[None, :] - grid[:, None])[None, :, :]
    return scale * (held - fee * traded)


def dp_teacher(close: np.ndarray, positions: np.ndarray, fee: float, gamma: float = 1.0,
               scale: float = 1.0) -> TeacherTable:
    """The teacher's table over `close` (module docstring), by one backward pass: O(T·P²)."""
    if not 0.0 <= gamma <= 1.0:
        raise ConfigError(f"dp_teacher: gamma {gamma} outside [0, 1]")
    rewards = step_rewards(close, positions, fee, scale)
    steps, size = rewards.shape[0], rewards.shape[1]
    q = np.empty_like(rewards)
    values = np.zeros((steps + 1, size))
    for t in range(steps - 1, -1, -1):
        q[t] = rewards[t] + gamma * values[t + 1][None, :]
        values[t] = q[t].max(axis=1)
    return TeacherTable(q=q, values=values, positions=np.asarray(positions, dtype=np.float64))
