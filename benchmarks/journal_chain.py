"""What the journal's hash chain costs: opening (which walks the chain) and appending, next to reading the same rows.

    python benchmarks/journal_chain.py                 # 2,000 decisions with 20 KB traces
    python benchmarks/journal_chain.py -n 500 --trace-kb 50

It journals N decisions whose traces carry `--trace-kb` KB of messages (a debate's trace is of
that order), in batches of 256 as the runner appends them, into a fresh journal; then times, in
one process: opening it (the chain walk and the inputs check) and reading every decision back
(`Journal.load`: JSON parsed and validated, what a rerun always paid). It prints the three times
and the ratio of the chain walk to the read; timings on a busy machine are noisy, the ratio less so.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd

from harness.journal import Journal, JournalEntry
from market.decision import Action, Decision, Trace

BATCH = 256


def decisions(n: int, trace_kb: int) -> list[JournalEntry]:
    text = "x" * 1000
    trace = Trace(messages=[{"role": "assistant", "content": text}] * trace_kb)
    dates = pd.bdate_range("2020-01-01", periods=n)
    return [JournalEntry(framework="bench", key="k", ticker="AAA", date=d, seed=0, wall_s=0.01,
                         decision=Decision(action=Action.HOLD, trace=trace)) for d in dates]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2000, help="decisions")
    parser.add_argument("--trace-kb", type=int, default=20, help="KB of messages per trace")
    args = parser.parse_args()
    entries = decisions(args.n, args.trace_kb)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "journal.sqlite"
        started = time.perf_counter()
        with Journal(path) as journal:
            for lo in range(0, len(entries), BATCH):
                journal.append(entries[lo:lo + BATCH])
        appended = time.perf_counter() - started
        started = time.perf_counter()
        journal = Journal(path, read_only=True)
        opened = time.perf_counter() - started
        started = time.perf_counter()
        read = journal.load("k")
        loaded = time.perf_counter() - started
        journal.close()
    assert len(read) == args.n
    print(f"{args.n} decisions, {args.trace_kb} KB traces: append {appended:.2f} s, open (chain walk) {opened:.2f} s, "
          f"read back {loaded:.2f} s; chain walk / read = {opened / loaded:.2f}")


if __name__ == "__main__":
    main()
