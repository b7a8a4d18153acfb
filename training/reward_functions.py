"""The AlphaQuanter reward as TRL reward functions, one per component.

R = α·R_result + R_format + R_tool (`single_agent.rewards`) becomes three reward functions,
`result`, `format` and `tool`, with weights [α, 1, 1]: TRL sums them weighted into the reward
the advantages are computed from, and logs each one's mean and std every step
(`rewards/<name>/mean`). Each function reads the finished `episode` (an extra field of the
rollout) and the prompt's `regime` (a dataset column).

The control of the training proof (`result_reward: shuffled`, docs/training.md) permutes each
call's R_result values across its episodes (the episodes of one optimizer step's generation
batch): the same values, the same pipeline and compute, but a reward no longer tied to being
right, so that what training alone does is measured apart from what the reward teaches. The
permutation is drawn from the run seed and the batch's (ticker, date) pairs, so a resumed run
draws the same one.
"""

from __future__ import annotations

import hashlib
from typing import Literal

import numpy as np

from single_agent.episode import Episode
from single_agent.rewards import CountTokens, RewardConfig, episode_rewards

COMPONENTS = ("result", "format", "tool")
ResultReward = Literal["real", "shuffled"]


class ComponentReward:
    """One component of `episode_rewards` as a TRL reward function named after it."""

    def __init__(self, component: str, config: RewardConfig, count_tokens: CountTokens,
                 shuffle_seed: int | None = None) -> None:
        if component not in COMPONENTS:
            raise ValueError(f"unknown reward component {component!r}; components are {', '.join(COMPONENTS)}")
        self.__name__ = component
        self.config = config
        self.count_tokens = count_tokens
        self.shuffle_seed = shuffle_seed
        """Set: each call's values are permuted across its episodes (`batch_permutation`)."""

    def __call__(self, prompts: list, completions: list, episode: list[Episode], regime: list[str],
                 **_: object) -> list[float | None]:
        values = [getattr(episode_rewards(e, r, self.config, self.count_tokens), self.__name__)
                  for e, r in zip(episode, regime, strict=True)]
        if self.shuffle_seed is None:
            return values
        return [values[i] for i in batch_permutation(self.shuffle_seed, episode)]


def batch_permutation(seed: int, episodes: list[Episode]) -> np.ndarray:
    """A permutation of range(len(episodes)) drawn from `seed` and the episodes' (ticker, date) pairs."""
    digest = hashlib.sha256("|".join(f"{e.ticker} {e.date}" for e in episodes).encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")]).permutation(len(episodes))


def reward_functions(config: RewardConfig, count_tokens: CountTokens, result_reward: ResultReward = "real",
                     seed: int = 0) -> tuple[list[ComponentReward], list[float]]:
    """The functions `result`, `format`, `tool` and their weights [α, 1, 1]; with `result_reward`
    "shuffled", `result`'s values permuted within each call (the control, see the module docstring)."""
    if result_reward not in ("real", "shuffled"):
        raise ValueError(f"result_reward {result_reward!r}: it must be real or shuffled")
    functions = [ComponentReward(name, config, count_tokens,
                                 shuffle_seed=seed if name == "result" and result_reward == "shuffled" else None)
                 for name in COMPONENTS]
    return functions, [config.alpha, 1.0, 1.0]


def token_counter(tokenizer) -> CountTokens:
    """L(text) = number of `tokenizer` tokens of `text`, special tokens not added."""
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])
