"""The settings of one MacroHFT training run (`configs/macrohft/*.yaml`, overridable on the command line).

Defaults are the original's (`RL/agent/low_level.py`, `high_level.py`, `scripts/*.sh`) where they
carry over; what differs, and why, is in docs/macrohft.md and on each field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.config_keys import typed_config
from core.errors import ConfigError, MissingFileError


class MacroHFTSettings(BaseModel):
    """Every knob of `python -m comparators.macrohft.train` (units in each description)."""

    model_config = ConfigDict(extra="forbid")

    data: str = Field("intraday", description="configs/data/<name>.yaml: the market")
    split: str = Field("intraday", description="configs/split/<name>.yaml: train / valid / test windows")
    ticker: str = Field("SYNBTC", description="the instrument trained on")
    positions: list[float] = Field(default_factory=lambda: [0.0, 1.0], min_length=2,
                                   description="target leverage of each action; the original's two: flat, long")
    fee_bps: float = Field(5.0, ge=0, description="fee per unit of traded notional in the reward, bps (the task's taker fee)")
    teacher_fee_bps: float = Field(10.0, ge=0, description="the DP teacher's fee, bps (the original's teacher uses "
                                                            "10 bps against its environment's 2 bps: a calmer teacher)")
    reward_scale: float = Field(1000.0, gt=0, description="reward = scale x (leverage x bar return − fee x |Δleverage|)")
    gamma: float = Field(0.99, gt=0, le=1, description="discount per bar, of the agents and the teacher")
    chunk_bars: int = Field(720, ge=64, description="bars per chunk (the original: 4,320 minutes; 12 h here so the "
                                                     "31-day train split has enough chunks per condition)")
    subagents: Literal["paper", "grid"] = Field("paper", description="paper: 3 trend + 3 volatility sub-agents (the "
                                                                      "original's code); grid: 3 trend x 2 volatility")
    trend_quantiles: tuple[float, ...] = (0.35, 0.65)
    volatility_quantiles: tuple[float, ...] = Field((0.35, 0.65), description="inner quantile edges (paper); "
                                                                               "grid uses (0.5,)")
    tail: float = Field(0.05, ge=0, lt=0.35, description="training chunks beyond these quantiles are outliers, left "
                                                          "out of the sub-agents' training (as the original)")
    hidden: int = Field(64, ge=4, description="sub-agent width (the original's 64)")
    hyper_hidden: int = Field(32, ge=4, description="hyper-agent width (the original's 32)")
    lr: float = Field(3e-4, gt=0, description="Adam step (the original: 1e-4 over 15 epochs of 4,320-bar chunks)")
    batch_size: int = Field(256, ge=8, description="replay batch (the original: 512)")
    buffer_size: int = Field(200_000, ge=1000, description="replay capacity in transitions")
    updates_per_transition: float = Field(0.05, gt=0, description="gradient steps per stored transition (the "
                                                                     "original: 10 every 100 steps = 0.1)")
    tau: float = Field(0.005, gt=0, le=1, description="soft target update")
    sub_epochs: int = Field(6, ge=1, description="passes over a condition's chunks per sub-agent (the original: 15)")
    sub_epsilon: tuple[float, float, int] = Field((0.5, 0.1, 5), description="start, end, decay epochs")
    kl_alpha: float = Field(1.0, ge=0, description="sub-agent loss = TD + alpha KL(softmax Q_DP | softmax Q) (the "
                                                    "original tunes it per sub-agent: 0, 1 or 4)")
    hyper_epochs: int = Field(3, ge=1, description="passes over the train split of the hyper-agent (the original: 15)")
    hyper_epsilon: tuple[float, float, int] = Field((0.7, 0.3, 5), description="start, end, decay epochs")
    memory_weight: float = Field(0.5, ge=0, description="hyper-agent loss weight of (Q − q_mem)^2 (the original's alpha)")
    hyper_kl_beta: float = Field(5.0, ge=0, description="hyper-agent loss weight of the KL term (the original's beta)")
    memory_capacity: int = Field(4320, ge=8, description="episodic memory entries (FIFO)")
    memory_k: int = Field(5, ge=1, description="neighbours of a memory lookup")
    seed: int = 0
    threads: int = Field(1, ge=1, description="torch CPU threads (1: on a shared machine more threads spin-wait)")

    @model_validator(mode="after")
    def _grid(self) -> MacroHFTSettings:
        if self.subagents == "grid" and len(self.volatility_quantiles) != 1:
            raise ConfigError("macrohft: subagents=grid needs one volatility quantile edge, e.g. volatility_quantiles=[0.5]")
        return self

    @property
    def fee(self) -> float:
        return self.fee_bps / 1e4

    @property
    def teacher_fee(self) -> float:
        return self.teacher_fee_bps / 1e4


def load_settings(path: Path | None, overrides: dict[str, object]) -> MacroHFTSettings:
    """The settings of YAML file `path` (or the defaults) with `overrides` on top; one line on a bad key."""
    values: dict[str, object] = {}
    if path is not None:
        if not path.is_file():
            raise MissingFileError(f"{path}: no such MacroHFT settings file")
        values = yaml.safe_load(path.read_text()) or {}
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: expected a mapping of settings")
    return typed_config(MacroHFTSettings, {**values, **overrides}, str(path or "macrohft settings"))
