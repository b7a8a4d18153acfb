"""Training a FinRL-style policy with stable-baselines3, default hyperparameters.

`train_policy` builds a `TradingEnv` over the training episodes and runs the algorithm's
`learn` for `timesteps` environment steps on the CPU. The seed goes to the algorithm, which
seeds torch, numpy and the environment (the episode draw at each reset), so the same episodes,
settings, seed and library versions give the same policy.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import version
from typing import Literal

import torch
from stable_baselines3 import A2C, PPO
from stable_baselines3.common.base_class import BaseAlgorithm

from frameworks.rl.env import TradingEnv, TrainingEpisode
from harness.execution import ExecutionConfig

Algorithm = Literal["a2c", "ppo"]
ALGORITHMS: dict[str, type[BaseAlgorithm]] = {"a2c": A2C, "ppo": PPO}

LIBRARIES = ("stable-baselines3", "gymnasium", "torch", "numpy")
"""Libraries whose versions a trained policy depends on (part of its cache key)."""


def library_versions() -> dict[str, str]:
    """Installed versions of `LIBRARIES`."""
    return {name: version(name) for name in LIBRARIES}


@contextmanager
def single_threaded_torch() -> Iterator[None]:
    """Run torch on one thread inside the block, then restore the thread count.

    The policy networks are tiny (two hidden layers of 64): on a shared 2-core machine a second
    intra-op thread made each optimiser step ~100x slower (thread wake-ups dominate).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@dataclass(frozen=True)
class TrainingSettings:
    """What a policy's training depends on besides its data and seed."""

    algorithm: Algorithm
    timesteps: int
    window: int
    reward_scale: float
    execution: ExecutionConfig


def train_policy(settings: TrainingSettings, episodes: list[TrainingEpisode], seed: int) -> tuple[BaseAlgorithm, dict]:
    """A policy trained for `settings.timesteps` steps on `episodes`, and its cost: `train_wall_s`
    and `train_cpu_s` (seconds of this process's CPU time, which a busy machine does not inflate)."""
    env = TradingEnv(episodes, settings.execution, settings.reward_scale)
    wall, cpu = time.perf_counter(), time.process_time()
    with single_threaded_torch():
        model = ALGORITHMS[settings.algorithm]("MlpPolicy", env, seed=seed, device="cpu", verbose=0)
        model.learn(total_timesteps=settings.timesteps)
    cost = {"train_wall_s": round(time.perf_counter() - wall, 3), "train_cpu_s": round(time.process_time() - cpu, 3)}
    return model, cost
