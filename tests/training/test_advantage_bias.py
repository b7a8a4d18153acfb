"""Std-scaled GRPO advantages favour HOLD under the paper's R_result matrix before any answer
depends on the context; unscaled advantages do not (training/advantage_bias.py)."""

from __future__ import annotations

from single_agent.rewards import load_reward_config
from training.advantage_bias import mean_advantages


def test_group_scaling_drifts_toward_hold_and_unscaled_advantages_do_not():
    table = mean_advantages(load_reward_config("compact"), prompts=2, generations=8, draws=20000, seed=3)
    assert table.loc["group", "HOLD"] > 0.025 and (table.loc["group", ["BUY", "SELL"]] < -0.01).all()
    assert 0 < table.loc["batch", "HOLD"] < table.loc["group", "HOLD"]
    # unscaled advantages are in reward units (std about 4 here): zero within the simulation's noise
    assert table.loc["none"].abs().max() < 0.02
    # every scaling's advantages sum to zero over the episodes
    assert table.sum(axis=1).abs().max() < 1e-9
