"""FineFT stage II: per market dynamic, the best learner on validation and a VAE on the dynamic's states.

Learner i alone plays the validation split greedily from flat (`FineFTModel.path` with one learner's
Q-values); its score on dynamic k is the sum of its training rewards (`rewards`) over the validation
bars labelled k (`dynamics`). chosen[k] = argmax_i score[i, k]; a dynamic absent from validation gets
the learner with the best total (the original filters learners per dynamic on validation profit the
same way). VAE k is fitted on the standardised TRAINING states labelled k, and its reference ELBOs
are those states' ELBOs (`vae`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from comparators.fineft.policy import FineFTModel
from comparators.fineft.rewards import RewardTable
from comparators.fineft.vae import elbo_of, fit_vae


@dataclass(frozen=True)
class VaeSettings:
    """Adam on the negative ELBO, `epochs` passes over at most `max_states` states per dynamic."""

    epochs: int = 20
    batch: int = 256
    lr: float = 1e-3
    max_states: int = 8000


def learner_rewards(q: np.ndarray, table: RewardTable, flat: int) -> np.ndarray:
    """Per learner (rows) the reward of each bar (columns) when it alone plays greedily from flat."""
    steps, learners = table.reward.shape[0], q.shape[2]
    greedy = q[:steps].argmax(axis=3)
    out = np.empty((learners, steps), dtype=np.float64)
    for i in range(learners):
        previous = flat
        for t in range(steps):
            action = greedy[t, previous, i]
            out[i, t] = table.reward[t, previous, action]
            previous = flat if table.liquidated[t, previous, action] else int(action)
    return out


def select_learners(rewards: np.ndarray, labels: np.ndarray, dynamics: int) -> tuple[np.ndarray, np.ndarray]:
    """(chosen learner per dynamic, score[learner, dynamic]) from `learner_rewards` and per-bar labels."""
    labels = labels[:rewards.shape[1]]
    scores = np.stack([rewards[:, labels == k].sum(axis=1) for k in range(dynamics)], axis=1)
    present = np.array([(labels == k).any() for k in range(dynamics)])
    chosen = np.where(present, scores.argmax(axis=0), rewards.sum(axis=1).argmax())
    return chosen, scores


def fit_dynamic_vaes(model: FineFTModel, states: np.ndarray, labels: np.ndarray, settings: VaeSettings,
                     generator: torch.Generator, rng: np.random.Generator,
                     log: Callable[[int, int, float], None]) -> list[int]:
    """Fit VAE k on the training states labelled k (all states where none is) and keep its reference
    ELBOs; the number of states per dynamic."""
    counts = []
    for k, vae in enumerate(model.vaes):
        own = states[labels[:len(states)] == k]
        counts.append(len(own))
        if len(own) == 0:
            own = states
        if len(own) > settings.max_states:
            own = own[np.sort(rng.choice(len(own), settings.max_states, replace=False))]
        fit_vae(vae, own, settings.epochs, settings.batch, settings.lr, generator,
                log=lambda epoch, loss, k=k: log(k, epoch, loss))
        model.set_reference(k, elbo_of(vae, own))
    return counts
