"""A tiny universe and an (untrained) MASSA checkpoint on it, for the plugin and checkpoint tests."""

from __future__ import annotations

from pathlib import Path

from bars import random_bars

from comparators.checkpoint import save_checkpoint
from comparators.massa.agent import policy_config
from comparators.massa.config import MassaConfig
from comparators.massa.inputs import InputScaling, view_bars
from comparators.massa.learner import Policy
from comparators.massa.observations import CONTEXT_WIDTH, SLEEVE_FEATURES
from market.data import MarketData
from market.view import MarketView

UNIVERSE = ("AAA", "BBB", "CCC")
MARKET = MarketData(bars={t: random_bars(200, seed=i) for i, t in enumerate(UNIVERSE)})
DATES = MARKET.bars["AAA"].index
TRAIN_START, TRAIN_END, SEEN_UNTIL = DATES[30], DATES[100], DATES[120]


def scaling(window: int = 2) -> InputScaling:
    view = MarketView(MARKET, TRAIN_END)
    return InputScaling.fit(view_bars(view, UNIVERSE), TRAIN_START, TRAIN_END, window)


def write_checkpoint(folder: Path, variant: str = "massa", seed: int = 0) -> tuple[Policy, str]:
    """An untrained policy of `variant` on the tiny universe, saved as a checkpoint; (policy, fingerprint)."""
    import torch

    torch.manual_seed(seed)
    config = MassaConfig(variant=variant, window=2, signal_dim=2, hidden=8, critic_hidden=8)
    fitted = scaling(config.window)
    observation = 2 * len(fitted.features.names) + len(SLEEVE_FEATURES)
    policy = Policy(config, len(UNIVERSE), observation, CONTEXT_WIDTH)
    stored = policy_config(config, UNIVERSE, observation, CONTEXT_WIDTH, fitted, SEEN_UNTIL)
    return policy, save_checkpoint(folder, policy, stored, {"seed": seed, "variant": variant})
