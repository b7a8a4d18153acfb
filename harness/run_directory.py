"""The run directory (docs/run_directory.md): its one writer and its one reader.

The runner's results go in through `write_episodes` (equity.parquet, trades.csv,
decisions.parquet, prices.parquet, and overlays.parquet in a run with an overlay); the report and
every other reader take them out through `load_run` (and `load_overlays`). Nothing is recomputed
from decisions on the way out. A missing file or column raises
one ``DataError`` line that names the file and what is missing. The columns are those of
`harness.schema`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from core.errors import DataError
from harness.journal import JournalEntry
from harness.runner import RunResult
from harness.schema import EPISODE_KEYS, REQUIRED_COLUMNS, EpisodeKey
from market.calendar import bar_noun
from market.data import BAR_COLUMNS, MarketData

OVERLAYS = "overlays.parquet"
"""One row per decision of a run with an overlay (`harness.overlay.book`): original and executed decision, parts fired."""

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
    """One row per fill: date, framework, ticker, seed, side, shares, price, notional, fee (and instrument)."""
    return _keyed({k: e.trades for k, e in result.episodes.items()})


def long_frame(result: RunResult, part: str) -> pd.DataFrame | None:
    """The episodes' `positions` or `flows` (long format, keyed), or None when the task keeps none (trading)."""
    parts = {k: getattr(e, part) for k, e in result.episodes.items() if getattr(e, part) is not None}
    return _keyed(parts) if parts else None


def decision_row(entry: JournalEntry) -> dict:
    """The flat summary of one decision that decisions.parquet holds."""
    decision, trace = entry.decision, entry.decision.trace
    return {
        "date": entry.date, "framework": entry.framework, "ticker": entry.ticker, "seed": entry.seed,
        "action": decision.action.value if decision.action is not None else None,
        "target": decision.target, "confidence": decision.confidence,
        **({"weights": json.dumps(decision.weights, sort_keys=True)} if decision.weights is not None else {}),
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


def decision_events(result: RunResult, decisions: pd.DataFrame) -> pd.Series:
    """Per decisions row, the account events of the bar its decision was filled on ("kind: detail; ..."), or None.

    A decision of bar t is in force on bar t+1: an event of bar t+1 is written on the decision of bar t."""
    text: dict[tuple, str] = {}
    for key, episode in result.episodes.items():
        if episode.events is None or episode.events.empty:
            continue
        stamps = episode.equity.index
        for row in episode.events.itertuples():
            i = stamps.get_loc(row.date)
            if i > 0:
                where = (key.framework, key.ticker, key.seed, stamps[i - 1])
                text[where] = "; ".join(filter(None, [text.get(where), f"{row.kind}: {row.detail}"]))
    keys = zip(decisions["framework"], decisions["ticker"], decisions["seed"], decisions["date"])
    return pd.Series([text.get(k) for k in keys], index=decisions.index, dtype=object)


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
    """Write equity.parquet, trades.csv, decisions.parquet and prices.parquet (and positions.parquet,
    flows.parquet and events.csv for tasks that keep them); return equity and trades."""
    equity, trades = equity_frame(result), trades_frame(result)
    for part in ("positions", "flows"):
        frame = long_frame(result, part)
        if frame is not None:
            frame.to_parquet(run_dir / f"{part}.parquet", index=False)
    events = long_frame(result, "events")
    decisions = pd.DataFrame([decision_row(e) for e in result.decisions])
    if events is not None:
        events.to_csv(run_dir / "events.csv", index=False)
        decisions["events"] = decision_events(result, decisions)
    equity.to_parquet(run_dir / "equity.parquet", index=False)
    trades.to_csv(run_dir / "trades.csv", index=False)
    decisions.to_parquet(run_dir / "decisions.parquet", index=False)
    prices_frame(data, tickers, start, end).to_parquet(run_dir / "prices.parquet", index=False)
    if result.overlay_records:
        overlays = pd.DataFrame(result.overlay_records)
        keys = ["date", *EPISODE_KEYS]
        overlays[keys + [c for c in overlays.columns if c not in keys]].to_parquet(run_dir / OVERLAYS, index=False)
    return equity, trades


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
    def bar_noun(self) -> str:
        """"day" or "bar" (`market.calendar.bar_noun`) of ``run.json`` ``calendar.frequency``; "day" when unsaid."""
        frequency = (self.info.get("calendar") or {}).get("frequency")
        return bar_noun(pd.Timedelta(frequency)) if frequency is not None else "day"

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


def load_overlays(run_dir: Path | str) -> pd.DataFrame | None:
    """overlays.parquet of the run in `run_dir`, dates parsed; None for a run without an overlay (no
    enabled part in run.json's `overlay`)."""
    info_path = Path(run_dir) / "run.json"
    info = json.loads(info_path.read_text()) if info_path.is_file() else {}
    if not any(part.get("enabled") for part in info.get("overlay", {}).values()):
        return None
    return _read(Path(run_dir), OVERLAYS)
