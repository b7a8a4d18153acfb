"""Write a run's episodes and decisions into its run directory (see docs/run_directory.md)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from market.data import BAR_COLUMNS, MarketData
from market.journal import JournalEntry
from market.runner import EPISODE_KEYS, EpisodeKey, RunResult

LABEL_HORIZON_BARS = 10
"""Bars after the test window kept in prices.parquet, for forward-looking decision labels."""


def _keyed(parts: dict[EpisodeKey, pd.DataFrame]) -> pd.DataFrame:
    """The episode tables `parts` stacked, with framework, ticker and seed columns after the date."""
    keyed = [part.assign(framework=key.framework, ticker=key.ticker, seed=key.seed) for key, part in parts.items()]
    frame = pd.concat(keyed, ignore_index=True)
    rest = [c for c in frame.columns if c not in ("date", *EPISODE_KEYS)]
    return frame[["date", *EPISODE_KEYS, *rest]]


def equity_frame(result: RunResult) -> pd.DataFrame:
    """One row per framework × ticker × seed × bar: date, framework, ticker, seed, equity, cash, position."""
    return _keyed({k: e.equity.rename_axis("date").reset_index() for k, e in result.episodes.items()})


def trades_frame(result: RunResult) -> pd.DataFrame:
    """One row per fill: date, framework, ticker, seed, side, shares, price, notional, fee."""
    return _keyed({k: e.trades for k, e in result.episodes.items()})


def decision_row(entry: JournalEntry) -> dict:
    """The flat summary of one decision that decisions.parquet holds."""
    decision, trace = entry.decision, entry.decision.trace
    return {
        "date": entry.date, "framework": entry.framework, "ticker": entry.ticker, "seed": entry.seed,
        "action": decision.action.value if decision.action is not None else None,
        "target": decision.target, "confidence": decision.confidence,
        "llm_calls": len(trace.llm_calls),
        "prompt_tokens": sum(c.prompt_tokens for c in trace.llm_calls),
        "completion_tokens": sum(c.completion_tokens for c in trace.llm_calls),
        "llm_latency_s": sum(c.latency_s for c in trace.llm_calls),
        "tool_calls": len(trace.tool_calls),
        "lookahead_calls": sum(1 for c in trace.tool_calls if c.lookahead),
        "parse_failures": len(trace.parse_failures),
        "error": trace.error,
        "wall_s": entry.wall_s,
    }


def prices_frame(data: MarketData, tickers: list[str], start, end) -> pd.DataFrame:
    """Bars of the test window plus `LABEL_HORIZON_BARS` after it, long format."""
    parts = []
    for ticker in tickers:
        frame = data.frame(ticker)
        lo = frame.index.searchsorted(pd.Timestamp(start))
        hi = frame.index.searchsorted(pd.Timestamp(end), side="right") + LABEL_HORIZON_BARS
        part = frame.iloc[lo:hi][list(BAR_COLUMNS)].rename_axis("date").reset_index()
        part.insert(1, "ticker", ticker)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def write_episodes(run_dir: Path, result: RunResult, data: MarketData, tickers: list[str],
                   start, end) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write equity.parquet, trades.csv, decisions.parquet and prices.parquet; return equity and trades."""
    equity, trades = equity_frame(result), trades_frame(result)
    equity.to_parquet(run_dir / "equity.parquet", index=False)
    trades.to_csv(run_dir / "trades.csv", index=False)
    pd.DataFrame([decision_row(e) for e in result.decisions]).to_parquet(run_dir / "decisions.parquet", index=False)
    prices_frame(data, tickers, start, end).to_parquet(run_dir / "prices.parquet", index=False)
    return equity, trades
