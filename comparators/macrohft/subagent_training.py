"""Stage 1: one sub-agent per market condition, a double DQN with the DP teacher's KL term.

On the training chunks of its condition (`market_conditions` labels), each epoch runs every chunk
as an episode from a random initial position, all chunks side by side (`paths`), acting
ε-greedily and storing transitions; after every 1/`updates_per_transition` stored transitions one
gradient step on a uniform replay batch:

    a* = argmax_a Q_θ(s', a),  y = r + γ (1 − done) Q_θ'(s', a*)              (double DQN)
    L  = mean (Q_θ(s, a) − y)² + α · KL(softmax Q_DP(s) ‖ softmax Q_θ(s))     (original `update`)

with gradient norm clipped at 1 and a soft target update (τ) after each step. After each epoch
the greedy policy runs on the validation chunks of the same condition from both initial
positions (the original's `val_cluster(…, 0)` and `(…, 1)`); the epoch with the highest mean
reward sum is kept (the original keeps the best validation return rate).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from comparators.macrohft.learning import epsilon, explore, soft_update, teacher_kl
from comparators.macrohft.model import SubAgent
from comparators.macrohft.paths import Paths
from comparators.macrohft.policy import greedy_path, path_rewards, q_table
from comparators.macrohft.replay import IndexReplay
from comparators.macrohft.settings import MacroHFTSettings
from comparators.training_log import TrainingLog


@dataclass
class StageResult:
    """The kept weights and what the stage measured."""

    state: dict
    best_epoch: int
    best_valid: float
    updates: int


def validation_score(q, paths: Paths, actions: int) -> float:
    """Mean over paths and both initial positions 0 and P−1 of the greedy path's reward sum."""
    scores = []
    for n in range(paths.count):
        table = q_table(q, paths.single[n], paths.trend[n], paths.context[n], actions)
        rewards = paths.rewards[n].numpy()
        for start in (0, actions - 1):
            scores.append(path_rewards(rewards, greedy_path(table[:-1], start), start))
    return float(np.mean(scores))


def _subagent_q(agent: SubAgent):
    return lambda single, trend, context, previous: agent(single, trend, previous)


def td_kl_loss(agent: SubAgent, target: SubAgent, paths: Paths, rows: np.ndarray, gamma: float,
               alpha: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(loss, TD term, KL term) of a batch of index rows (path, bar, previous, action)."""
    n, t, previous, action = (torch.from_numpy(rows[:, k]) for k in range(4))
    reward = paths.rewards[n, t, previous, action]
    done = (t + 1 == paths.steps).float()
    with torch.no_grad():
        next_args = (paths.single[n, t + 1], paths.trend[n, t + 1], action)
        best = agent(*next_args).argmax(dim=1, keepdim=True)
        y = reward + gamma * (1.0 - done) * target(*next_args).gather(1, best).squeeze(1)
    q_all = agent(paths.single[n, t], paths.trend[n, t], previous)
    td = F.mse_loss(q_all.gather(1, action[:, None]).squeeze(1), y)
    kl = teacher_kl(q_all, paths.teacher[n, t, previous])
    return td + alpha * kl, td, kl


def train_subagent(agent: SubAgent, train: Paths, valid: Paths, settings: MacroHFTSettings, log: TrainingLog,
                   name: str, rng: np.random.Generator) -> StageResult:
    """Stage 1 for one condition (module docstring); `agent` ends with the kept weights."""
    actions = len(settings.positions)
    target = copy.deepcopy(agent)
    optimizer = torch.optim.Adam(agent.parameters(), lr=settings.lr)
    replay = IndexReplay(settings.buffer_size)
    every = max(1.0, 1.0 / settings.updates_per_transition)
    best, best_epoch, best_state, updates, pending = -np.inf, 0, copy.deepcopy(agent.state_dict()), 0, 0.0
    ids = np.arange(train.count)
    for epoch in range(settings.sub_epochs):
        eps = epsilon(settings.sub_epsilon, epoch)
        previous = rng.integers(0, actions, train.count)
        agent.eval()
        for t in range(train.steps):
            with torch.no_grad():
                greedy = agent(train.single[:, t], train.trend[:, t], torch.from_numpy(previous)).argmax(dim=1).numpy()
            action = explore(greedy, eps, actions, rng)
            replay.add(ids, t, previous, action)
            previous = action
            pending += train.count
            while pending >= every and replay.size >= settings.batch_size:
                pending -= every
                agent.train()
                rows, _ = replay.sample(settings.batch_size, rng)
                loss, td, kl = td_kl_loss(agent, target, train, rows, settings.gamma, settings.kl_alpha)
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(agent.parameters(), 1.0)
                optimizer.step()
                soft_update(agent, target, settings.tau)
                agent.eval()
                updates += 1
                if updates % 50 == 0:
                    log.scalars(updates, **{f"{name}/td": td.item(), f"{name}/kl": kl.item()})
        score = validation_score(_subagent_q(agent), valid, actions)
        log.step(**{f"{name}/valid_reward": score, f"{name}/epsilon": eps})
        if score > best:
            best, best_epoch, best_state = score, epoch + 1, copy.deepcopy(agent.state_dict())
    agent.load_state_dict(best_state)
    return StageResult(state=best_state, best_epoch=best_epoch, best_valid=float(best), updates=updates)
