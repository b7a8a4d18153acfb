"""`MassaConfig`: one training run of MASSA or one of its controls (every field documented).

The variant fixes three parts (docs/massa.md):

| variant          | signal                                   | critics                     | policy             |
|------------------|------------------------------------------|-----------------------------|--------------------|
| massa            | learned, entropy-regularised, context    | central Q_i(x, a)           | per-asset actors   |
| no_signal        | none                                     | local Q_i(o_i, a_i)         | per-asset actors   |
| constant_signal  | a learned vector per agent, no context   | central                     | per-asset actors   |
| random_signal    | N(0, I), fresh every bar, no context     | central                     | per-asset actors   |
| maddpg           | none                                     | central                     | per-asset actors   |
| central          | none                                     | one Q(x, a)                 | one policy over x  |
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Variant = Literal["massa", "no_signal", "constant_signal", "random_signal", "maddpg", "central"]
SIGNALS: dict[str, str | None] = {"massa": "learned", "constant_signal": "constant", "random_signal": "random",
                                  "no_signal": None, "maddpg": None, "central": None}
CRITICS: dict[str, str] = {"massa": "central", "constant_signal": "central", "random_signal": "central",
                           "maddpg": "central", "no_signal": "local", "central": "joint"}


class MassaConfig(BaseModel):
    """Networks, learning and the reward of one training run."""

    model_config = ConfigDict(extra="forbid")

    variant: Variant = "massa"
    window: int = Field(2, ge=1)
    """Bars of each asset's feature table in its agent's observation (comparators.features)."""
    signal_dim: int = Field(4, ge=1)
    """D, the width of each agent's signal."""
    hidden: int = Field(32, ge=1)
    """Hidden width of actors, signal network and the central policy."""
    critic_hidden: int = Field(32, ge=1)
    max_step: float = Field(0.05, gt=0, le=1)
    """m: the largest change of a sleeve's weight per bar (a_i ∈ [−m, m])."""
    entropy_coef: float = Field(0.01, ge=0)
    """α of the signal loss α·log p(φ|c) − Q."""
    gamma: float = Field(0.95, gt=0, lt=1)
    tau: float = Field(0.01, gt=0, le=1)
    """Polyak rate of the target networks."""
    actor_lr: float = Field(1e-3, gt=0)
    critic_lr: float = Field(1e-3, gt=0)
    signal_lr: float = Field(1e-3, gt=0)
    grad_clip: float = Field(1.0, gt=0)
    batch_size: int = Field(64, ge=2)
    buffer_size: int = Field(50_000, ge=100)
    episodes: int = Field(16, ge=1)
    """Training episodes, each a random stretch of the training window starting from cash."""
    episode_bars: int = Field(80, ge=10)
    warmup_steps: int = Field(200, ge=0)
    """Steps of uniformly random actions before learning starts."""
    update_every: int = Field(2, ge=1)
    """Environment steps per gradient update (of critics, signal and actors)."""
    noise_start: float = Field(0.3, ge=0)
    """Std of the Gaussian exploration noise, as a fraction of `max_step`, decayed linearly to `noise_end`."""
    noise_end: float = Field(0.05, ge=0)
    reward_scale: float = Field(100.0, gt=0)
    drawdown_penalty: float = Field(1.0, ge=0)
    """λ of the reward r_t = log(E_{t+1}/E_t) − λ·max(DD_{t+1} − DD_t, 0) (before `reward_scale`)."""
    eval_every: int = Field(4, ge=1)
    """Episodes between greedy evaluations on the validation window; the best one is kept."""

    @property
    def signal(self) -> str | None:
        return SIGNALS[self.variant]

    @property
    def critics(self) -> str:
        return CRITICS[self.variant]
