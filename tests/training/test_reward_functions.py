"""The reward as TRL reward functions: one per component, weighted back into the paper's total."""

from __future__ import annotations

import math

import pytest

from single_agent.rewards import episode_rewards
from training.reward_functions import ComponentReward, reward_functions


def count_characters(text: str) -> int:
    return len(text)


def test_components_and_weights_give_the_total(expert_episodes, compact_reward):
    episodes, _ = expert_episodes
    regimes = ["bullish", "bearish", "sideways"] * (len(episodes) // 3)
    functions, weights = reward_functions(compact_reward, count_characters)
    assert [f.__name__ for f in functions] == ["result", "format", "tool"]
    assert weights == [compact_reward.alpha, 1.0, 1.0]
    columns = [f(prompts=[None] * len(episodes), completions=[None] * len(episodes), episode=episodes,
                 regime=regimes) for f in functions]
    for index, (episode, regime) in enumerate(zip(episodes, regimes)):
        expected = episode_rewards(episode, regime, compact_reward, count_characters)
        weighted = sum(w * column[index] for w, column in zip(weights, columns))
        assert [column[index] for column in columns] == [expected.result, expected.format, expected.tool]
        assert math.isclose(weighted, expected.total)


def test_an_unknown_component_is_refused(compact_reward):
    with pytest.raises(ValueError, match="unknown reward component"):
        ComponentReward("style", compact_reward, count_characters)
