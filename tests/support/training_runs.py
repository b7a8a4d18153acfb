"""Short training runs for tests: the cpu_tiny recipe cut down to seconds (the default tiny model,
one ticker, 2 prompts x 2 completions per step, no warm start, a checkpoint every step)."""

from __future__ import annotations

from pathlib import Path

from hydra import compose, initialize_config_dir

from cli_helpers import ROOT

FAST = ["tickers=[ALFA]", "train.warm_start.enabled=false", "train.monitoring.validate_every=0",
        "train.model.tiny.num_hidden_layers=2", "train.model.tiny.hidden_size=64",
        "train.model.tiny.intermediate_size=128", "train.optimisation.num_generations=2",
        "train.optimisation.prompts_per_step=2", "train.optimisation.micro_batch_size=4",
        "train.optimisation.learning_rate=1e-3", "train.checkpoints.save_steps=1"]
"""Overrides of train_single_agent.py for a run of a few seconds per step."""


def fast_config(output_dir: Path, steps: int, *overrides: str):
    """The composed config of train_single_agent.py with `FAST`, writing to `output_dir`."""
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        return compose("train_single_agent", overrides=[*FAST, f"output_dir={output_dir}",
                                                        f"train.optimisation.max_steps={steps}", *overrides])
