"""Speed of the rule baselines through the episode runner: 5 tickers × 10 years.

Prints, measured side by side in one run:
- fan-out (the default: every date of a stateless framework at once) over 5 synthetic tickers
  × 2,520 bars × all six baselines = 75,600 decisions — the best of `--repeats` runs in wall
  and CPU seconds (the machine may be shared: CPU seconds move less with its load);
- with `--against DIR`, the same fan-out measured on another checkout of the project (e.g. the
  main branch), alternating run by run with this one, and the ratio of the two;
- the same runner forced to decide one context at a time (batch_size = 1) on a one-ticker,
  one-year subset, and the per-decision speed-up of fan-out over it.

    python benchmarks/baseline_speed.py [--repeats 3] [--against ../main]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from frameworks.baselines.buy_and_hold import BuyAndHold
from frameworks.baselines.kdj_rsi import KDJRSI
from frameworks.baselines.macd import MACDCross
from frameworks.baselines.random_policy import RandomPolicy
from frameworks.baselines.sma_cross import SMACross
from frameworks.baselines.zmr import ZScoreMeanReversion
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from market.data import MarketData
from market.synthetic import generate_market

TICKERS = ["ALFA", "BRVO", "CHRL", "DLTA", "ECHO"]
YEARS = 10
WARMUP_BARS = 60


def baselines() -> list[FrameworkEntry]:
    frameworks = {"buy_and_hold": BuyAndHold(), "macd": MACDCross(), "sma_cross": SMACross(),
                  "zmr": ZScoreMeanReversion(), "kdj_rsi": KDJRSI(), "random": RandomPolicy()}
    return [FrameworkEntry(name, f, name) for name, f in frameworks.items()]


def timed_run(data: MarketData, tickers: list[str], days: pd.DatetimeIndex, batch_size: int) -> tuple[int, float, float]:
    """(decisions made, wall seconds, CPU seconds) for all baselines over `days` with a fresh journal."""
    spec = RunSpec(tickers=tickers, seeds=[0], start=days[0], end=days[-1], batch_size=batch_size)
    with tempfile.TemporaryDirectory() as folder, Journal(Path(folder) / "journal.sqlite") as journal:
        wall, cpu = time.perf_counter(), time.process_time()
        result = EpisodeRunner(data, spec, journal, progress=False).run(baselines())
        return result.made, time.perf_counter() - wall, time.process_time() - cpu


def market() -> tuple[MarketData, pd.DatetimeIndex]:
    data = generate_market(tickers=TICKERS, days=252 * YEARS + WARMUP_BARS, start="2010-01-01")
    return data, data.trading_days(TICKERS[0])[WARMUP_BARS:]


def fan_out_once() -> dict[str, float]:
    """One fan-out measurement in this process (`--one-fan-out`: what `--against` runs in the other checkout)."""
    data, days = market()
    made, wall, cpu = timed_run(data, TICKERS, days, batch_size=100_000)
    return {"made": made, "wall": wall, "cpu": cpu}


def fan_out_in(checkout: Path) -> dict[str, float]:
    """`fan_out_once` in a child process that imports the project from `checkout`."""
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
    out = subprocess.run([sys.executable, __file__, "--one-fan-out"], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fan-out runs per checkout; the best is reported")
    parser.add_argument("--against", type=Path, help="another checkout of the project to time the same way, alternately")
    parser.add_argument("--one-fan-out", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_fan_out:
        print(json.dumps(fan_out_once()))
        return
    here = Path(__file__).resolve().parents[1]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    runs: dict[str, list[dict[str, float]]] = {"this checkout": []}
    if args.against is not None:
        runs[f"{args.against}"] = []
    for _ in range(args.repeats):
        runs["this checkout"].append(fan_out_in(here))
        if args.against is not None:
            runs[f"{args.against}"].append(fan_out_in(args.against))
    best = {}
    for name, measured in runs.items():
        wall, cpu = min(m["wall"] for m in measured), min(m["cpu"] for m in measured)
        best[name] = (wall, cpu)
        made = int(measured[0]["made"])
        print(f"fan-out, {name}: {made} decisions in {wall:.2f} s wall, {cpu:.2f} s CPU (best of {len(measured)}; "
              f"{made / wall:,.0f} decisions/s)")
    if args.against is not None:
        (wall, cpu), (wall_0, cpu_0) = best["this checkout"], best[f"{args.against}"]
        print(f"this checkout / {args.against}: {wall / wall_0:.2f}x wall, {cpu / cpu_0:.2f}x CPU")

    data, days = market()
    made, wall, _ = timed_run(data, TICKERS, days, batch_size=100_000)
    made_1, wall_1, _ = timed_run(data, TICKERS[:1], days[:252], batch_size=1)
    print(f"one by one: {made_1} decisions in {wall_1:.2f} s ({made_1 / wall_1:,.0f} decisions/s, 1 ticker × 1 year); "
          f"fan-out speed-up per decision: {(made / wall) / (made_1 / wall_1):.1f}×")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
