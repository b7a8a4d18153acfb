"""`run_benchmark.run` in the test's own process: the suite composed with Hydra's compose API from the
package's configs, as the command line would compose it, then run into a folder. Cheaper than a
process per test (no interpreter, torch or Hydra start-up); the command line itself, its exit codes
and its stderr are tested by the few tests that start `run_benchmark.py`."""

from __future__ import annotations

from pathlib import Path

from hydra import compose, initialize_config_module
from omegaconf import DictConfig

import run_benchmark

QUIET = ("progress=false", "report=false", "viewer=false")


def composed(*overrides: str) -> DictConfig:
    """The run config of `overrides` (a suite named with `+suite=...`), without Hydra's own node."""
    with initialize_config_module(config_module="configs", version_base="1.3"):
        return compose(config_name="config", overrides=[*QUIET, *overrides])


def run_in_process(run_dir: Path, *overrides: str) -> Path:
    """Run the suite of `overrides` into `run_dir` (created); returns the path of its metrics.csv."""
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_benchmark.run(composed(*overrides), run_dir)
