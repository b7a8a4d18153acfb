"""The decision journal: an append-only SQLite file (WAL mode), one row per decision.

Key: (journal key, ticker, date, seed). The journal key hashes everything a framework's
decisions depend on — its config, its own fingerprint and the market data it can read
(`harness.decision_inputs`) — and the `inputs` table records those inputs per key, so a run
can say what changed when a key is new. Each batch of decisions commits in one transaction,
so a run killed at any point loses at most the decisions in flight, and a rerun with the same
command and the same inputs reads the journaled decisions back instead of recomputing them.
Decisions made on other inputs stay in the file. The full trace is stored as JSON and stays
queryable with plain SQL:

    SELECT date, json_extract(decision, '$.action') FROM decisions WHERE ticker = 'NVDA';
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from core.errors import ConfigError
from harness.decision_inputs import DecisionInputs
from market.decision import Decision

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS decisions (
        key TEXT NOT NULL,
        framework TEXT NOT NULL,
        ticker TEXT NOT NULL,
        date TEXT NOT NULL,
        seed INTEGER NOT NULL,
        wall_s REAL NOT NULL,
        decision TEXT NOT NULL,
        PRIMARY KEY (key, ticker, date, seed)
    )""",
    """CREATE TABLE IF NOT EXISTS inputs (
        key TEXT PRIMARY KEY,
        framework TEXT NOT NULL,
        inputs TEXT NOT NULL
    )""",
)


def _date_key(date: pd.Timestamp) -> str:
    """How a decision date is stored in the `date` column."""
    return date.strftime("%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True)
class JournalEntry:
    """One journaled decision and the wall time (s) the framework spent on it."""

    framework: str
    key: str
    ticker: str
    date: pd.Timestamp
    seed: int
    decision: Decision
    wall_s: float


class Journal:
    """Append-only store of decisions keyed by (journal key, ticker, date, seed)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._db.commit()
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(decisions)")}
        if "key" not in columns:
            self._db.close()
            raise ConfigError(f"{self.path}: a journal of an older TradeDuel, keyed by config alone; "
                              "run into a new directory (hydra.run.dir=...)")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def record_inputs(self, framework: str, inputs: DecisionInputs) -> None:
        """Store what `inputs.key` stands for (once per key)."""
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO inputs VALUES (?, ?, ?)",
                             (inputs.key, framework, inputs.to_json()))

    def previous_inputs(self, framework: str, key: str) -> tuple[DecisionInputs, int] | None:
        """The inputs under which `framework` last made decisions with a key other than `key`,
        and how many decisions it made under them; None when there are none."""
        row = self._db.execute(
            "SELECT inputs.inputs, count(*) FROM inputs JOIN decisions ON decisions.key = inputs.key "
            "WHERE inputs.framework = ? AND inputs.key != ? GROUP BY inputs.key "
            "ORDER BY inputs.rowid DESC LIMIT 1", (framework, key)).fetchone()
        return (DecisionInputs.from_json(row[0]), row[1]) if row else None

    def append(self, entries: list[JournalEntry]) -> None:
        """Store `entries` in one transaction; a key already present is an error."""
        rows = [
            (e.key, e.framework, e.ticker, _date_key(e.date),
             e.seed, e.wall_s, e.decision.model_dump_json())
            for e in entries
        ]
        with self._db:
            self._db.executemany("INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?)", rows)

    def load(self, key: str) -> dict[tuple[str, pd.Timestamp, int], JournalEntry]:
        """All journaled decisions under one journal key, by (ticker, date, seed)."""
        return {(e.ticker, e.date, e.seed): e for e in self._entries("WHERE key = ?", (key,))}

    def at(self, ticker: str, date: pd.Timestamp) -> list[JournalEntry]:
        """Every journaled decision on `ticker` at `date`, of any framework and seed, by framework and seed."""
        return self._entries("WHERE ticker = ? AND date = ? ORDER BY framework, seed", (ticker, _date_key(date)))

    def _entries(self, where: str, parameters: tuple) -> list[JournalEntry]:
        cursor = self._db.execute(
            "SELECT key, framework, ticker, date, seed, wall_s, decision FROM decisions " + where, parameters)
        return [JournalEntry(framework=framework, key=key, ticker=ticker, date=pd.Timestamp(date),
                             seed=seed, decision=Decision.model_validate_json(payload), wall_s=wall_s)
                for key, framework, ticker, date, seed, wall_s, payload in cursor]
