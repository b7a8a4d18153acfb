"""The dynamic-programming teacher against brute force over every position path."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from comparators.dp_teacher import dp_teacher, step_rewards
from core.errors import ConfigError


def _path_reward(rewards: np.ndarray, start: int, path: tuple[int, ...], gamma: float) -> float:
    total, previous = 0.0, start
    for t, j in enumerate(path):
        total += gamma ** t * rewards[t, previous, j]
        previous = j
    return total


@pytest.mark.parametrize("positions,gamma,fee", [((0.0, 1.0), 1.0, 1e-3), ((-1.0, 0.0, 1.0), 0.9, 5e-4),
                                                 ((-2.0, -0.5, 0.0, 1.5), 0.99, 2e-3)])
def test_teacher_matches_brute_force(positions, gamma, fee):
    rng = np.random.default_rng(7)
    close = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.004, 8)))
    table = dp_teacher(close, np.array(positions), fee=fee, gamma=gamma, scale=100.0)
    rewards = step_rewards(close, np.array(positions), fee, 100.0)
    for start in range(len(positions)):
        paths = list(itertools.product(range(len(positions)), repeat=len(close) - 1))
        totals = [_path_reward(rewards, start, p, gamma) for p in paths]
        best = int(np.argmax(totals))
        assert table.values[0, start] == pytest.approx(totals[best], rel=1e-12, abs=1e-12)
        assert _path_reward(rewards, start, tuple(table.optimal_path(start)), gamma) == pytest.approx(totals[best])
        # Q(0, start, j) is the best total among the paths whose first position is j
        for j in range(len(positions)):
            first_j = max(t for p, t in zip(paths, totals) if p[0] == j)
            assert table.q[0, start, j] == pytest.approx(first_j)


def test_fees_keep_the_teacher_out_of_small_moves():
    close = np.array([100.0, 100.01, 100.0, 100.01, 100.0])
    table = dp_teacher(close, np.array([0.0, 1.0]), fee=1e-3)
    assert table.optimal_path(0).tolist() == [0, 0, 0, 0]
    free = dp_teacher(close, np.array([0.0, 1.0]), fee=0.0)
    assert free.optimal_path(0).tolist() == [1, 0, 1, 0]


def test_teacher_targets_are_the_rows_of_the_visited_states():
    close = np.array([100.0, 101.0, 99.0, 102.0])
    table = dp_teacher(close, np.array([0.0, 1.0]), fee=1e-4)
    previous = np.array([0, 1, 0])
    targets = table.teacher_targets(previous)
    assert targets.shape == (3, 2)
    assert np.array_equal(targets[1], table.q[1, 1])


def test_bad_input_is_one_clear_error():
    with pytest.raises(ConfigError, match="at least 2 closes"):
        dp_teacher(np.array([1.0]), np.array([0.0, 1.0]), fee=0.0)
    with pytest.raises(ConfigError, match="positive"):
        dp_teacher(np.array([1.0, -1.0]), np.array([0.0, 1.0]), fee=0.0)
    with pytest.raises(ConfigError, match="start index"):
        dp_teacher(np.array([1.0, 2.0]), np.array([0.0, 1.0]), fee=0.0).optimal_path(5)
