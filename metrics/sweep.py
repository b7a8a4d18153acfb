"""The configurations of each framework that a sweep tried, for the deflated Sharpe ratio.

A sweep is a set of run directories of one suite that differ in configuration (a Hydra
multirun such as ``-m frameworks.macd.fast=8,12,16``). The configurations of framework F are
its distinct configurations (``run.json`` ``frameworks`` name -> config hash; without one, each
run counts) among the runs that contain F: this run's first, then the sweep's in the order
given. Each contributes the per-day Sharpe ratio (SR_day) of F's equal-weight portfolio in
that run. Unlike frameworks side by side in one run are not configurations of one another.
"""

from __future__ import annotations

import numpy as np

from harness.run_directory import Run
from metrics.performance import sharpe_ratio
from metrics.returns import daily_returns, portfolio_returns


def _configuration(run: Run, framework: str) -> str:
    """The config hash of ``framework`` in ``run``, or the run's path when ``run.json`` has none."""
    return str(run.info.get("frameworks", {}).get(framework, run.path.resolve()))


def configuration_sharpes(run: Run, sweep: list[Run]) -> dict[str, np.ndarray]:
    """Per framework of ``run``: SR_day of each distinct configuration of it in ``run`` and ``sweep``."""
    runs = [run, *[other for other in sweep if other.path.resolve() != run.path.resolve()]]
    portfolios = [portfolio_returns(daily_returns(r)) for r in runs]
    trials: dict[str, np.ndarray] = {}
    for framework in run.frameworks:
        seen: dict[str, float] = {}
        for other, portfolio in zip(runs, portfolios):
            if framework in portfolio:
                seen.setdefault(_configuration(other, framework), sharpe_ratio(portfolio[framework].to_numpy()))
        trials[framework] = np.array(list(seen.values()))
    return trials
