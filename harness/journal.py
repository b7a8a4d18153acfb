"""The decision journal: an append-only SQLite file (WAL mode) whose rows are hash-chained.

Rows. One row per decision attempt in table `decisions`, keyed by (journal key, ticker, date,
seed, attempt). The journal key hashes everything a framework's decisions depend on — its
config, its own fingerprint and the market data it can read (`harness.decision_inputs`) — and
the `inputs` table records those inputs per key, so a run can say what changed when a key is
new. Each batch of decisions commits in one transaction, so a run killed at any point loses at
most the decisions in flight, and a rerun with the same command and the same inputs reads the
journaled decisions back instead of recomputing them. Decisions made on other inputs stay in
the file. A failed decision (`harness.failures`) is journaled with the fallback executed in its
place and its failure (`failure_kind`, `failure`); deciding it again appends the next attempt.
Nothing is ever updated or deleted: readers take the latest attempt of each decision. The full
trace is stored as JSON and stays queryable with plain SQL:

    SELECT date, json_extract(decision, '$.action') FROM decisions WHERE ticker = 'NVDA';
    SELECT framework, date, failure_kind, failure FROM decisions WHERE failure IS NOT NULL;

Damage. Each row's `hash` is SHA-256 of the previous row's hash and the row's own columns
as a JSON list (`row_hash`, the text `json.dumps(values, ensure_ascii=False)` writes), in the
order the rows were appended: one chain through the whole file, whatever
the rows' journal keys, so resuming, reusing and deciding again only ever extend it. Table
`meta` holds the chain's head (the last hash) and its length, updated in the same transaction
as the rows. Opening a journal walks the chain and checks every `inputs` row against its key
(the key is the hash of those inputs): an edited, deleted or truncated row, or a file that is
not a journal, stops with one `DataError` line naming the file and what to do.

Older journals. A journal written before rows were chained (a `decisions` table keyed by
journal key, no `meta`) is upgraded when a run opens it for writing: its rows become attempt 0,
chained as they are, with one warning line (damage done to them before cannot be detected);
its rows then go through the same checks on reading as any other. Opened read-only, it is read
as it is. A journal keyed by config alone (the first format) is refused.

One writer. A journal opened for writing holds the lock file `<journal>.lock` (`filelock`)
until it is closed, and `journal_lock` holds it around a whole run (the entry point takes it
before writing anything into the run directory; a journal opened inside takes it again): a
second process writing to the same journal stops at once with one line instead of racing the
first. Readers (`read_only=True`) take no lock and write nothing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from json.encoder import encode_basestring
from pathlib import Path
from urllib.parse import quote

import pandas as pd
from filelock import FileLock, Timeout
from pydantic import ValidationError

from core.errors import DataError, InUseError, one_line
from harness.decision_inputs import DecisionInputs
from harness.failures import Failure, FailureKind
from market.decision import Decision

FORMAT = "tradeduel-journal"
"""`meta.format` of a journal: what tells it from any other SQLite file."""
VERSION = 2
"""`meta.version`: 2 = hash-chained rows with attempts and failures (1: unchained, no attempts)."""
GENESIS = hashlib.sha256(FORMAT.encode()).hexdigest()
"""The hash the first row is chained to."""

ROW_COLUMNS = ("key", "framework", "ticker", "date", "seed", "attempt", "wall_s", "decision", "failure_kind", "failure")
"""The columns a row's hash covers, in this order."""
_INSERT_ROW = (f"INSERT INTO decisions ({', '.join(ROW_COLUMNS)}, hash) "
               f"VALUES ({', '.join('?' * (len(ROW_COLUMNS) + 1))})")

_SCHEMA = (
    """CREATE TABLE decisions (
        row INTEGER PRIMARY KEY,
        key TEXT NOT NULL,
        framework TEXT NOT NULL,
        ticker TEXT NOT NULL,
        date TEXT NOT NULL,
        seed INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        wall_s REAL NOT NULL,
        decision TEXT NOT NULL,
        failure_kind TEXT,
        failure TEXT,
        hash TEXT NOT NULL,
        UNIQUE (key, ticker, date, seed, attempt)
    )""",
    """CREATE TABLE IF NOT EXISTS inputs (
        key TEXT PRIMARY KEY,
        framework TEXT NOT NULL,
        inputs TEXT NOT NULL
    )""",
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
)


@functools.lru_cache(maxsize=1 << 16)
def _date_key(date: pd.Timestamp) -> str:
    """How a decision date is stored in the `date` column (memoised: a run journals each date
    once per ticker, seed and framework, and `strftime` costs more than the rest of a rule's decision)."""
    return date.strftime("%Y-%m-%d %H:%M:%S")


def row_hash(previous: str, values: tuple) -> str:
    """SHA-256 (hex) of `previous` and the row's `ROW_COLUMNS` values as a JSON list: the text
    `json.dumps(list(values), ensure_ascii=False)` writes, built here element by element (half
    the time of `json.dumps`, which sets up an encoder on every call; a test holds the two equal)."""
    return hashlib.sha256(f"{previous}[{', '.join(map(_json_text, values))}]".encode()).hexdigest()


def _json_text(value: object) -> str:
    """One column value as `json.dumps(value, ensure_ascii=False)` writes it: the column types
    (str, int, finite float, None) written directly, anything else (a NaN, a bool) by `json.dumps`."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if value is None:
        return "null"
    if kind is int or (kind is float and math.isfinite(value)):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def warn_on_stderr(line: str) -> None:
    print(f"warning: {line}", file=sys.stderr)


def _acquire(path: Path) -> FileLock:
    """The writer's lock on the journal at `path`, taken (again, when this thread holds it already);
    another process holding it is one `InUseError` line."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DataError(f"{path.parent}: cannot hold a journal ({error.strerror or error})") from None
    lock = FileLock(f"{path}.lock", timeout=0, is_singleton=True)
    try:
        lock.acquire()
    except Timeout:
        raise InUseError(f"{path}: another run is writing to this journal (its lock {lock.lock_file} is held); "
                         "wait for it to end, or run into another directory") from None
    except OSError as error:
        raise DataError(f"{path}: cannot lock the journal for writing ({error.strerror or error}); "
                        "make its folder writable, or run into another directory") from None
    return lock


@contextmanager
def journal_lock(path: str | Path) -> Iterator[None]:
    """Hold the writer's lock on the journal at `path` for the block (see the module docstring)."""
    lock = _acquire(Path(path))
    try:
        yield
    finally:
        lock.release()


@dataclass(frozen=True)
class JournalEntry:
    """One journaled decision, the wall time (s) the framework spent on it, and its failure (None when it did not fail)."""

    framework: str
    key: str
    ticker: str
    date: pd.Timestamp
    seed: int
    decision: Decision
    wall_s: float
    failure: Failure | None = None


@dataclass(frozen=True)
class UnreadableRow:
    """A journaled row whose decision does not validate (a damaged or older file): it is decided again."""

    ticker: str
    date: pd.Timestamp
    seed: int
    problem: str


@dataclass(frozen=True)
class JournalRead:
    """The latest attempt of every decision under one journal key, by (ticker, date, seed), and the rows that do not validate."""

    entries: dict[tuple[str, pd.Timestamp, int], JournalEntry]
    unreadable: list[UnreadableRow]


class Journal:
    """Append-only, hash-chained store of decisions keyed by (journal key, ticker, date, seed) (see the module docstring).

    `warn` receives the one warning line of an upgraded older journal.
    """

    def __init__(self, path: str | Path, read_only: bool = False, warn: Callable[[str], None] = warn_on_stderr):
        self.path = Path(path)
        self.read_only = read_only
        self._lock: FileLock | None = None
        self._chained = True
        if read_only:
            if not self.path.is_file():
                raise DataError(f"{self.path}: missing (expected in a run directory, see docs/run_directory.md)")
            self._db = self._connect(f"file:{quote(str(self.path.resolve()))}?mode=ro", uri=True)
        else:
            self._lock = _acquire(self.path)
            try:
                self._db = self._connect(str(self.path))
            except BaseException:
                self._lock.release()
                raise
        try:
            with self._sqlite_errors():
                self._open(warn)
                self._verify()
        except BaseException:
            self.close()
            raise

    # ---- opening ----

    def _advice(self) -> str:
        return f"move it aside (e.g. mv {self.path} {self.path}.damaged) to decide afresh, or run into another directory"

    def _connect(self, target: str, uri: bool = False) -> sqlite3.Connection:
        with self._sqlite_errors():
            return sqlite3.connect(target, uri=uri, isolation_level=None)

    @contextmanager
    def _sqlite_errors(self) -> Iterator[None]:
        """SQLite's errors on this file as one line naming it and what to do."""
        try:
            yield
        except sqlite3.DatabaseError as error:
            message = str(error)
            if "locked" in message or "busy" in message:
                raise InUseError(f"{self.path}: {message}: another process is using the journal; wait for it to end, "
                                 "or run into another directory") from None
            if "readonly" in message or "read-only" in message:
                raise DataError(f"{self.path}: cannot be written ({message}); make it and its folder writable, "
                                "or run into another directory") from None
            if "unable to open" in message:
                raise DataError(f"{self.path}: cannot be opened ({message})") from None
            raise DataError(f"{self.path}: not a readable TradeDuel journal ({message}); {self._advice()}") from None

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction, taken at once (BEGIN IMMEDIATE) so that the chain's head cannot change under it."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _open(self, warn: Callable[[str], None]) -> None:
        """Create a new journal, read the format of an existing one, upgrade an unchained one (see the module docstring)."""
        if not self.read_only:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        tables = {name for (name,) in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" in tables:
            meta = dict(self._db.execute("SELECT name, value FROM meta"))
            if meta.get("format") != FORMAT:
                raise DataError(f"{self.path}: not a TradeDuel journal (its meta table is another program's); {self._advice()}")
            if int(meta.get("version", 0)) > VERSION:
                raise DataError(f"{self.path}: written by a newer TradeDuel (journal version {meta['version']}, "
                                f"this one reads up to {VERSION}); run into another directory")
            return
        if "decisions" not in tables:
            if tables - {"inputs"}:
                raise DataError(f"{self.path}: not a TradeDuel journal (it holds the tables {', '.join(sorted(tables))}); "
                                f"{self._advice()}")
            if self.read_only:
                raise DataError(f"{self.path}: an empty journal")
            with self._transaction():
                self._create_schema()
            return
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(decisions)")}
        if "key" not in columns:
            raise DataError(f"{self.path}: a journal of an older TradeDuel, keyed by config alone; "
                            "run into a new directory (hydra.run.dir=...)")
        if self.read_only:
            self._chained = False
            return
        count = self._upgrade()
        warn(f"{self.path}: a journal of an earlier TradeDuel, without hash-chained rows: its {count} rows are taken "
             "as they are and chained from now on (damage done to them before cannot be detected)")

    def _create_schema(self) -> None:
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._db.executemany("INSERT INTO meta VALUES (?, ?)",
                             [("format", FORMAT), ("version", str(VERSION)), ("head", GENESIS), ("rows", "0")])

    def _upgrade(self) -> int:
        """Chain the rows of an unchained journal as attempt 0 (their failures from the traces' errors); returns their count."""
        with self._transaction():
            self._db.execute("ALTER TABLE decisions RENAME TO unchained_decisions")
            self._create_schema()
            rows = self._db.execute("SELECT key, framework, ticker, date, seed, wall_s, decision FROM unchained_decisions "
                                    "ORDER BY rowid").fetchall()
            self._insert([(key, framework, ticker, date, seed, 0, wall_s, payload, *_legacy_failure(payload))
                          for key, framework, ticker, date, seed, wall_s, payload in rows])
            self._db.execute("DROP TABLE unchained_decisions")
        return len(rows)

    def _verify(self) -> None:
        """Walk the chain and check every `inputs` row; the first mismatch is one `DataError` line."""
        if not self._chained:
            return
        previous, count = GENESIS, 0
        cursor = self._db.execute(f"SELECT row, {', '.join(ROW_COLUMNS)}, hash FROM decisions ORDER BY row")
        for row, *values, stored in cursor:
            previous = row_hash(previous, tuple(values))
            count += 1
            if previous != stored:
                key, framework, ticker, date, seed = values[:5]
                raise DataError(f"{self.path}: row {row} ({framework} {ticker} {date} seed {seed}, key {key}) does not "
                                f"match its hash: the file was edited or damaged after it was written; {self._advice()}")
        head, rows = self._head()
        if (previous, count) != (head, rows):
            raise DataError(f"{self.path}: {count} rows where the journal's head counts {rows}: rows were removed or the "
                            f"file was truncated; {self._advice()}")
        for key, framework, text in self._db.execute("SELECT key, framework, inputs FROM inputs"):
            try:
                matches = DecisionInputs.from_json(text).key == key
            except (ValueError, TypeError):
                matches = False
            if not matches:
                raise DataError(f"{self.path}: the inputs recorded for key {key} ({framework}) do not hash to that key: "
                                f"the file was edited; {self._advice()}")

    def _head(self) -> tuple[str, int]:
        meta = dict(self._db.execute("SELECT name, value FROM meta WHERE name IN ('head', 'rows')"))
        return meta.get("head", ""), int(meta.get("rows", -1))

    # ---- use ----

    def close(self) -> None:
        db = getattr(self, "_db", None)
        if db is not None:
            db.close()
            self._db = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def record_inputs(self, framework: str, inputs: DecisionInputs) -> None:
        """Store what `inputs.key` stands for (once per key)."""
        with self._sqlite_errors(), self._transaction():
            self._db.execute("INSERT OR IGNORE INTO inputs VALUES (?, ?, ?)", (inputs.key, framework, inputs.to_json()))

    def previous_inputs(self, framework: str, key: str) -> tuple[DecisionInputs, int] | None:
        """The inputs under which `framework` last made decisions with a key other than `key`,
        and how many decisions it made under them; None when there are none."""
        row = self._db.execute(
            "SELECT inputs.inputs, count(DISTINCT decisions.ticker || decisions.date || decisions.seed) FROM inputs "
            "JOIN decisions ON decisions.key = inputs.key WHERE inputs.framework = ? AND inputs.key != ? "
            "GROUP BY inputs.key ORDER BY inputs.rowid DESC LIMIT 1", (framework, key)).fetchone()
        return (DecisionInputs.from_json(row[0]), row[1]) if row else None

    def append(self, entries: list[JournalEntry], payloads: list[str | None] | None = None) -> None:
        """Store `entries` in one transaction, each as the next attempt of its decision, chained to the rows before.

        `payloads[i]`, where given, is `entries[i].decision` as JSON already (`decision_checks.stored_form`
        made it while checking the decision); the others are serialised here."""
        payloads = payloads or [None] * len(entries)
        decisions = [(e.key, e.ticker, _date_key(e.date), int(e.seed)) for e in entries]
        with self._sqlite_errors(), self._transaction():
            attempts = self._next_attempts(decisions)
            rows = []
            for e, payload, decision in zip(entries, payloads, decisions, strict=True):
                attempt = attempts.get(decision, 0)
                attempts[decision] = attempt + 1
                key, ticker, date, seed = decision
                failure = e.failure
                rows.append((key, e.framework, ticker, date, seed, attempt, float(e.wall_s),
                             e.decision.model_dump_json() if payload is None else payload,
                             failure.kind.value if failure else None, failure.message if failure else None))
            self._insert(rows)

    def _insert(self, rows: list[tuple]) -> None:
        """Insert `rows` (ROW_COLUMNS values) chained to the head, and move the head."""
        previous, count = self._head()
        chained = []
        for values in rows:
            previous = row_hash(previous, values)
            chained.append((*values, previous))
        self._db.executemany(_INSERT_ROW, chained)
        count += len(chained)
        self._db.executemany("UPDATE meta SET value = ? WHERE name = ?", [(previous, "head"), (str(count), "rows")])

    def _next_attempts(self, decisions: list[tuple[str, str, str, int]]) -> dict[tuple[str, str, str, int], int]:
        """(key, ticker, date, seed) -> 1 + the latest journaled attempt of that decision, for those of `decisions`
        that have one (a new decision's first attempt is 0). Nothing to look up when no row has their journal keys
        (a fresh run); otherwise one query for the whole batch: the decisions go into a temporary table, joined
        with the journal's unique (key, ticker, date, seed, attempt) index."""
        keys = sorted({key for key, *_ in decisions})
        if not self._db.execute(f"SELECT EXISTS (SELECT 1 FROM decisions WHERE key IN ({', '.join('?' * len(keys))}))",
                                keys).fetchone()[0]:
            return {}
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS appending (key TEXT, ticker TEXT, date TEXT, seed INTEGER)")
        self._db.execute("DELETE FROM appending")
        self._db.executemany("INSERT INTO appending VALUES (?, ?, ?, ?)", decisions)
        journaled = self._db.execute(
            "SELECT a.key, a.ticker, a.date, a.seed, max(d.attempt) + 1 FROM appending a "
            "JOIN decisions d ON d.key = a.key AND d.ticker = a.ticker AND d.date = a.date AND d.seed = a.seed "
            "GROUP BY a.key, a.ticker, a.date, a.seed")
        return {tuple(row[:4]): row[4] for row in journaled}

    def read(self, key: str) -> JournalRead:
        """The latest attempt of every decision under one journal key, and the latest attempts that do not validate."""
        entries: dict[tuple[str, pd.Timestamp, int], JournalEntry] = {}
        unreadable: dict[tuple[str, pd.Timestamp, int], UnreadableRow] = {}
        for entry in self._rows("WHERE key = ?", (key,)):
            where = (entry.ticker, entry.date, entry.seed)
            entries.pop(where, None)
            unreadable.pop(where, None)
            if isinstance(entry, UnreadableRow):
                unreadable[where] = entry
            else:
                entries[where] = entry
        return JournalRead(entries, list(unreadable.values()))

    def load(self, key: str) -> dict[tuple[str, pd.Timestamp, int], JournalEntry]:
        """The latest readable attempt of every decision under one journal key, by (ticker, date, seed)."""
        return self.read(key).entries

    def at(self, ticker: str, date: pd.Timestamp) -> list[JournalEntry]:
        """The latest attempt of every readable decision on `ticker` at `date`, of any framework, key and seed, by framework and seed."""
        latest: dict[tuple[str, int], JournalEntry | UnreadableRow] = {}
        for key, entry in self._keyed_rows("WHERE ticker = ? AND date = ?", (ticker, _date_key(date))):
            latest[key, entry.seed] = entry
        readable = [e for e in latest.values() if isinstance(e, JournalEntry)]
        return sorted(readable, key=lambda e: (e.framework, e.seed))

    def _rows(self, where: str, parameters: tuple) -> Iterator[JournalEntry | UnreadableRow]:
        for _, entry in self._keyed_rows(where, parameters):
            yield entry

    def _keyed_rows(self, where: str, parameters: tuple) -> Iterator[tuple[str, JournalEntry | UnreadableRow]]:
        """(journal key, entry or unreadable row) of the rows matching `where`, in the order they were appended."""
        if self._chained:
            columns, order = "key, framework, ticker, date, seed, wall_s, decision, failure_kind, failure", "row"
        else:
            columns, order = "key, framework, ticker, date, seed, wall_s, decision, NULL, NULL", "rowid"
        cursor = self._db.execute(f"SELECT {columns} FROM decisions {where} ORDER BY {order}", parameters)
        for key, framework, ticker, date, seed, wall_s, payload, kind, message in cursor:
            date = pd.Timestamp(date)
            try:
                decision = Decision.model_validate_json(payload)
            except ValidationError as error:
                yield key, UnreadableRow(ticker, date, seed, one_line(error))
                continue
            if kind is None and not self._chained:
                kind, message = _legacy_failure(payload)
            failure = None if kind is None else Failure(_failure_kind(kind), message or "")
            yield key, JournalEntry(framework=framework, key=key, ticker=ticker, date=date, seed=seed,
                                    decision=decision, wall_s=wall_s, failure=failure)


def _failure_kind(value: str) -> FailureKind:
    """The kind stored in `failure_kind`; `unknown` for a name this TradeDuel does not know."""
    try:
        return FailureKind(value)
    except ValueError:
        return FailureKind.UNKNOWN


def _legacy_failure(payload: str) -> tuple[str | None, str | None]:
    """(failure_kind, failure) of a row from an unchained journal: kind `unknown` with the trace's error, if it has one."""
    try:
        error = json.loads(payload).get("trace", {}).get("error")
    except (ValueError, AttributeError):
        return None, None
    return (FailureKind.UNKNOWN.value, str(error)) if error is not None else (None, None)
