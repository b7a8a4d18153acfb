"""Runs for the fault tests of the run side: a small market and a runner that journals into one file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from bars import random_bars

from harness.execution import ExecutionConfig
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunResult, RunSpec
from market.data import MarketData

BARS = random_bars(60, start="2021-01-04")
START, END = BARS.index[40], BARS.index[49]
DAYS = list(BARS.index[40:50])
"""The test window: 10 bars of one ticker, AAA."""


class Journaled:
    """Runs frameworks over the test window into one journal file; keeps every warning line."""

    def __init__(self, path: Path):
        self.path = path
        self.warnings: list[str] = []

    def __call__(self, frameworks: dict[str, object], mode: str = "discrete", **spec) -> RunResult:
        execution = ExecutionConfig(mode=mode, allow_short=mode == "target")
        run_spec = RunSpec(tickers=["AAA"], seeds=[0], start=START, end=END, execution=execution, **spec)
        self.warnings.clear()
        with Journal(self.path, warn=self.warnings.append) as journal:
            runner = EpisodeRunner(MarketData(bars={"AAA": BARS}), run_spec, journal, progress=False,
                                   warn=self.warnings.append)
            return runner.run([FrameworkEntry(name, framework, config_hash=name) for name, framework in frameworks.items()])


def day(result: RunResult, framework: str, index: int):
    """The journal entry of `framework` on the index-th day of the window."""
    return next(e for e in result.decisions if e.framework == framework and e.date == DAYS[index])


def on(date: pd.Timestamp) -> str:
    return f"{date:%Y-%m-%d}"
