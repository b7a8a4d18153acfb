"""Reading a run directory (docs/run_directory.md) into frames the report works on.

Nothing is recomputed from decisions: the report reads the equity curves, fills, decisions
and prices the runner wrote. A missing file or column raises one ``DataError`` line that
names the file and what is missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from market.errors import DataError
from market.execution import EQUITY_COLUMNS, TRADE_COLUMNS
from market.runner import EPISODE_KEYS

REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "equity.parquet": ("date", *EPISODE_KEYS, *EQUITY_COLUMNS),
    "decisions.parquet": (
        "date", *EPISODE_KEYS, "action", "llm_calls", "prompt_tokens", "completion_tokens", "wall_s",
    ),
    "prices.parquet": ("date", "ticker", "close"),
    "trades.csv": ("date", *EPISODE_KEYS, *TRADE_COLUMNS[1:]),
    "metrics.csv": (*EPISODE_KEYS, "TR", "ARR", "SR_day", "SR_ann", "MDD"),
}


@dataclass(frozen=True)
class Run:
    """The tables of one run directory, dates parsed; equity rows in date order, episodes in the runner's order."""

    path: Path
    info: dict
    equity: pd.DataFrame
    decisions: pd.DataFrame
    prices: pd.DataFrame
    trades: pd.DataFrame
    metrics: pd.DataFrame

    @property
    def periods_per_year(self) -> float:
        """``run.json`` ``periods_per_year``; 252 when the run does not say."""
        return float(self.info.get("periods_per_year", 252.0))

    @property
    def frameworks(self) -> list[str]:
        """Frameworks in the order they first appear in the equity table."""
        return list(dict.fromkeys(self.equity["framework"]))

    @property
    def tickers(self) -> list[str]:
        """Tickers in the order they first appear in the equity table."""
        return list(dict.fromkeys(self.equity["ticker"]))


def _read(run_dir: Path, name: str) -> pd.DataFrame:
    path = run_dir / name
    if not path.is_file():
        raise DataError(f"{path}: missing (expected in a run directory, see docs/run_directory.md)")
    frame = pd.read_parquet(path) if name.endswith(".parquet") else pd.read_csv(path)
    missing = [column for column in REQUIRED_COLUMNS[name] if column not in frame.columns]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}")
    if "date" in frame.columns:
        frame["date"] = pd.to_datetime(frame["date"])
    return frame


def load_run(run_dir: Path | str) -> Run:
    """Read run.json, equity.parquet, decisions.parquet, prices.parquet, trades.csv and metrics.csv."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise DataError(f"{run_dir}: not a run directory")
    info_path = run_dir / "run.json"
    info = json.loads(info_path.read_text()) if info_path.is_file() else {}
    equity = _read(run_dir, "equity.parquet").sort_values("date", kind="stable")
    if equity.empty:
        raise DataError(f"{run_dir / 'equity.parquet'}: no rows")
    return Run(
        path=run_dir,
        info=info,
        equity=equity.reset_index(drop=True),
        decisions=_read(run_dir, "decisions.parquet"),
        prices=_read(run_dir, "prices.parquet").sort_values(["ticker", "date"]).reset_index(drop=True),
        trades=_read(run_dir, "trades.csv"),
        metrics=_read(run_dir, "metrics.csv"),
    )


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
