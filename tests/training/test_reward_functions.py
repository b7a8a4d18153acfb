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


def test_the_shuffled_control_permutes_result_values_within_a_call_and_leaves_the_rest(expert_episodes, compact_reward):
    episodes, _ = expert_episodes
    regimes = ["bullish", "bearish", "sideways"] * (len(episodes) // 3)
    episodes = episodes[:len(regimes)]
    call = {"prompts": [None] * len(episodes), "completions": [None] * len(episodes), "episode": episodes, "regime": regimes}
    real, _ = reward_functions(compact_reward, count_characters)
    shuffled, _ = reward_functions(compact_reward, count_characters, result_reward="shuffled", seed=3)
    true_result, control_result = real[0](**call), shuffled[0](**call)
    assert sorted(control_result) == sorted(true_result)
    assert control_result != true_result  # the expert's episodes earn different results on these regimes
    assert shuffled[0](**call) == control_result  # the same batch draws the same permutation (a resumed run)
    assert [f(**call) for f in shuffled[1:]] == [f(**call) for f in real[1:]]


def test_an_unknown_result_reward_is_refused(compact_reward):
    with pytest.raises(ValueError, match="real or shuffled"):
        reward_functions(compact_reward, count_characters, result_reward="noise")
