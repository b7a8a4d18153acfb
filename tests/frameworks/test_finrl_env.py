"""The FinRL-style environment trades exactly like the simulator; its features are point-in-time."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bars import random_bars
from stable_baselines3.common.env_checker import check_env

from frameworks.rl.env import ACTIONS, TradingEnv, TrainingEpisode
from frameworks.rl.features import feature_anchor, market_features
from harness.execution import ExecutionConfig, simulate
from market.decision import Decision

WINDOW = 5


def episode(ticker: str, seed: int, n: int = 80) -> TrainingEpisode:
    bars = random_bars(n, seed=seed)
    return TrainingEpisode(ticker, bars, market_features(bars, WINDOW).to_numpy())


@pytest.mark.parametrize("config", [ExecutionConfig(), ExecutionConfig(fill="next_close", fee_bps=25, slippage_bps=5)])
def test_same_actions_give_the_simulators_fills_equity_and_rewards(config):
    env = TradingEnv([episode("AAA", 1), episode("BBB", 2)], config, reward_scale=100.0)
    env.reset(seed=0, options={"episode": 1})
    bars = env.episodes[1].bars
    choices = np.random.default_rng(3).integers(len(ACTIONS), size=len(bars))
    rewards, terminated, steps = [], False, 0
    while not terminated:
        observation, reward, terminated, truncated, info = env.step(choices[steps])
        assert not truncated and info["ticker"] == "BBB"
        rewards.append(reward)
        steps += 1
    assert steps == len(bars) - 1  # the last bar's decision would never be filled
    direct = simulate(bars, [Decision(action=ACTIONS[c]) for c in choices], config)
    pd.testing.assert_frame_equal(env.result().equity, direct.equity)
    pd.testing.assert_frame_equal(env.result().trades, direct.trades)
    assert len(direct.trades) > 5
    np.testing.assert_allclose(rewards, 100.0 * direct.equity["equity"].pct_change().dropna().to_numpy())
    close, position, equity = bars["close"].iloc[-1], direct.equity.iloc[-1]["position"], direct.equity.iloc[-1]["equity"]
    assert observation[-1] == pytest.approx(position * close / equity, rel=1e-6)


def test_passes_the_stable_baselines3_env_checker():
    check_env(TradingEnv([episode("AAA", 1)]), warn=False)


def test_reset_draws_episodes_from_its_seeded_generator():
    env = TradingEnv([episode(t, i) for i, t in enumerate(["AAA", "BBB", "CCC"])])
    draws = [[env.reset(seed=seed)[1]["ticker"]] + [env.reset()[1]["ticker"] for _ in range(9)] for seed in (0, 0, 1)]
    assert draws[0] == draws[1] != draws[2]
    assert set(draws[0]) == {"AAA", "BBB", "CCC"}


def test_a_feature_row_depends_only_on_bars_up_to_its_date():
    bars = random_bars(400, seed=4)
    anchor = feature_anchor(bars.index, bars.index[300])
    assert anchor == bars.index[50]
    full = market_features(bars.loc[anchor:], WINDOW)
    for date in bars.index[[60, 200, 320]]:
        later = bars.copy()
        later.loc[later.index > date, ["open", "high", "low", "close"]] *= 1.5
        later.loc[later.index > date, "volume"] *= 3
        truncated = market_features(later.loc[anchor:date], WINDOW)
        assert np.isfinite(truncated.to_numpy()).all()
        np.testing.assert_allclose(truncated.loc[date], full.loc[date], rtol=1e-5, atol=1e-7)
