"""EarnMore's SAC on stable-baselines3: the encoder as a shared features extractor, per-token heads,
and the two auxiliary losses after every SAC update.

Observation: {"windows": (N, W, F), "mask": (N,)}. The features extractor (`TokenExtractor`) is the
`MaskedStockEncoder`; its N + 1 tokens h_0..h_N (h_0 = CLS) are flattened for SB3 and split again by
the heads:

- actor (`TokenActor`): per token j, z_j = MLP(h_j), mean_j = u·z_j, log σ_j = v·z_j, one action
  coordinate per token (the original's `ActorMaskSAC`: a shared per-token MLP and a 2-output head);
  SB3 squashes a = tanh(mean + σ·ε) and `actions.action_weights` turns a into weights.
- critics (`TokenCritic`, two of them, as SB3's twin Q): Q(s, a) = q·Σ_j MLP([h_j; a_j]) (the
  original's `CriticMaskSAC`: per-token MLP on the token and its action, summed over tokens).

SB3's SAC does the critic, actor and entropy-coefficient updates (automatic entropy tuning,
target entropy −(N+1)); `EarnMoreSAC.train` adds, after each of them, one step of
L_aux = λ_rec·L_rec + λ_β·L_β on a fresh replay batch (the original's separate `rep` and `beta`
optimiser steps), over the encoder, its decoder and the actor. With `share_features_extractor`
the encoder is the actor's (SB3 trains a shared extractor with the actor loss; the critics read it
detached); without it (`EarnMoreSettings.shared_encoder=False`, the default, as SB3's SAC) the twin
critics have their own encoder, trained by the critic loss, and the auxiliary step trains the actor's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3 import SAC
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.sac.policies import Actor, SACPolicy
from stable_baselines3.common.policies import ContinuousCritic
from stable_baselines3.common.utils import LinearSchedule, update_learning_rate
from torch import nn

from comparators.earnmore.actions import masked_weight
from comparators.earnmore.model import MaskedStockEncoder


class TokenExtractor(BaseFeaturesExtractor):
    """The encoder's N + 1 output tokens, flattened: features_dim = (N + 1)·D."""

    def __init__(self, observation_space: spaces.Dict, embed_dim: int = 64, heads: int = 4, mlp_ratio: float = 4.0,
                 stock_identity: bool = True):
        n_stocks, days, n_features = observation_space["windows"].shape
        super().__init__(observation_space, features_dim=(n_stocks + 1) * embed_dim)
        self.encoder = MaskedStockEncoder(n_stocks, days, n_features, embed_dim, heads, mlp_ratio, stock_identity)

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.encoder.encode(observations["windows"], observations["mask"]).flatten(1)


class PerToken(nn.Module):
    """`module` applied to each of `tokens` tokens of a flat (B, tokens·d_in) input: (B, tokens·d_out)."""

    def __init__(self, module: nn.Module, tokens: int):
        super().__init__()
        self.module, self.tokens = module, tokens

    def forward(self, flat: torch.Tensor) -> torch.Tensor:
        return self.module(flat.view(flat.shape[0], self.tokens, -1)).flatten(1)


def token_mlp(width_in: int, hidden: int) -> nn.Sequential:
    """Linear → GELU → Linear → GELU (the original's timm `Mlp` with hidden = out = `hidden`)."""
    return nn.Sequential(nn.Linear(width_in, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU())


class TokenActor(Actor):
    """SB3's SAC actor with the per-token trunk and heads of the module docstring."""

    def __init__(self, *args: Any, hidden: int = 64, **kwargs: Any):
        super().__init__(*args, net_arch=[], **kwargs)
        tokens = self.action_space.shape[0]
        width = self.features_dim // tokens
        self.latent_pi = PerToken(token_mlp(width, hidden), tokens)
        self.mu = PerToken(nn.Linear(hidden, 1), tokens)
        self.log_std = PerToken(nn.Linear(hidden, 1), tokens)


class TokenQ(nn.Module):
    """Q(s, a) = q·Σ_j MLP([h_j; a_j]) on SB3's critic input [flat tokens; action]."""

    def __init__(self, tokens: int, width: int, hidden: int):
        super().__init__()
        self.tokens, self.width = tokens, width
        self.mlp = token_mlp(width + 1, hidden)
        self.head = nn.Linear(hidden, 1)

    def forward(self, features_and_action: torch.Tensor) -> torch.Tensor:
        flat, action = features_and_action.split([self.tokens * self.width, self.tokens], dim=1)
        tokens = torch.cat([flat.view(-1, self.tokens, self.width), action.unsqueeze(-1)], dim=-1)
        return self.head(self.mlp(tokens).sum(dim=1))


class TokenCritic(ContinuousCritic):
    """SB3's twin critics with `TokenQ` networks in place of its MLPs."""

    def __init__(self, *args: Any, hidden: int = 64, **kwargs: Any):
        super().__init__(*args, net_arch=[], **kwargs)
        tokens = self.action_space.shape[0]
        width = self.features_extractor.features_dim // tokens
        self.q_networks = []
        for index in range(self.n_critics):
            network = TokenQ(tokens, width, hidden)
            self.add_module(f"qf{index}", network)
            self.q_networks.append(network)


class EarnMorePolicy(SACPolicy):
    """SACPolicy building `TokenActor` and `TokenCritic`; `hidden` is their per-token MLP width."""

    def __init__(self, *args: Any, hidden: int = 64, **kwargs: Any):
        self.hidden = hidden
        super().__init__(*args, **kwargs)

    def make_actor(self, features_extractor: BaseFeaturesExtractor | None = None) -> Actor:
        kwargs = self._update_features_extractor(self.actor_kwargs, features_extractor)
        kwargs.pop("net_arch")
        return TokenActor(**kwargs, hidden=self.hidden).to(self.device)

    def make_critic(self, features_extractor: BaseFeaturesExtractor | None = None) -> ContinuousCritic:
        kwargs = self._update_features_extractor(self.critic_kwargs, features_extractor)
        kwargs.pop("net_arch")
        return TokenCritic(**kwargs, hidden=self.hidden).to(self.device)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "hidden": self.hidden}


class EarnMoreSAC(SAC):
    """SB3's SAC plus one auxiliary step per gradient step: λ_rec·L_rec + λ_β·L_β (module docstring).

    Every rate (actor, critics, entropy coefficient, auxiliary step) follows
    η(p) = η·(f + (1 − f)·p), f = `final_lr_fraction` (1: constant), p = SB3's remaining progress
    (1 at the start, 0 at the end).
    """

    def __init__(self, *args: Any, temperature: float = 0.2, rec_weight: float = 1.0, beta_weight: float = 1.0,
                 aux_lr: float = 3e-4, cash: bool = True, final_lr_fraction: float = 1.0, **kwargs: Any):
        self.temperature, self.rec_weight, self.beta_weight, self.aux_lr = temperature, rec_weight, beta_weight, aux_lr
        self.cash = cash
        self.aux_schedule = LinearSchedule(aux_lr, aux_lr * final_lr_fraction, 1.0)
        learning_rate = kwargs["learning_rate"]
        kwargs["learning_rate"] = LinearSchedule(learning_rate, learning_rate * final_lr_fraction, 1.0)
        super().__init__(*args, **kwargs)

    def _setup_model(self) -> None:
        super()._setup_model()
        self.aux_optimizer = torch.optim.Adam(self.actor.parameters(), lr=self.aux_lr)

    @property
    def encoder(self) -> MaskedStockEncoder:
        """The actor's masked stock encoder (shared with the critics)."""
        return self.actor.features_extractor.encoder

    def auxiliary_losses(self, observations: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """(L_rec, L_β) on a batch of observations; L_β on the actor's deterministic action."""
        mask = observations["mask"]
        reconstruction = self.encoder.reconstruction_loss(observations["windows"], mask)
        action = self.actor(observations, deterministic=True)
        return reconstruction, masked_weight(action, self.temperature, mask, self.cash)

    def train(self, gradient_steps: int, batch_size: int = 64) -> None:
        reconstructions, penalties = [], []
        update_learning_rate(self.aux_optimizer, self.aux_schedule(self._current_progress_remaining))
        for _ in range(gradient_steps):
            super().train(1, batch_size)
            batch = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)
            reconstruction, penalty = self.auxiliary_losses(batch.observations)
            loss = self.rec_weight * reconstruction + self.beta_weight * penalty
            self.aux_optimizer.zero_grad()
            loss.backward()
            self.aux_optimizer.step()
            reconstructions.append(reconstruction.item())
            penalties.append(penalty.item())
        self.logger.record("train/reconstruction_loss", float(np.mean(reconstructions)))
        self.logger.record("train/masked_weight", float(np.mean(penalties)))
