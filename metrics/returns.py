"""Daily returns of a run's episodes, and the equal-weight portfolios the statistics compare.

The run itself is read by `harness.run_directory.load_run`.
"""

from __future__ import annotations

import pandas as pd

from harness.run_directory import Run
from harness.schema import EPISODE_KEYS


def daily_returns(run: Run) -> pd.DataFrame:
    """Daily simple returns of every episode: rows = dates, columns = (framework, ticker, seed).

    Returns are taken within each episode (``equity.pct_change()`` in date order), so the
    first row (the initial cash) has none and a date one ticker lacks is NaN for it only.
    """
    equity = run.equity
    returns = equity.groupby(list(EPISODE_KEYS), sort=False)["equity"].pct_change()
    rows = equity.assign(daily_return=returns).dropna(subset=["daily_return"])
    return rows.pivot(index="date", columns=list(EPISODE_KEYS), values="daily_return")


def portfolio_returns(returns: pd.DataFrame) -> pd.DataFrame:
    """Per framework, the mean over its tickers and seeds of the daily return: rows dates, columns frameworks.

    This equal-weight portfolio of a framework's episodes is its daily performance in SPA,
    MCS and the paired tests. For a framework run with several seeds it is the mean of its
    seeds' portfolios: an equal mix of its runs, less volatile than any one of them.
    """
    return returns.T.groupby(level="framework", sort=False).mean().T


def seed_portfolio_returns(returns: pd.DataFrame) -> pd.DataFrame:
    """Per (framework, seed), the mean over tickers of the daily return: one run's equal-weight portfolio."""
    return returns.T.groupby(level=["framework", "seed"], sort=False).mean().T
