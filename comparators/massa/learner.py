"""The learning rules of MASSA and its controls, readable top to bottom (CleanRL style).

A batch holds o [B, N, F], c [B, C], a [B, N], r [B], o' and c'; x = (o, c) the joint state
(`networks.joint_state`). Shared reward: every critic learns the same r. An episode ends only
because its stretch of bars does (a time limit, not a terminal state), so every target bootstraps.

Critics (MADDPG's TD target, target networks θ' updated by Polyak averaging with rate τ):

    y_i = r + γ Q'_i(x', a'),   a'_j = μ'_j(o'_j, φ'_j),   L_Q = Σ_i mean_B (Q_i(x, a) − y_i)²

(local critics: Q_i(o_i, a_i) and Q'_i(o'_i, a'_i); the central policy: one Q(x, a) with a' = π'(x')).

Actors (MADDPG): agent i moves its own action only, the others' stay as buffered,
L_μ = −Σ_i mean_B Q_i(x, a_1 .. μ_i(o_i, φ_i) .. a_N), with φ held fixed.

Signal network (MASSA): every agent's action follows the signal, and the entropy is a bonus,

    L_φ = Σ_i mean_B [α log p(φ_i | c) − Q_i(x, μ_1(o_1, φ_1) .. μ_N(o_N, φ_N))],   φ = μ_ψ(c) + σ_ψ(c)·ε,

a gradient step on ψ only. The constant signal takes the same step without the entropy; the
random signal has nothing to learn. Only `Policy` (the actors and the signal) is executed.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn

from comparators.massa.config import MassaConfig
from comparators.massa.networks import (Actors, CentralCritics, CentralPolicy, ConstantSignal, LocalCritics,
                                        SignalNetwork, joint_state)


class Policy(nn.Module):
    """What is executed: per-asset actors with their signal source, or the central policy."""

    def __init__(self, config: MassaConfig, agents: int, observation: int, context: int):
        super().__init__()
        self.config, self.agents = config, agents
        signal = config.signal_dim if config.signal else 0
        if config.variant == "central":
            self.central = CentralPolicy(agents * observation + context, agents, config.hidden, config.max_step)
        else:
            self.actors = Actors(agents, observation, signal, config.hidden, config.max_step)
        if config.signal == "learned":
            self.signal_net = SignalNetwork(context, agents, config.signal_dim, config.hidden)
        elif config.signal == "constant":
            self.signal_net = ConstantSignal(agents, config.signal_dim)

    def signals(self, context: torch.Tensor, sample: bool, generator: torch.Generator | None = None
                ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """(φ [B, N, D] or None, log p(φ_i|c) [B, N] when sampled from the signal network, else None)."""
        kind = self.config.signal
        if kind is None:
            return None, None
        if kind == "random":
            shape = (context.shape[0], self.agents, self.config.signal_dim)
            return torch.randn(shape, generator=generator, dtype=context.dtype), None
        if kind == "learned" and sample:
            return self.signal_net.sample(context, generator)
        return self.signal_net.mode(context), None

    def forward(self, observations: torch.Tensor, context: torch.Tensor, signals: torch.Tensor | None) -> torch.Tensor:
        """Weight changes [B, N]. Actor i reads observations[:, i] and signals[:, i] only; the central policy reads all."""
        if self.config.variant == "central":
            return self.central(joint_state(observations, context))
        return self.actors(observations, signals)

    def act(self, observations: torch.Tensor, context: torch.Tensor, sample: bool = False,
            generator: torch.Generator | None = None) -> torch.Tensor:
        """The executed weight changes: signal mode (or a fresh random signal), no exploration noise."""
        signals, _ = self.signals(context, sample, generator)
        return self(observations, context, signals)


def build_critics(config: MassaConfig, agents: int, observation: int, context: int) -> nn.Module:
    state = agents * observation + context
    if config.critics == "local":
        return LocalCritics(agents, observation, config.critic_hidden)
    return CentralCritics(1 if config.critics == "joint" else agents, state, agents, config.critic_hidden)


def soft_update(target: nn.Module, source: nn.Module, tau: float) -> None:
    """θ' ← (1 − τ) θ' + τ θ."""
    with torch.no_grad():
        for t, s in zip(target.parameters(), source.parameters()):
            t.mul_(1.0 - tau).add_(s, alpha=tau)


class Learner:
    """The policy, the critics, their targets and optimizers; `update` is one gradient step of each."""

    def __init__(self, config: MassaConfig, agents: int, observation: int, context: int, seed: int):
        torch.manual_seed(seed)
        self.config, self.agents = config, agents
        self.policy = Policy(config, agents, observation, context)
        self.critics = build_critics(config, agents, observation, context)
        self.target_policy = copy.deepcopy(self.policy).requires_grad_(False)
        self.target_critics = copy.deepcopy(self.critics).requires_grad_(False)
        movers = self.policy.central if config.variant == "central" else self.policy.actors
        self.actor_opt = torch.optim.Adam(movers.parameters(), lr=config.actor_lr)
        self.critic_opt = torch.optim.Adam(self.critics.parameters(), lr=config.critic_lr)
        learned_signal = config.signal in ("learned", "constant")
        self.signal_opt = torch.optim.Adam(self.policy.signal_net.parameters(), lr=config.signal_lr) if learned_signal else None
        self.generator = torch.Generator().manual_seed(seed)

    def _q(self, critics: nn.Module, o: torch.Tensor, c: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        """[B, K] critic values of actions a ([B, N], or [B, K, N] one action vector per critic)."""
        if self.config.critics == "local":
            return critics(o, a)
        return critics(joint_state(o, c), a)

    def explore(self, observations: np.ndarray, context: np.ndarray, noise: float) -> np.ndarray:
        """A training action: the policy with a sampled signal, plus N(0, (noise·m)²), clipped to [−m, m]."""
        with torch.no_grad():
            o, c = torch.as_tensor(observations)[None], torch.as_tensor(context)[None]
            action = self.policy.act(o, c, sample=True, generator=self.generator)[0]
            action = action + noise * self.config.max_step * torch.randn(action.shape, generator=self.generator)
        return action.clamp(-self.config.max_step, self.config.max_step).numpy()

    def update(self, batch: dict[str, torch.Tensor]) -> dict[str, float]:
        cfg = self.config
        o, c, a, r, o2, c2 = (batch[k] for k in ("o", "c", "a", "r", "o2", "c2"))
        with torch.no_grad():
            signals2, _ = self.target_policy.signals(c2, sample=True, generator=self.generator)
            a2 = self.target_policy(o2, c2, signals2)
            target = r[:, None] + cfg.gamma * self._q(self.target_critics, o2, c2, a2)
        critic_loss = (self._q(self.critics, o, c, a) - target).pow(2).mean(0).sum()
        self._step(self.critic_opt, critic_loss, self.critics)

        signals, log_prob = self.policy.signals(c, sample=True, generator=self.generator)
        losses = {"critic_loss": critic_loss.item()}
        if self.signal_opt is not None:
            joint = self._q(self.critics, o, c, self.policy(o, c, signals))
            bonus = cfg.entropy_coef * log_prob if log_prob is not None else torch.zeros_like(joint)
            signal_loss = (bonus - joint).mean(0).sum()
            self._step(self.signal_opt, signal_loss, self.policy.signal_net)
            losses["signal_loss"] = signal_loss.item()
            if log_prob is not None:
                losses["signal_entropy"] = -log_prob.mean().item()
        own = self.policy(o, c, None if signals is None else signals.detach())
        if cfg.critics == "central":
            eye = torch.eye(self.agents, dtype=a.dtype)
            actions = a[:, None, :] * (1.0 - eye) + torch.diag_embed(own)
            actor_loss = -self._q(self.critics, o, c, actions).mean(0).sum()
        else:
            actor_loss = -self._q(self.critics, o, c, own).mean(0).sum()
        movers = self.policy.central if cfg.variant == "central" else self.policy.actors
        self._step(self.actor_opt, actor_loss, movers)
        losses["actor_loss"] = actor_loss.item()
        soft_update(self.target_policy, self.policy, cfg.tau)
        soft_update(self.target_critics, self.critics, cfg.tau)
        return losses

    def _step(self, optimizer: torch.optim.Optimizer, loss: torch.Tensor, module: nn.Module) -> None:
        self.policy.zero_grad(set_to_none=True)
        self.critics.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(module.parameters(), self.config.grad_clip)
        optimizer.step()


class ReplayBuffer:
    """A ring buffer of transitions (o, c, a, r, o', c') sampled uniformly."""

    def __init__(self, size: int, agents: int, observation: int, context: int, seed: int):
        self.size, self.count, self.cursor = size, 0, 0
        self.rng = np.random.default_rng(seed)
        self.data = {"o": np.zeros((size, agents, observation), np.float32), "c": np.zeros((size, context), np.float32),
                     "a": np.zeros((size, agents), np.float32), "r": np.zeros(size, np.float32),
                     "o2": np.zeros((size, agents, observation), np.float32),
                     "c2": np.zeros((size, context), np.float32)}

    def add(self, **transition) -> None:
        for key, value in transition.items():
            self.data[key][self.cursor] = value
        self.cursor = (self.cursor + 1) % self.size
        self.count = min(self.count + 1, self.size)

    def sample(self, batch: int) -> dict[str, torch.Tensor]:
        rows = self.rng.integers(self.count, size=batch)
        return {key: torch.from_numpy(values[rows]) for key, values in self.data.items()}
