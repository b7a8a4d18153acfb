"""A tiny EarnMore training run for the tests: 4 synthetic stocks, networks of width 8, a few dozen steps."""

from __future__ import annotations

from pathlib import Path

from comparators.earnmore.agent import EarnMoreSettings
from comparators.earnmore.train import CHECKPOINT_DIR, run_config, train

TINY_TICKERS = ("TEC1", "TEC2", "FIN1", "FIN2")
TINY_TEST = ("split.test.start=2019-07-01", "split.test.end=2019-07-19")
"""A three-week test window: 15 decisions."""


def tiny_settings(**changes) -> EarnMoreSettings:
    """Settings small enough for a unit test (a few seconds of CPU)."""
    values = dict(embed_dim=8, heads=2, hidden=8, timesteps=48, learning_starts=16, batch_size=8,
                  buffer_size=64, horizon=16)
    return EarnMoreSettings(**{**values, **changes})


def tiny_overrides() -> list[str]:
    """Run-config overrides of the earnmore suite for the tiny universe and test window."""
    return [f"tickers=[{','.join(TINY_TICKERS)}]", *TINY_TEST]


def train_tiny(out: Path, seed: int = 0, **changes) -> tuple[Path, dict]:
    """Train the tiny policy into `out`; (its checkpoint folder, the training facts)."""
    facts = train(tiny_settings(**changes), run_config("earnmore", tiny_overrides()), seed, out, log_every=8,
                  progress=False)
    return out / CHECKPOINT_DIR, facts
