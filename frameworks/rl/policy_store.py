"""The on-disk cache of trained policies: `$TRADEDUEL_CACHE/rl_policies/<algorithm>-<key>/`.

The key is the SHA-256 (first 16 hex digits) of the canonical JSON of
(data fingerprint, training settings, seed, library versions); the data fingerprint hashes
every training episode's ticker, dates, OHLCV values and feature rows. A folder holds
`policy.zip` (stable-baselines3's `save`) and `training.json` (the key's inputs, the timesteps
and the training cost: wall and CPU seconds). It is written into a private staging folder and
renamed, so a killed training leaves nothing half-written and a rerun trains again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from stable_baselines3.common.base_class import BaseAlgorithm

from frameworks.rl.env import TrainingEpisode
from frameworks.rl.training import ALGORITHMS, TrainingSettings, library_versions
from llm_backends.paths import build_folder
from market.sources.cache import cache_folder

POLICY_FILE = "policy.zip"
FACTS_FILE = "training.json"


def data_fingerprint(episodes: list[TrainingEpisode]) -> str:
    """SHA-256 of every episode's ticker, bar dates, OHLCV values and feature rows."""
    digest = hashlib.sha256()
    for episode in episodes:
        digest.update(episode.ticker.encode())
        digest.update(episode.bars.index.asi8.tobytes())
        digest.update(np.ascontiguousarray(episode.bars[["open", "high", "low", "close", "volume"]],
                                           dtype=np.float64).tobytes())
        digest.update(np.ascontiguousarray(episode.features, dtype=np.float32).tobytes())
    return digest.hexdigest()


def policy_inputs(settings: TrainingSettings, episodes: list[TrainingEpisode], seed: int) -> dict:
    """Everything a trained policy depends on, as plain JSON-able values."""
    return {
        "data": data_fingerprint(episodes),
        "tickers": [episode.ticker for episode in episodes],
        "settings": {"algorithm": settings.algorithm, "timesteps": settings.timesteps, "window": settings.window,
                     "reward_scale": settings.reward_scale, "execution": settings.execution.model_dump()},
        "seed": seed,
        "versions": library_versions(),
    }


def policy_key(inputs: dict) -> str:
    """SHA-256 (first 16 hex digits) of `inputs` as canonical JSON."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]


def cached_policy(inputs: dict, train: Callable[[], tuple[BaseAlgorithm, dict]],
                  cache_dir: str | Path | None = None) -> tuple[BaseAlgorithm, dict]:
    """The policy stored under `inputs`' key, training and storing it with `train()` when absent.

    `train()` returns the policy and its cost ({train_wall_s, train_cpu_s}). Returns the policy
    and its facts: the inputs, `key`, `timesteps` and the cost.
    """
    algorithm = inputs["settings"]["algorithm"]
    key = policy_key(inputs)
    folder = cache_folder("rl_policies", cache_dir) / f"{algorithm}-{key}"
    if not (folder / FACTS_FILE).is_file():
        model, cost = train()
        facts = {**inputs, "key": key, "timesteps": int(model.num_timesteps), **cost}

        def write(staging: Path) -> None:
            staging.mkdir(parents=True)
            model.save(staging / POLICY_FILE)
            (staging / FACTS_FILE).write_text(json.dumps(facts, indent=2, sort_keys=True) + "\n")

        build_folder(folder, write)
    facts = json.loads((folder / FACTS_FILE).read_text())
    model = ALGORITHMS[algorithm].load(folder / POLICY_FILE, device="cpu")
    return model, facts
