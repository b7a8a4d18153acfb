"""Speed of the rule baselines through the episode runner: 5 tickers × 10 years.

Prints, measured side by side in one run:
- fan-out (the default: every date of a stateless framework at once) over 5 synthetic tickers
  × 2,520 bars × all six baselines — decisions/s and wall time;
- the same runner forced to decide one context at a time (batch_size = 1) on a one-ticker,
  one-year subset, and the per-decision speed-up of fan-out over it.

    python benchmarks/baseline_speed.py
"""

from __future__ import annotations

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


def baselines() -> list[FrameworkEntry]:
    frameworks = {"buy_and_hold": BuyAndHold(), "macd": MACDCross(), "sma_cross": SMACross(),
                  "zmr": ZScoreMeanReversion(), "kdj_rsi": KDJRSI(), "random": RandomPolicy()}
    return [FrameworkEntry(name, f, name) for name, f in frameworks.items()]


def timed_run(data: MarketData, tickers: list[str], days: pd.DatetimeIndex, batch_size: int) -> tuple[int, float]:
    """(decisions made, seconds) for all baselines over `days` with a fresh journal."""
    spec = RunSpec(tickers=tickers, seeds=[0], start=days[0], end=days[-1], batch_size=batch_size)
    with tempfile.TemporaryDirectory() as folder, Journal(Path(folder) / "journal.sqlite") as journal:
        started = time.perf_counter()
        result = EpisodeRunner(data, spec, journal, progress=False).run(baselines())
        return result.made, time.perf_counter() - started


def main() -> None:
    started = time.perf_counter()
    data = generate_market(tickers=TICKERS, days=252 * YEARS + 60, start="2010-01-01")
    print(f"synthetic market: {len(TICKERS)} tickers × {252 * YEARS + 60} bars in {time.perf_counter() - started:.1f} s")
    days = data.trading_days(TICKERS[0])[60:]

    made, seconds = timed_run(data, TICKERS, days, batch_size=100_000)
    fan_out_rate = made / seconds
    print(f"fan-out:      {made:>6} decisions in {seconds:6.2f} s  ({fan_out_rate:,.0f} decisions/s)")

    subset = days[:252]
    made_1, seconds_1 = timed_run(data, TICKERS[:1], subset, batch_size=1)
    one_rate = made_1 / seconds_1
    print(f"one by one:   {made_1:>6} decisions in {seconds_1:6.2f} s  ({one_rate:,.0f} decisions/s, 1 ticker × 1 year)")
    print(f"fan-out speed-up per decision: {fan_out_rate / one_rate:.1f}×")


if __name__ == "__main__":
    main()
