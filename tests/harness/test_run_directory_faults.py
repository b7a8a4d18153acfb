"""Finding 6 on the command line: a damaged journal, two runs into one run directory at once, a run directory
that cannot be created or written, a read-only journal. Each is one `error:` line and exit code 2."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from cli_helpers import ROOT, benchmark_command, support_env

pytestmark = pytest.mark.timeout(300)

SMALL = ["+suite=smoke", "tickers=[NVDA]", "seeds=[0]", "split.test.end=2020-01-31"]
"""The rule baselines, 21 days of one ticker: 126 decisions in a few seconds."""
HERE = Path(__file__).resolve().parent


def gated(opens: Path) -> list[str]:
    """Beside them, `misbehaving.Gate`: the run does not end before the file `opens` exists."""
    return ["+frameworks.gate._target_=misbehaving.Gate", f"+frameworks.gate.opens={opens}"]


def benchmark(*overrides: str) -> subprocess.CompletedProcess:
    return subprocess.run(benchmark_command(*SMALL, *overrides), cwd=ROOT, env=support_env(), capture_output=True,
                          text=True, timeout=240)


def one_error_line(done: subprocess.CompletedProcess) -> str:
    """The run's only stderr line, which must be an `error:` line, with exit code 2."""
    assert done.returncode == 2, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-3000:]
    return lines[0]


@pytest.mark.slow
def test_an_edited_journal_stops_the_rerun_in_one_line(tmp_path):
    assert benchmark(f"hydra.run.dir={tmp_path}").returncode == 0
    with sqlite3.connect(tmp_path / "journal.sqlite") as db:
        db.execute("UPDATE decisions SET decision = replace(decision, 'BUY', 'HOLD') WHERE row = 3")
    line = one_error_line(benchmark(f"hydra.run.dir={tmp_path}"))
    assert line.startswith(f"error: {tmp_path / 'journal.sqlite'}: row 3 (buy_and_hold NVDA ") and "does not match its hash" in line
    assert line.endswith("to decide afresh, or run into another directory")


@pytest.mark.slow
def test_the_second_of_two_identical_runs_started_at_once_is_refused_and_the_first_ends_well(tmp_path):
    run_dir, opens = tmp_path / "run", tmp_path / "open"
    command = benchmark_command(*SMALL, *gated(opens), f"hydra.run.dir={run_dir}")
    first = subprocess.Popen(command, cwd=ROOT, env=support_env(HERE), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    while not (run_dir / "config.yaml").is_file():  # written once the first holds the journal's lock
        assert first.poll() is None, first.stderr.read()
        time.sleep(0.1)
    second = subprocess.run(command, cwd=ROOT, env=support_env(HERE), capture_output=True, text=True, timeout=240)
    assert first.poll() is None, "the first run is still running"
    line = one_error_line(second)
    assert line == (f"error: {run_dir / 'journal.sqlite'}: another run is writing to this journal (its lock "
                    f"{run_dir / 'journal.sqlite'}.lock is held); wait for it to end, or run into another directory")
    opens.touch()
    out, err = first.communicate(timeout=240)
    assert first.returncode == 0, err[-3000:]
    assert "147 decisions made, 0 reused from the journal, 0 failed" in out


@pytest.mark.slow
def test_a_run_directory_whose_parent_is_a_file_is_one_line(tmp_path):
    (tmp_path / "notes").write_text("a file")
    line = one_error_line(benchmark(f"hydra.run.dir={tmp_path / 'notes' / 'run'}"))
    assert line == (f"error: hydra.run.dir: {tmp_path / 'notes'} is a file, not a folder, so {tmp_path / 'notes' / 'run'} "
                    "cannot be created; choose another directory (hydra.run.dir=DIR)")


@pytest.mark.slow
def test_a_run_directory_that_cannot_be_created_is_one_line():
    line = one_error_line(benchmark("hydra.run.dir=/proc/tradeduel-run"))
    assert line.startswith("error: hydra.run.dir: /proc/tradeduel-run cannot be created in /proc (")


READ_ONLY = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
"""Shell: make the path $0 read-only (a read-only bind mount over it), then run the command."""


def read_only_command(path: Path, command: list[str]) -> list[str]:
    """`command` run where `path` is read-only, even to root (who writes into files without write bits):
    in a user and mount namespace of its own (`unshare -rm`), over a read-only bind mount of `path`."""
    return ["unshare", "-rm", "sh", "-c", READ_ONLY, str(path), *command]


@pytest.fixture(scope="module")
def namespaces():
    try:
        usable = subprocess.run(read_only_command(Path("/tmp"), ["true"]), capture_output=True).returncode == 0
    except OSError:
        usable = False
    if not usable:
        pytest.skip("no user and mount namespaces here (unshare -rm) to make a path read-only for root")


@pytest.mark.slow
def test_a_read_only_run_directory_and_a_read_only_journal_are_one_line_each(tmp_path, namespaces):
    assert benchmark(f"hydra.run.dir={tmp_path}").returncode == 0
    rerun = benchmark_command(*SMALL, f"hydra.run.dir={tmp_path}")
    done = subprocess.run(read_only_command(tmp_path, rerun), cwd=ROOT, env=support_env(), capture_output=True,
                          text=True, timeout=240)
    assert one_error_line(done) == (f"error: hydra.run.dir: {tmp_path} cannot be written (Read-only file system); "
                                    "choose another directory (hydra.run.dir=DIR)")
    journal = tmp_path / "journal.sqlite"
    done = subprocess.run(read_only_command(journal, rerun), cwd=ROOT, env=support_env(), capture_output=True,
                          text=True, timeout=240)
    assert one_error_line(done) == (f"error: {journal}: cannot be written (attempt to write a readonly database); "
                                    "make it and its folder writable, or run into another directory")
