"""How fast the portfolio and futures tasks run, per decision, next to the single-asset trading task.

    python benchmarks/task_speed.py              # portfolio 24 assets x 5 years daily; futures 100K minute bars
    python benchmarks/task_speed.py --years 1 --minutes 20000

Each case runs the episode runner end to end into a fresh journal (decisions, journal appends,
checks and the task's simulator), data generation excluded:

- portfolio: the synthetic sector universe (3 sectors x 8 stocks), `--years` x 252 daily bars,
  the four portfolio rule baselines (equal weight, buy-and-hold of equal weights, inverse
  volatility, momentum top-k); target < 10 s on 2 cores;
- futures: the synthetic minute market, `--minutes` one-minute bars, the trend-following rule;
  target < 30 s;
- trading (the reference): one synthetic ticker over the same daily window with buy-and-hold
  and the SMA crossover, today's single-asset path.

It prints each case's seconds, decisions and ms per decision, and the ratio of each task's time
per decision to the trading task's. Timings on a shared machine are noisy; run it twice.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd

from frameworks.baselines.buy_and_hold import BuyAndHold
from frameworks.baselines.futures_rules import TrendFollowing
from frameworks.baselines.portfolio_rules import BuyAndHoldEqual, EqualWeight, InverseVolatility, MomentumTopK
from frameworks.baselines.sma_cross import SMACross
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from harness.tasks.futures import FuturesTask
from harness.tasks.portfolio import PortfolioTask
from market.synthetic import generate_market
from market.synthetic.intraday import generate_intraday

WARMUP_DAYS = 80
"""Daily bars before the window (the rules' lookbacks)."""

SECTOR_TICKERS = [f"{sector}{i}" for sector in ("TEC", "FIN", "NRG") for i in range(1, 9)]


def timed(data, spec: RunSpec, frameworks: dict) -> tuple[float, int]:
    """Seconds of one run of `frameworks` under `spec`, and its decisions."""
    with tempfile.TemporaryDirectory() as folder, Journal(Path(folder) / "journal.sqlite") as journal:
        started = time.perf_counter()
        runner = EpisodeRunner(data, spec, journal, progress=False, warn=lambda line: None)
        result = runner.run([FrameworkEntry(name, f, config_hash=name) for name, f in frameworks.items()])
        return time.perf_counter() - started, result.made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--years", type=float, default=5.0, help="years of daily bars (252 a year)")
    parser.add_argument("--minutes", type=int, default=100_000, help="one-minute bars of the futures window")
    args = parser.parse_args()
    days = int(args.years * 252)

    universe = generate_market(tickers=SECTOR_TICKERS, days=days + WARMUP_DAYS, sectors=3, seed=0)
    index = universe.frame(SECTOR_TICKERS[0]).index
    window = {"start": index[WARMUP_DAYS], "end": index[-1], "seeds": [0]}
    rows = []

    single = generate_market(tickers=["ALFA"], days=days + WARMUP_DAYS, seed=0)
    spec = RunSpec(tickers=["ALFA"], **window)
    rows.append(("trading", "1 asset, buy_and_hold + sma_cross", *timed(single, spec, {
        "buy_and_hold": BuyAndHold(), "sma_cross": SMACross()})))

    spec = RunSpec(tickers=SECTOR_TICKERS, task=PortfolioTask(), **window)
    rows.append(("portfolio", f"{len(SECTOR_TICKERS)} assets x {days} days, 4 rules", *timed(universe, spec, {
        "equal_weight": EqualWeight(), "buy_and_hold_equal": BuyAndHoldEqual(),
        "inverse_volatility": InverseVolatility(), "momentum_top_k": MomentumTopK()})))

    day_bars = 24 * 60
    whole_days = -(-args.minutes // day_bars)
    minutes = generate_intraday(tickers=["SYNBTC"], bars=(whole_days + 2) * day_bars, seed=0)
    first = minutes.frame("SYNBTC").index[0].normalize() + pd.Timedelta(days=1)
    spec = RunSpec(tickers=["SYNBTC"], seeds=[0], start=first, end=first + pd.Timedelta(days=whole_days - 1),
                   task=FuturesTask())
    rows.append(("futures", f"{whole_days * day_bars} minute bars, trend", *timed(minutes, spec, {
        "trend": TrendFollowing()})))

    reference = rows[0][2] / rows[0][3]
    print(f"{'task':<10} {'case':<40} {'seconds':>8} {'decisions':>10} {'ms/decision':>12} {'x trading':>10}")
    for task, case, seconds, made in rows:
        per = seconds / made
        print(f"{task:<10} {case:<40} {seconds:8.2f} {made:10d} {per * 1e3:12.4f} {per / reference:10.2f}")


if __name__ == "__main__":
    main()
