"""A disk cache of chat responses in SQLite (WAL mode).

The key is the SHA-256 of the canonical JSON of (engine fingerprint, messages, tools, sampling
parameters, occurrence). The fingerprint names the weights, tokenizer and chat template that
answer (`ChatEngine.fingerprint`), so two checkpoints never share entries whatever their folder
names; the sampling parameters include the seed and grammar, except that greedy requests drop
the seed (`SamplingParams.identity`). `occurrence` numbers identical requests inside one call
(0, 1, 2, ...), so that n sampled rollouts of the same prompt stay n different answers when
replayed. Each engine call commits its new rows in one transaction, so a killed run keeps
every call that finished. What is never cached is decided by `ChatEngine`: unseeded sampled
requests and results that carry an error.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from llm_backends.paths import default_response_cache
from llm_backends.types import ChatResult, Conversation, SamplingParams, ToolSchema

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    engine TEXT NOT NULL,
    model TEXT NOT NULL,
    result TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


def request_identity(conversation: Conversation, tools: list[ToolSchema] | None, params: SamplingParams) -> str:
    """SHA-256 hex digest of the canonical JSON of a request: messages, tools, `params.identity()`.

    Raises TypeError when the messages or tools hold something JSON cannot represent.
    """
    payload = {"messages": conversation, "tools": tools or [], "params": params.identity()}
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def cache_key(fingerprint: str, identity: str, occurrence: int = 0) -> str:
    """SHA-256 hex digest of (engine fingerprint, request identity, occurrence)."""
    return hashlib.sha256(f"{fingerprint}\n{identity}\n{occurrence}".encode()).hexdigest()


class ResponseCache:
    """Stores `ChatResult`s by key; safe to share between threads and processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"

    def get_many(self, keys: list[str]) -> dict[str, ChatResult]:
        """The cached results among `keys` (missing keys are absent), each marked `cached`."""
        found: dict[str, ChatResult] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(f"SELECT key, result FROM responses WHERE key IN ({marks})", chunk)
                for key, blob in rows:
                    found[key] = ChatResult.model_validate_json(blob).model_copy(update={"cached": True})
        return found

    def put_many(self, items: dict[str, tuple[str, ChatResult]]) -> None:
        """Store `{key: (engine id, result)}` in one transaction."""
        now = time.time()
        rows: list[tuple[Any, ...]] = [
            (key, engine, result.model, result.model_dump_json(), now) for key, (engine, result) in items.items()
        ]
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?)", rows)
            self._db.execute("COMMIT")

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()


def open_cache(enabled: bool, path: str | Path | None = None) -> ResponseCache | None:
    """The cache engines get from config: None when disabled, else at `path` or the default location."""
    if not enabled:
        return None
    return ResponseCache(path or default_response_cache())
