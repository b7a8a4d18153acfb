"""The decision journal: an append-only SQLite file (WAL mode), one row per decision.

Key: (framework config hash, ticker, date, seed). Each batch of decisions commits in one
transaction, so a run killed at any point loses at most the decisions in flight, and a rerun
with the same command reads the journaled decisions back instead of recomputing them. The
full trace is stored as JSON and stays queryable with plain SQL:

    SELECT date, json_extract(decision, '$.action') FROM decisions WHERE ticker = 'NVDA';
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from market.decision import Decision

_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    framework_hash TEXT NOT NULL,
    framework TEXT NOT NULL,
    ticker TEXT NOT NULL,
    date TEXT NOT NULL,
    seed INTEGER NOT NULL,
    wall_s REAL NOT NULL,
    decision TEXT NOT NULL,
    PRIMARY KEY (framework_hash, ticker, date, seed)
)
"""


def _date_key(date: pd.Timestamp) -> str:
    """How a decision date is stored in the `date` column."""
    return date.strftime("%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True)
class JournalEntry:
    """One journaled decision and the wall time (s) the framework spent on it."""

    framework: str
    framework_hash: str
    ticker: str
    date: pd.Timestamp
    seed: int
    decision: Decision
    wall_s: float


class Journal:
    """Append-only store of decisions keyed by (framework hash, ticker, date, seed)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def append(self, entries: list[JournalEntry]) -> None:
        """Store `entries` in one transaction; a key already present is an error."""
        rows = [
            (e.framework_hash, e.framework, e.ticker, _date_key(e.date),
             e.seed, e.wall_s, e.decision.model_dump_json())
            for e in entries
        ]
        with self._db:
            self._db.executemany("INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?)", rows)

    def load(self, framework_hash: str) -> dict[tuple[str, pd.Timestamp, int], JournalEntry]:
        """All journaled decisions of one framework configuration, by (ticker, date, seed)."""
        return {(e.ticker, e.date, e.seed): e for e in self._entries("WHERE framework_hash = ?", (framework_hash,))}

    def at(self, ticker: str, date: pd.Timestamp) -> list[JournalEntry]:
        """Every journaled decision on `ticker` at `date`, of any framework and seed, by framework and seed."""
        return self._entries("WHERE ticker = ? AND date = ? ORDER BY framework, seed", (ticker, _date_key(date)))

    def _entries(self, where: str, parameters: tuple) -> list[JournalEntry]:
        cursor = self._db.execute(
            "SELECT framework_hash, framework, ticker, date, seed, wall_s, decision FROM decisions " + where, parameters)
        return [JournalEntry(framework=framework, framework_hash=framework_hash, ticker=ticker, date=pd.Timestamp(date),
                             seed=seed, decision=Decision.model_validate_json(payload), wall_s=wall_s)
                for framework_hash, framework, ticker, date, seed, wall_s, payload in cursor]
