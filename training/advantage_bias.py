"""Does GRPO's reward scaling favour an answer before any answer depends on what was read?

A policy that answers uniformly at random, on prompts whose regimes are equally likely (the
`balance_regimes` training set), earns the same expected R_result with every action. Yet the
advantage each action receives can still differ in expectation, because TRL divides a group's
centred rewards by a spread that depends on the prompt's regime:

    A_i = (R_i − mean_group R) / s,   s = std_group R + 1e-4 (`scale_rewards: group`),
                                        std_batch R + 1e-4 (`batch`), 1 (`none`)

as TRL 1.16's `GRPOTrainer._generate_and_score_completions` computes it (std unbiased). With
the paper's R_result matrix a sideways group (−0.5, −0.5, +1) has a smaller spread than a
trending one (+1, −1, −0.75), so HOLD's wins there are scaled up: a drift toward HOLD with no
information behind it. This module estimates the mean advantage per episode of each action by
simulating batches of `prompts` groups of `generations` uniform answers, with R = α·R_result
only (the other terms do not depend on the answer):

    python -m training.advantage_bias                       # the compact reward, 2 prompts x 8
    python -m training.advantage_bias --prompts 32 --generations 16 --reward paper
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from market.decision import Action
from single_agent.rewards import RewardConfig, load_reward_config

SCALINGS = ("group", "batch", "none")


def mean_advantages(config: RewardConfig, prompts: int, generations: int, draws: int, seed: int = 0) -> pd.DataFrame:
    """Mean advantage per episode of each action (columns) under each scaling (rows), over `draws`
    simulated batches of uniformly random answers on equally likely regimes."""
    rng = np.random.default_rng(seed)
    actions = list(Action)
    table = np.array([[config.alpha * config.result_matrix[regime][a] for a in actions] for regime in config.result_matrix])
    regimes = rng.integers(len(table), size=(draws, prompts))
    answers = rng.integers(len(actions), size=(draws, prompts, generations))
    rewards = table[regimes[..., None], answers]
    centred = rewards - rewards.mean(axis=2, keepdims=True)
    spreads = {"group": rewards.std(axis=2, ddof=1, keepdims=True) + 1e-4,
               "batch": rewards.reshape(draws, -1).std(axis=1, ddof=1)[:, None, None] + 1e-4,
               "none": np.ones((1, 1, 1))}
    rows = {}
    for scaling in SCALINGS:
        advantages = centred / spreads[scaling]
        rows[scaling] = [advantages[answers == k].sum() / answers.size for k in range(len(actions))]
    return pd.DataFrame.from_dict(rows, orient="index", columns=[a.value for a in actions])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reward", default="compact", help="a configs/single_agent/reward name")
    parser.add_argument("--prompts", type=int, default=2, help="prompts per optimizer step")
    parser.add_argument("--generations", type=int, default=8, help="completions per prompt")
    parser.add_argument("--draws", type=int, default=20000, help="simulated batches")
    args = parser.parse_args()
    table = mean_advantages(load_reward_config(args.reward), args.prompts, args.generations, args.draws)
    print(f"mean advantage per episode, uniform answers, equally likely regimes, reward {args.reward}, "
          f"{args.prompts} prompts x {args.generations} generations, {args.draws} batches")
    print(table.round(4).to_string())


if __name__ == "__main__":
    main()
