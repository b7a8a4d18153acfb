"""Finding 6, the journal's part: a damaged, overwritten, foreign or contended journal ended in a SQLite
traceback, and edited rows were reused without a word. Now every row is hash-chained to the one before,
the chain is checked on opening, and each fault is one line naming the file and what to do."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

import pytest
from filelock import FileLock
from harness_runs import DAYS
from misbehaving import Returns

from core.errors import DataError, InUseError
from harness.journal import Journal
from market.decision import Action, Decision

pytestmark = pytest.mark.timeout(120)

SELLS = {"seller": Returns(lambda: Decision(action=Action.SELL))}
MOVE_ASIDE = "move it aside (e.g. mv {path} {path}.damaged) to decide afresh, or run into another directory"


def sells(journaled):
    """A journal of 10 SELL decisions (then checkpointed into the main file, as after any run)."""
    journaled(SELLS)
    with sqlite3.connect(journaled.path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return journaled.path


@pytest.mark.slow
def test_edited_rows_stop_the_run_in_one_line_naming_the_file_and_the_row(journaled):
    path = sells(journaled)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE decisions SET decision = replace(decision, 'SELL', 'HOLD') WHERE row > 4")
    with pytest.raises(DataError) as refused:
        journaled(SELLS)
    assert str(refused.value) == (f"{path}: row 5 (seller AAA {DAYS[4]:%Y-%m-%d} 00:00:00 seed 0, key "
                                  f"{refused.value.args[0].split('key ')[1].split(')')[0]}) does not match its hash: the file "
                                  f"was edited or damaged after it was written; {MOVE_ASIDE.format(path=path)}")


@pytest.mark.slow
def test_removed_rows_and_edited_inputs_are_detected(journaled, tmp_path):
    path = sells(journaled)
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(path.read_bytes())
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM decisions WHERE row = (SELECT max(row) FROM decisions)")
    with pytest.raises(DataError, match=r"9 rows where the journal's head counts 10: rows were removed or the file was truncated"):
        Journal(path)
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE inputs SET inputs = replace(inputs, 'seller', 'buyer')")
    with pytest.raises(DataError, match=r"the inputs recorded for key \w+ \(seller\) do not hash to that key"):
        Journal(copy, read_only=True)


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "overwritten"])
def test_a_truncated_or_overwritten_file_is_one_line(journaled, damage):
    path = sells(journaled)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"these are my notes, not a journal\n" * 200)
    with pytest.raises(DataError) as refused:
        Journal(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: ") and message.endswith(MOVE_ASIDE.format(path=path)) and "\n" not in message
    FileLock(f"{path}.lock", timeout=0).acquire()  # the refused writer let its lock go


def test_a_foreign_sqlite_file_is_not_taken_for_a_journal(tmp_path):
    path = tmp_path / "journal.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(DataError, match=r"journal.sqlite: not a TradeDuel journal \(it holds the tables notes\); move it aside"):
        Journal(path)


@pytest.mark.slow
def test_an_unchained_journal_is_upgraded_with_one_warning_and_its_rows_reused(journaled, tmp_path):
    journaled(SELLS)
    with sqlite3.connect(journaled.path) as db:  # the file as the earlier TradeDuel wrote it
        rows = db.execute("SELECT key, framework, ticker, date, seed, wall_s, decision FROM decisions").fetchall()
        inputs = db.execute("SELECT * FROM inputs").fetchall()
    journaled.path.unlink()
    with sqlite3.connect(journaled.path) as db:
        db.execute("CREATE TABLE decisions (key TEXT NOT NULL, framework TEXT NOT NULL, ticker TEXT NOT NULL, "
                   "date TEXT NOT NULL, seed INTEGER NOT NULL, wall_s REAL NOT NULL, decision TEXT NOT NULL, "
                   "PRIMARY KEY (key, ticker, date, seed))")
        db.execute("CREATE TABLE inputs (key TEXT PRIMARY KEY, framework TEXT NOT NULL, inputs TEXT NOT NULL)")
        db.executemany("INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        db.executemany("INSERT INTO inputs VALUES (?, ?, ?)", inputs)
    with Journal(journaled.path, read_only=True) as reader:
        assert len(reader.load(rows[0][0])) == 10, "read as it is, unchanged"
    again = journaled(SELLS)
    assert (again.made, again.reused) == (0, 10)
    assert journaled.warnings == [f"{journaled.path}: a journal of an earlier TradeDuel, without hash-chained rows: its 10 "
                                  "rows are taken as they are and chained from now on (damage done to them before cannot "
                                  "be detected)"]
    with sqlite3.connect(journaled.path) as db:
        db.execute("UPDATE decisions SET decision = replace(decision, 'SELL', 'BUY') WHERE row = 1")
    with pytest.raises(DataError, match="row 1 .* does not match its hash"):
        journaled(SELLS)


HOLD_THE_LOCK = textwrap.dedent("""
    import sys, time
    from harness.journal import Journal
    with Journal(sys.argv[1]):
        print("holding", flush=True)
        time.sleep(60)
""")


@pytest.mark.slow
def test_a_second_writer_is_refused_in_one_line_while_readers_go_on(tmp_path):
    path = tmp_path / "journal.sqlite"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_THE_LOCK, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "holding\n"
        with pytest.raises(InUseError) as refused:
            Journal(path)
        assert str(refused.value) == (f"{path}: another run is writing to this journal (its lock {path}.lock is held); "
                                      "wait for it to end, or run into another directory")
        with Journal(path, read_only=True) as reader:
            assert reader.load("any") == {}
    finally:
        holder.kill()
        holder.wait()
    Journal(path).close()  # free again once the holder is gone
