"""Per-row decision times and the machine facts of a run, optionally running the suite cold first.

    python benchmarks/run_costs.py RUN_DIR                          # a finished run
    python benchmarks/run_costs.py RUN_DIR --run +suite=paper_offline  # run it cold into RUN_DIR first

prints each framework's decisions, its seconds (the journal's wall time of its batches), its
seconds per decision and, for a row with several episodes per decision (self-consistency,
`samples` in run.json's framework facts), per sample; every `SC-<backbone>` row's seconds per
sample over its `SA-<backbone>` row's; then the run's wall time, its peak resident memory and
torch's thread count (`run.json`). `--run` starts `run_benchmark.py` with the given overrides and
`TRADEDUEL_CACHE` pointed at a new folder (so a model's conversion and FinRL's training are
included), and prints the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from harness.run_directory import load_run

ROOT = Path(__file__).resolve().parents[1]


def row_costs(run_dir: Path) -> pd.DataFrame:
    """framework -> decisions, seconds (sum of the decisions' wall_s), seconds per decision, samples per
    decision and seconds per sample, in run order."""
    run = load_run(run_dir)
    grouped = run.decisions.groupby("framework", sort=False)["wall_s"]
    table = pd.DataFrame({"decisions": grouped.size(), "seconds": grouped.sum()})
    table["s_per_decision"] = table["seconds"] / table["decisions"]
    facts = run.info.get("framework_facts", {})
    table["samples"] = [int(facts.get(name, {}).get("samples", 1)) for name in table.index]
    table["s_per_sample"] = table["s_per_decision"] / table["samples"]
    return table


def machine_facts(run_dir: Path) -> dict:
    """run.json's wall_s, peak_rss_mb and torch_threads (None where the run did not record them)."""
    info = load_run(run_dir).info
    return {key: info.get(key) for key in ("wall_s", "peak_rss_mb", "torch_threads")}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_cold(run_dir: Path, overrides: list[str]) -> float:
    """Run the suite into `run_dir` with an empty cache root; returns the process's wall seconds."""
    cache = Path(tempfile.mkdtemp(prefix="tradeduel-cold-cache-"))
    command = [sys.executable, "run_benchmark.py", *overrides, f"hydra.run.dir={run_dir}", "progress=false"]
    print(f"load average before: {load()}; TRADEDUEL_CACHE={cache}; {' '.join(command[1:])}", flush=True)
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env={**os.environ, "TRADEDUEL_CACHE": str(cache)}, check=True)
    wall = time.perf_counter() - started
    print(f"load average after: {load()}; process wall {wall / 60:.1f} min", flush=True)
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--run", nargs=argparse.REMAINDER, help="run_benchmark.py overrides: run the suite cold first")
    args = parser.parse_args()
    if args.run:
        run_cold(args.run_dir.resolve(), args.run)
    table = row_costs(args.run_dir)
    print(table.to_string(float_format=lambda x: f"{x:.2f}"))
    for row in table.index:
        if row.startswith("SC-") and (sa := "SA-" + row[3:]) in table.index:
            ratio = table.loc[row, "s_per_sample"] / table.loc[sa, "s_per_sample"]
            print(f"{row} per sample / {sa}: {ratio:.2f}x")
    facts = machine_facts(args.run_dir)
    peak = facts["peak_rss_mb"]
    memory = f"peak resident {peak / 1024:.2f} GiB" if peak is not None else "peak resident not recorded"
    print(f"run wall {facts['wall_s']} s, {memory}, torch threads {facts['torch_threads']}")


if __name__ == "__main__":
    main()
