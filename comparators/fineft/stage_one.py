"""FineFT stage I: pretrain the ensemble on demonstrations, then train it with the selective ensemble-TD update.

Transitions are index triples (t, p, a): the state of bar t, previous target p, target a; the
reward r = R[t, p, a] and the next state (t+1, a) — flat after a liquidation — come from the reward
table (`rewards`), so a replay buffer only stores indices. With γ the discount, Q' the target
networks (Polyak-averaged, rate τ) and Q_DP the DP teacher's action values of (t, p):

- pretraining (`pretrain_steps` batches from DP-optimal and rule rollouts): every learner i
  minimises huber(y_i − Q_i(s, a)) + β·KL(softmax Q_DP ‖ softmax Q_i), y_i = r + γ·max Q'_i(s′);
- training (`train_steps` batches from a FIFO buffer filled by ε-greedy rollouts of the ensemble's
  mean Q, `rollout_steps` bars from a random bar each round, ε decaying linearly to `epsilon_min`):
  loss = selective ensemble-TD loss (`selective`) + β_k·KL(softmax Q_DP ‖ softmax Σ_i d_i·Q_i), with
  d the selective diagonal weights and β_k decaying linearly from β to 0 (the original's `ada`).

Adam with gradient-norm clipping 5, as the original. The run is seeded by `generator` and
`rng` only (single-threaded torch for reproducible numbers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

from comparators.fineft.ensemble import EnsembleQ
from comparators.fineft.rewards import RewardTable
from comparators.fineft.selective import huber, selective_td_loss


@dataclass(frozen=True)
class StageOneSettings:
    """Stage I's knobs (module docstring); defaults sized for the CPU config."""

    gamma: float = 0.9
    tau: float = 0.005
    lr: float = 1e-3
    batch: int = 256
    pretrain_steps: int = 1000
    train_steps: int = 3000
    rollout_steps: int = 1024
    updates_per_rollout: int = 256
    buffer: int = 200_000
    epsilon_init: float = 1.0
    epsilon_min: float = 0.1
    kl_weight: float = 1.0
    window: float = 4.0
    reach: int = 1
    grad_clip: float = 5.0


@dataclass
class Transitions:
    """The training split: standardised states, the reward table and the teacher's action values."""

    states: torch.Tensor
    table: RewardTable
    teacher: torch.Tensor
    flat: int

    @property
    def steps(self) -> int:
        return self.table.reward.shape[0]

    def batch(self, t: np.ndarray, p: np.ndarray, a: np.ndarray):
        """(state, previous, action, reward, next state, next previous, done, teacher Q) of index triples."""
        liquidated = self.table.liquidated[t, p, a]
        nxt = np.where(liquidated, self.flat, a)
        return (self.states[t], torch.as_tensor(p), torch.as_tensor(a), torch.as_tensor(self.table.reward[t, p, a]),
                self.states[t + 1], torch.as_tensor(nxt), torch.as_tensor((t + 1 >= self.steps).astype(np.float32)),
                self.teacher[t, p])


def path_transitions(path: np.ndarray, flat: int) -> np.ndarray:
    """(t, p, a) triples of a target path from flat: p = the path's previous target."""
    previous = np.concatenate([[flat], path[:-1]])
    return np.stack([np.arange(len(path)), previous, path], axis=1)


def _kl(teacher: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """KL(softmax teacher ‖ softmax q), mean over rows."""
    return F.kl_div(F.log_softmax(q, dim=-1), F.log_softmax(teacher, dim=-1), reduction="batchmean", log_target=True)


def _step(optimizer, loss, net, clip):
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
    optimizer.step()


class StageOne:
    """The learners, their target networks and the optimiser, trained in two phases."""

    def __init__(self, net: EnsembleQ, data: Transitions, settings: StageOneSettings, rng: np.random.Generator,
                 log: Callable[[str, int, dict], None]):
        self.net, self.data, self.s, self.rng, self.log = net, data, settings, rng, log
        self.target = EnsembleQ(net.features, net.positions, net.learners, net.hidden)
        self.target.load_state_dict(net.state_dict())
        self.target.requires_grad_(False)
        self.optimizer = torch.optim.Adam(net.parameters(), lr=settings.lr)

    def _bootstrap(self, nxt_state, nxt_prev, done, reward):
        with torch.no_grad():
            best = self.target(nxt_state, nxt_prev).max(dim=2).values
        return reward[:, None] + (1.0 - done[:, None]) * self.s.gamma * best

    def _soft_update(self):
        with torch.no_grad():
            for target, online in zip(self.target.parameters(), self.net.parameters()):
                target.lerp_(online, self.s.tau)

    def pretrain(self, demonstrations: np.ndarray) -> None:
        """Phase 1 on (t, p, a) demonstration triples."""
        for step in range(self.s.pretrain_steps):
            t, p, a = demonstrations[self.rng.integers(len(demonstrations), size=self.s.batch)].T
            state, prev, act, reward, nxt, nprev, done, teacher = self.data.batch(t, p, a)
            q = self.net(state, prev)
            y = self._bootstrap(nxt, nprev, done, reward)
            taken = q.gather(2, act[:, None, None].expand(-1, q.shape[1], 1)).squeeze(2)
            td = huber(y - taken).mean()
            kl = _kl(teacher[:, None, :].expand_as(q).reshape(-1, q.shape[2]), q.reshape(-1, q.shape[2]))
            loss = td + self.s.kl_weight * kl
            _step(self.optimizer, loss, self.net, self.s.grad_clip)
            self._soft_update()
            self.log("pretrain", step, {"loss": loss.item(), "td": td.item(), "kl": kl.item()})

    def _rollout(self, epsilon: float) -> np.ndarray:
        """ε-greedy (mean Q of the ensemble) triples over `rollout_steps` bars from a random bar, from flat."""
        steps = min(self.s.rollout_steps, self.data.steps)
        start = int(self.rng.integers(0, self.data.steps - steps + 1))
        rows = torch.arange(start, start + steps)
        positions = self.net.positions
        with torch.no_grad():
            q = self.net(self.data.states[rows].repeat_interleave(positions, dim=0),
                         torch.arange(positions).repeat(steps)).mean(dim=1)
        greedy = q.reshape(steps, positions, positions).argmax(dim=2).numpy()
        explore = self.rng.random(steps) < epsilon
        random_targets = self.rng.integers(positions, size=steps)
        out, previous = np.empty((steps, 3), dtype=np.int64), self.data.flat
        for i in range(steps):
            t = start + i
            action = int(random_targets[i]) if explore[i] else int(greedy[i, previous])
            out[i] = (t, previous, action)
            previous = self.data.flat if self.data.table.liquidated[t, previous, action] else action
        return out

    def train(self) -> None:
        """Phase 2: rollouts into the buffer, selective ensemble-TD updates with the decaying KL term."""
        buffer = np.empty((0, 3), dtype=np.int64)
        step, total = 0, self.s.train_steps
        while step < total:
            epsilon = max(self.s.epsilon_min, self.s.epsilon_init - (self.s.epsilon_init - self.s.epsilon_min) * step / total)
            buffer = np.concatenate([buffer, self._rollout(epsilon)])[-self.s.buffer:]
            for _ in range(min(self.s.updates_per_rollout, total - step)):
                t, p, a = buffer[self.rng.integers(len(buffer), size=self.s.batch)].T
                state, prev, act, reward, nxt, nprev, done, teacher = self.data.batch(t, p, a)
                q = self.net(state, prev)
                taken = q.gather(2, act[:, None, None].expand(-1, q.shape[1], 1)).squeeze(2)
                td, weights = selective_td_loss(taken, self._bootstrap(nxt, nprev, done, reward),
                                                self.s.window, self.s.reach)
                kl = _kl(teacher, torch.einsum("bna,bn->ba", q, weights))
                beta = self.s.kl_weight * (1.0 - step / total)
                loss = td + beta * kl
                _step(self.optimizer, loss, self.net, self.s.grad_clip)
                self._soft_update()
                self.log("train", step, {"loss": loss.item(), "td": td.item(), "kl": kl.item(), "epsilon": epsilon,
                                         "updated_learners": (weights > 0).sum(dim=1).float().mean().item()})
                step += 1
