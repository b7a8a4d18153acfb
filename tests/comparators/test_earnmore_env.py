"""EarnMore's training environment against a hand computation of one step."""

from __future__ import annotations

import numpy as np
import pytest

from comparators.earnmore.env import PoolEnv


def test_one_step_pays_the_fee_on_turnover_and_rewards_the_log_return():
    windows = np.zeros((3, 2, 3, 1), dtype=np.float32)
    opens = np.array([[10.0, 20.0], [10.0, 20.0], [11.0, 18.0]])
    env = PoolEnv(windows, opens, fee=0.001, temperature=1.0, reward_scale=100.0)
    env.reset(seed=0)
    action = np.array([0.0, np.log(2.0), 0.0], dtype=np.float32)      # softmax: 1/4 cash, 1/2, 1/4
    _, reward, terminated, truncated, info = env.step(action)
    growth = (1 - 0.001 * 0.75) * (0.25 + 0.5 * 1.1 + 0.25 * 0.9)
    assert info["turnover"] == pytest.approx(0.75)
    assert reward == pytest.approx(100 * np.log(growth))
    assert not terminated and truncated                               # bar 0 was the only decidable bar


def test_the_excess_reward_subtracts_the_unmasked_stocks_at_equal_weight():
    windows = np.zeros((3, 3, 3, 1), dtype=np.float32)
    opens = np.array([[10.0, 20.0, 5.0], [10.0, 20.0, 5.0], [11.0, 18.0, 6.0]])
    plain = PoolEnv(windows, opens, fee=0.001, temperature=1.0, reward_scale=100.0)
    excess = PoolEnv(windows, opens, fee=0.001, temperature=1.0, reward_scale=100.0, excess=True)
    action = np.array([0.0, np.log(2.0), 0.0, 0.0], dtype=np.float32)
    observation, _ = excess.reset(seed=0)
    plain.reset(seed=0)
    _, reward, _, _, info = excess.step(action)
    _, plain_reward, _, _, _ = plain.step(action)
    visible = observation["mask"] == 0
    baseline = np.log(np.array([1.1, 0.9, 1.2])[visible].mean())
    assert 0 < visible.sum() < 3                                       # the mask hid some, not all
    assert info["baseline"] == pytest.approx(baseline)
    assert reward == pytest.approx(plain_reward - 100 * baseline)
