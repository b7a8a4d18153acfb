"""What the rollout process sends the trainer: GRPO groups stamped with the policy versions that
sampled them, in a prompt order both processes can recompute.

A group is one prompt's `num_generations` episodes. Its versions are the oldest and newest policy
version (optimizer steps seen by the weights) that sampled any of its turns: equal unless the
rollout switched weights between turns (`in_flight: switch`). Its staleness when the trainer, at
version s, takes it is s − oldest version (in versions, i.e. optimizer steps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from single_agent.episode import Episode
from single_agent.rollout import derive_seed


@dataclass(frozen=True)
class SampleGroup:
    """One prompt's episodes (`index`: its place in the prompt stream), with the policy versions
    that sampled them and the rollout's wall seconds (shared by the groups rolled out together)."""

    index: int
    row: dict[str, Any]
    episodes: list[Episode]
    oldest_version: int
    newest_version: int
    rollout_s: float

    def staleness(self, trainer_version: int) -> int:
        """Optimizer steps between the oldest weights that sampled this group and the trainer's."""
        return trainer_version - self.oldest_version


@dataclass(frozen=True)
class WorkerFailure:
    """The rollout process's last words: the exception it died of, as one line."""

    message: str


def prompt_row(index: int, rows_count: int, seed: int) -> int:
    """The dataset row of group `index`: epoch e = index // rows_count walks a permutation of the rows
    drawn from derive_seed(seed, "prompt-order", e)."""
    epoch, position = divmod(index, rows_count)
    order = np.random.default_rng(derive_seed(seed, "prompt-order", epoch)).permutation(rows_count)
    return int(order[position])
