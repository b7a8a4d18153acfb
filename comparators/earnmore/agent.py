"""An EarnMore policy as a checkpoint: its settings, the networks they build, and its weights on a pool.

`EarnMoreSettings` is everything a training run depends on besides the market and the seed; a
checkpoint's config is its settings plus the universe (`tickers`, in token order) and the
feature `standardiser`. `build_policy(config)` rebuilds the SB3 policy (actor, twin critics and
their targets) for `comparators.checkpoint.load_checkpoint`. `pool_weights` is the trading step:
the deterministic action (the squashed mean, as the original's `forward_action`) turned into
weights with the stocks outside the pool masked — in the encoder (their tokens are the mask
token) and in the weights (exactly 0).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field

from comparators.checkpoint import Checkpoint, load_checkpoint
from comparators.earnmore.actions import action_weights
from comparators.earnmore.env import action_space, observation_space
from comparators.earnmore.policy import EarnMorePolicy, TokenExtractor


class EarnMoreSettings(BaseModel):
    """Training settings (defaults: the CPU-sized configuration of docs/earnmore.md)."""

    model_config = ConfigDict(extra="forbid")

    days: int = Field(10, ge=1)
    """Feature rows per token (the original's `days`)."""
    channels: dict[str, str] = {"news": "sentiment"}
    """Record channels added as feature columns: channel -> field ({} for OHLCV only)."""
    shuffle_seed: int | None = None
    """The control: shuffle the channel columns across stocks per date with this seed (None: off)."""
    embed_dim: int = Field(16, ge=4)
    heads: int = Field(2, ge=1)
    mlp_ratio: float = Field(2.0, gt=0)
    hidden: int = Field(16, ge=4)
    """Width of the per-token MLPs of actor and critics."""
    stock_identity: bool = True
    """A learned position embedding per stock in the encoder (the original's). False: every stock goes through
    the same function of its own window and the others' (permutation-equivariant), so the policy cannot tie a
    weight to a stock's place in the universe, e.g. to the stocks that rose in the training window."""
    shared_encoder: bool = False
    """One encoder for actor and critics (trained by the actor and auxiliary losses, read detached by the
    critics), or (False) the critics' own encoder, trained by the critic loss (SB3's default for SAC)."""
    temperature: float = Field(0.2, gt=0)
    """T of w = softmax(a/T), a ∈ [−1, 1]^{N+1}."""
    cash: bool = False
    """Whether the policy may hold cash (the original's CLS weight); False: always fully invested."""
    timesteps: int = Field(30_000, ge=1)
    learning_starts: int = Field(200, ge=0)
    batch_size: int = Field(32, ge=1)
    buffer_size: int = Field(10_000, ge=1)
    train_freq: int = Field(1, ge=1)
    """Environment steps per SAC gradient step."""
    ent_coef_init: float = Field(0.01, gt=0)
    """Initial entropy coefficient α of the automatic tuning (SB3 `ent_coef="auto_<α>"`)."""
    learning_rate: float = Field(1e-3, gt=0)
    aux_learning_rate: float = Field(1e-3, gt=0)
    final_lr_fraction: float = Field(1.0, gt=0, le=1)
    """Every learning rate (SAC's and the auxiliary step's) falls linearly from its value to this fraction of
    it over the run (1: constant)."""
    gamma: float = Field(0.0, ge=0, le=1)
    tau: float = Field(0.005, gt=0, le=1)
    rec_weight: float = Field(1.0, ge=0)
    """λ_rec of the reconstruction loss."""
    beta_weight: float = Field(1.0, ge=0)
    """λ_β of the penalty on weight placed on masked stocks."""
    reward_scale: float = Field(100.0, gt=0)
    excess: bool = True
    """Reward the log return in excess of the unmasked stocks at equal weight (env.PoolEnv)."""
    horizon: int = Field(64, ge=1)
    select_every: int = Field(2_000, ge=0)
    """Score the policy on the validation split every this many steps and keep the best weights
    (`selection`); 0: keep the last."""
    fee: float = Field(1e-3, ge=0)
    """Fee per side as a fraction (the task's fee_bps / 1e4)."""
    mask_mean: float = 0.4
    mask_std: float = 0.3
    mask_low: float = 0.0
    mask_high: float = 0.8
    """The training mask ratio ρ ~ TruncNormal(mask_mean, mask_std) on [mask_low, mask_high] (the original:
    0.7, 0.1 on [0.6, 0.8], which never shows the policy the whole universe it serves unmasked)."""

    def extractor_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of `policy.TokenExtractor` (the encoder's shape)."""
        return {"embed_dim": self.embed_dim, "heads": self.heads, "mlp_ratio": self.mlp_ratio,
                "stock_identity": self.stock_identity}


def build_policy(config: dict[str, Any]) -> EarnMorePolicy:
    """The SB3 policy a checkpoint's config describes (settings + `tickers` + `n_features`)."""
    settings = EarnMoreSettings(**{k: v for k, v in config.items() if k in EarnMoreSettings.model_fields})
    n_stocks = len(config["tickers"])
    return EarnMorePolicy(observation_space(n_stocks, settings.days, int(config["n_features"])),
                          action_space(n_stocks), lambda _: settings.learning_rate,
                          features_extractor_class=TokenExtractor,
                          features_extractor_kwargs=settings.extractor_kwargs(),
                          share_features_extractor=settings.shared_encoder, hidden=settings.hidden)


def load_policy(folder: str | Path) -> Checkpoint:
    """The checkpoint in `folder` with its policy rebuilt (one line when missing or damaged)."""
    return load_checkpoint(folder, build_policy)


def pool_weights(policy: EarnMorePolicy, windows: np.ndarray, outside: np.ndarray, temperature: float,
                 cash: bool = True) -> np.ndarray:
    """Weights (B, N+1) on cash + N stocks for windows (B, N, W, F), `outside` (B, N) 1 where a stock is
    not in the pool: masked in the encoder and given exactly 0 weight (softmax in float64, so that the
    weights sum to 1 within ~1e-15)."""
    mask = torch.as_tensor(outside, dtype=torch.float32)
    observation = {"windows": torch.as_tensor(windows, dtype=torch.float32), "mask": mask}
    with torch.no_grad():
        action = policy.actor(observation, deterministic=True)
        return action_weights(action.double(), temperature, mask.double(), cash).numpy()
