"""A trained MASSA policy as it is executed, and its checkpoint.

`MassaAgent.step` is the one decision path of the greedy validation rollout in training and of
the plugin: observations at the close (`observations.observe`), the policy's weight changes with
the signal's mode (no exploration noise; the random-signal control draws its signal from a generator
seeded by (seed, date), so a resumed run draws the same), then pro-rata scaling (`orders.scale_orders`).

The checkpoint (`comparators.checkpoint`) holds the policy's weights only (actors and signal
network, or the central policy: never a critic) and the config that rebuilds it: the
`MassaConfig`, the universe in order, the observation and context widths, the input scaling, the
last date training saw and how the signal bounds its log σ (`SIGNAL_LOG_STD`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from comparators.checkpoint import Checkpoint, load_checkpoint
from comparators.massa.config import MassaConfig
from comparators.massa.inputs import InputScaling
from comparators.massa.learner import Policy
from comparators.massa.observations import PortfolioMemory, observe
from comparators.massa.orders import Orders, scale_orders
from core.errors import DataError
from market.portfolio import PortfolioState

SIGNAL_LOG_STD = "tanh"
"""How the signal network bounds log σ (`networks.bounded_log_std`), written into each checkpoint's
config: a checkpoint whose learned signal was trained under a clamp (without this key) is refused."""


def build_policy(config: dict) -> Policy:
    """The policy a checkpoint's config describes (its weights not loaded)."""
    return Policy(MassaConfig.model_validate(config["massa"]), int(config["agents"]), int(config["observation"]),
                  int(config["context"]))


def policy_config(massa: MassaConfig, instruments: tuple[str, ...], observation: int, context: int,
                  scaling: InputScaling, seen_until: pd.Timestamp) -> dict:
    """The checkpoint config of a policy (module docstring)."""
    return {"massa": massa.model_dump(), "instruments": list(instruments), "agents": len(instruments),
            "observation": observation, "context": context, "scaling": scaling.to_dict(),
            "seen_until": str(seen_until.date()), "signal_log_std": SIGNAL_LOG_STD}


@dataclass
class Step:
    """One executed bar: the observations, the agents' raw weight changes and the scaled orders."""

    observations: np.ndarray
    context: np.ndarray
    actions: np.ndarray
    orders: Orders


@dataclass
class MassaAgent:
    """A policy, its inputs' scaling and the portfolio memory of one episode."""

    policy: Policy
    instruments: tuple[str, ...]
    max_gross: float
    seed: int = 0
    memory: PortfolioMemory = field(init=False)

    def __post_init__(self) -> None:
        self.policy.eval()
        self.reset()

    def reset(self) -> None:
        self.memory = PortfolioMemory(self.instruments)

    def step(self, date: pd.Timestamp, windows: np.ndarray, market: np.ndarray, portfolio: PortfolioState) -> Step:
        """The bar's decision from its asset windows, market context and the portfolio at its close."""
        o, c, weights = observe(windows, market, self.memory, portfolio)
        generator = torch.Generator().manual_seed(self.seed * 1_000_003 + pd.Timestamp(date).toordinal())
        with torch.no_grad():
            actions = self.policy.act(torch.as_tensor(o)[None], torch.as_tensor(c)[None], generator=generator)[0].numpy()
        return Step(o, c, actions, scale_orders(weights, actions, self.max_gross))


def load_agent(folder: str | Path) -> tuple[Checkpoint, InputScaling]:
    """The checkpoint in `folder` and its input scaling; a learned signal trained under a clamp is refused."""
    checkpoint = load_checkpoint(folder, build_policy)
    if checkpoint.model.config.signal == "learned" and checkpoint.config.get("signal_log_std") != SIGNAL_LOG_STD:
        raise DataError(f"{folder}: its signal network was trained with log σ clamped; the executed network bounds "
                        f"it by {SIGNAL_LOG_STD} (networks.bounded_log_std): retrain it (python -m comparators.massa.train)")
    return checkpoint, InputScaling.from_dict(checkpoint.config["scaling"])
