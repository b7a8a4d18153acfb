"""The journal's rows as they are written in batches: the hash of a row is the text `json.dumps` writes
(journals written before the hash was built by hand still verify), and each decision's attempts count up
within a batch, across batches and across journal keys."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from harness.failures import Failure, FailureKind
from harness.journal import GENESIS, ROW_COLUMNS, Journal, JournalEntry, row_hash
from market.decision import Action, Decision, Trace

DAY, NEXT = pd.Timestamp("2024-03-01"), pd.Timestamp("2024-03-04")
COLUMN_VALUES = st.one_of(st.none(), st.text(), st.integers(), st.floats(), st.booleans())


def hash_as_json_dumps(previous: str, values: tuple) -> str:
    """The row hash as the journal's format defines it."""
    return hashlib.sha256((previous + json.dumps(list(values), ensure_ascii=False)).encode()).hexdigest()


@given(st.lists(COLUMN_VALUES, min_size=len(ROW_COLUMNS), max_size=len(ROW_COLUMNS)))
def test_a_row_hash_is_that_of_the_rows_json_dumps_text(values):
    """Any str (quotes, controls, non-ASCII), int, float (NaN, infinities, -0.0), bool or None in any column."""
    assert row_hash(GENESIS, tuple(values)) == hash_as_json_dumps(GENESIS, tuple(values))


def entry(key: str, date: pd.Timestamp, decision: Decision, failure: Failure | None = None) -> JournalEntry:
    return JournalEntry("plugin", key, "AAA", date, 0, decision, 0.001, failure)


def test_attempts_count_up_within_a_batch_across_batches_and_keys_and_the_chain_is_json_dumps(tmp_path):
    path = tmp_path / "journal.sqlite"
    failed = Failure(FailureKind.RAISED, "plugin AAA 2024-03-01 seed 0: RuntimeError: no")
    fallback = Decision(action=Action.HOLD, trace=Trace(error=failed.message, fallback=True))
    sell = Decision(action=Action.SELL, trace=Trace(messages=[{"role": "assistant", "content": "„verkaufen“ \"now\"\n"}]))
    with Journal(path) as journal:
        journal.append([entry("k1", DAY, fallback, failed), entry("k1", NEXT, sell), entry("k1", DAY, sell)],
                       [None, sell.model_dump_json(), None])
        journal.append([entry("k1", DAY, sell), entry("k2", DAY, sell)])
        journal.append([])
        assert journal.load("k1")[("AAA", DAY, 0)].decision == sell and journal.load("k2")[("AAA", DAY, 0)].failure is None
    with sqlite3.connect(path) as db:
        rows = db.execute(f"SELECT {', '.join(ROW_COLUMNS)}, hash FROM decisions ORDER BY row").fetchall()
    assert [(key, date[:10], attempt) for key, _, _, date, _, attempt, *_ in rows] == [
        ("k1", "2024-03-01", 0), ("k1", "2024-03-04", 0), ("k1", "2024-03-01", 1), ("k1", "2024-03-01", 2),
        ("k2", "2024-03-01", 0)]
    assert rows[0][-3:-1] == ("raised", failed.message) and rows[1][7] == sell.model_dump_json()
    previous = GENESIS
    for *values, stored in rows:
        previous = hash_as_json_dumps(previous, tuple(values))
        assert stored == previous
    Journal(path, read_only=True).close()
