"""Cost of the FinRL-style agents on the paper's protocol shape: 5 tickers, the paper's splits.

Trains one policy per algorithm (seed 0) for `--timesteps` steps on a synthetic market spanning
the paper's training window (2022-09-01 .. 2024-03-30, ~395 bars per ticker), then trades the
paper's test window (2025-01-01 .. 2025-06-30) through the episode runner. Prints per algorithm
the training wall and CPU seconds, both per 10k timesteps, and the trading time; then what
5 tickers × 3 seeds × 2 algorithms cost at the configured default timesteps.

    python benchmarks/finrl_training_speed.py --timesteps 10000
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd

from frameworks.rl.finrl import FinRLAgent
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from market.synthetic import generate_market

TICKERS = ["ALFA", "BRVO", "CHRL", "DLTA", "ECHO"]
TRAIN = {"start": "2022-09-01", "end": "2024-03-30"}
TEST_START, TEST_END = pd.Timestamp("2025-01-01"), pd.Timestamp("2025-06-30")
SEEDS, ALGORITHMS = 3, ("a2c", "ppo")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=10_000)
    parser.add_argument("--default-timesteps", type=int, default=30_000, help="the configs' default, for the projection")
    args = parser.parse_args()
    data = generate_market(tickers=TICKERS, start="2021-09-01", days=1000, seed=0)
    spec = RunSpec(tickers=TICKERS, seeds=[0], start=TEST_START, end=TEST_END)
    per_10k = {}
    for algorithm in ALGORITHMS:
        with tempfile.TemporaryDirectory() as folder:
            agent = FinRLAgent(algorithm, TICKERS, TRAIN, timesteps=args.timesteps, cache_dir=folder)
            with Journal(Path(folder) / "journal.sqlite") as journal:
                started = time.perf_counter()
                result = EpisodeRunner(data, spec, journal, progress=False).run([FrameworkEntry(algorithm, agent, algorithm)])
                total = time.perf_counter() - started
        facts = agent.training_facts()[0]
        wall, cpu = facts["train_wall_s"], facts["train_cpu_s"]
        per_10k[algorithm] = cpu * 1e4 / facts["timesteps"]
        print(f"{algorithm}: {facts['timesteps']} timesteps in {wall:.1f} s wall, {cpu:.1f} s CPU "
              f"({wall * 1e4 / facts['timesteps']:.1f} s wall, {per_10k[algorithm]:.1f} s CPU per 10k); "
              f"{result.made} decisions traded in {total - wall:.1f} s")
    suite = sum(per_10k.values()) * SEEDS * args.default_timesteps / 1e4
    print(f"projected training at {args.default_timesteps} timesteps, {SEEDS} seeds × {len(ALGORITHMS)} algorithms: "
          f"{suite / 60:.1f} CPU minutes")


if __name__ == "__main__":
    main()
