"""The AlphaQuanter reward as TRL reward functions, one per component.

R = α·R_result + R_format + R_tool (`single_agent.rewards`) becomes three reward functions,
`result`, `format` and `tool`, with weights [α, 1, 1]: TRL sums them weighted into the reward
the advantages are computed from, and logs each one's mean and std every step
(`rewards/<name>/mean`). Each function reads the finished `episode` (an extra field of the
rollout) and the prompt's `regime` (a dataset column).
"""

from __future__ import annotations

from single_agent.episode import Episode
from single_agent.rewards import CountTokens, RewardConfig, episode_rewards

COMPONENTS = ("result", "format", "tool")


class ComponentReward:
    """One component of `episode_rewards` as a TRL reward function named after it."""

    def __init__(self, component: str, config: RewardConfig, count_tokens: CountTokens) -> None:
        if component not in COMPONENTS:
            raise ValueError(f"unknown reward component {component!r}; components are {', '.join(COMPONENTS)}")
        self.__name__ = component
        self.config = config
        self.count_tokens = count_tokens

    def __call__(self, prompts: list, completions: list, episode: list[Episode], regime: list[str],
                 **_: object) -> list[float | None]:
        return [getattr(episode_rewards(e, r, self.config, self.count_tokens), self.__name__)
                for e, r in zip(episode, regime, strict=True)]


def reward_functions(config: RewardConfig, count_tokens: CountTokens) -> tuple[list[ComponentReward], list[float]]:
    """The functions `result`, `format`, `tool` and their weights [α, 1, 1]."""
    functions = [ComponentReward(name, config, count_tokens) for name in COMPONENTS]
    return functions, [config.alpha, 1.0, 1.0]


def token_counter(tokenizer) -> CountTokens:
    """L(text) = number of `tokenizer` tokens of `text`, special tokens not added."""
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])
