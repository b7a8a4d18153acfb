"""The default suite's single-agent row quiet and beside a CPU-bound neighbour, under the old
thread policy (torch's default: one thread per core), a fixed single thread, and the engine's
default (`torch_threads: idle`: the cores other work leaves free, read again before each
generation pass, `llm_backends/budget.py`), side by side in one run.

Each of the six runs is its own `run_benchmark.py +suite=quick` process (the multi-agent row
left out, the response cache off, so every token is generated; `OMP_NUM_THREADS` and
`MKL_NUM_THREADS` removed from its environment, so torch's default is the machine's). The
neighbour is one process spinning a bounded busy loop, started before a busy run and stopped
after it. The machine may carry other work too: the ratios compare conditions measured here,
one after the other, and the load average is printed before and after.

    python benchmarks/busy_threads.py [--tickers MSFT,NVDA] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run_costs import machine_facts, row_costs

ROOT = Path(__file__).resolve().parents[1]
ROW = "single_agent"
POLICIES = {"old (torch default)": "null", "torch_threads: 1": "1", "new (torch_threads: idle)": "idle"}
"""Policy name -> the `torch_threads` value; the first is the old policy, the last the engine's default."""
NEIGHBOUR_MAX_S = 3600
"""The busy loop ends by itself after this long, should this script die before stopping it."""
BUSY_LOOP = "import sys, time\nend = time.time() + float(sys.argv[1])\nwhile time.time() < end:\n    pass\n"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_row(run_dir: Path, threads: str, tickers: str) -> float:
    """Seconds the single-agent row took in a fresh run of the quick suite with `torch_threads: threads`."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    command = [sys.executable, "run_benchmark.py", "+suite=quick", "~frameworks.multi_agent", f"tickers=[{tickers}]",
               "report=false", "progress=false", f"hydra.run.dir={run_dir}",
               f"frameworks.{ROW}.llm.cache=false", f"frameworks.{ROW}.llm.torch_threads={threads}"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed:\n{done.stderr[-3000:]}")
    recorded = machine_facts(run_dir)["torch_threads"]
    print(f"    torch threads recorded in run.json: {recorded}", flush=True)
    return float(row_costs(run_dir).loc[ROW, "seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tickers", default="MSFT,NVDA", help="tickers of the row (the quick suite's: MSFT,NVDA)")
    parser.add_argument("--keep", type=Path, help="write the four run directories here instead of a temporary folder")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="busy-threads-"))
    print(f"load average before: {load()} ({os.cpu_count()} cores)", flush=True)
    seconds: dict[tuple[str, str], float] = {}
    for condition in ("quiet", "busy"):
        for policy, threads in POLICIES.items():
            neighbour = None
            if condition == "busy":
                neighbour = subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(NEIGHBOUR_MAX_S)])
            started = time.perf_counter()
            try:
                seconds[policy, condition] = run_row(folder / f"{condition}-threads-{threads}", threads, args.tickers)
            finally:
                if neighbour is not None:
                    neighbour.terminate()
                    neighbour.wait()
            print(f"  {condition:5} {policy:26} row {seconds[policy, condition]:7.1f} s "
                  f"(process {time.perf_counter() - started:.0f} s; load now {load()})", flush=True)
    print(f"\n{'policy':26} {'quiet s':>8} {'busy s':>8} {'busy/quiet':>11}")
    for policy in POLICIES:
        quiet, busy = seconds[policy, "quiet"], seconds[policy, "busy"]
        print(f"{policy:26} {quiet:8.1f} {busy:8.1f} {busy / quiet:10.2f}x")
    old, new = next(iter(POLICIES)), list(POLICIES)[-1]
    print(f"new / old: quiet {seconds[new, 'quiet'] / seconds[old, 'quiet']:.2f}x, "
          f"busy {seconds[new, 'busy'] / seconds[old, 'busy']:.2f}x")
    print(f"load average after: {load()}; run directories in {folder}")


if __name__ == "__main__":
    main()
