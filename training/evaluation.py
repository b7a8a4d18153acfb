"""The proof's evaluation: trained checkpoints against their own starting points on the test split.

    python -m training.evaluation RUN_DIR --pair grpo_seed0:start_seed0 --pair grpo_seed1:start_seed1 \
        --out results/training/evaluation.md

RUN_DIR is a run directory of `run_benchmark.py` (docs/run_directory.md) holding the frameworks
named in the pairs. Per framework: ARR, SR (per day) and MDD averaged over tickers (`metrics.csv`)
and the regime accuracy of its decisions (the report's confusion matrices). Per pair
(trained, start), on their equal-weight daily portfolio returns over tickers: the mean daily
difference d = trained − start in basis points, the report's paired test of E[d] = 0
(`metrics.paired.mean_difference_test`: stationary bootstrap, two-sided p-value), and the 95 %
percentile interval of mean(d) over the same bootstrap replications. Writes a Markdown table
and a CSV next to it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from metrics import regime
from metrics.bootstrap import replication_indices
from metrics.episodes import AVERAGE_TICKER
from metrics.paired import mean_difference_test
from metrics.rundir import Run, daily_returns, load_run, portfolio_returns
from metrics.run_tables import regime_confusions

BASIS_POINTS = 1e4


def framework_table(run: Run) -> pd.DataFrame:
    """ARR, SR, MDD (ticker averages, mean over seeds) and regime accuracy per framework."""
    averages = run.metrics[run.metrics["ticker"] == AVERAGE_TICKER].groupby("framework")[["ARR", "SR", "MDD"]].mean()
    accuracy = {name: regime.regime_accuracy(matrix) for name, matrix in regime_confusions(run).items()}
    return averages.assign(regime_accuracy=pd.Series(accuracy)).reindex(run.frameworks)


def paired_difference(a: np.ndarray, b: np.ndarray, reps: int, seed: int, size: float = 0.95) -> dict[str, float]:
    """Mean daily difference a − b (bp), its stationary-bootstrap p-value and percentile CI (bp)."""
    difference = a - b
    mean, p_value = mean_difference_test(a, b, reps, seed)
    means = difference[replication_indices(difference, reps, seed)].mean(axis=1)
    low, high = np.percentile(means, [50 * (1 - size), 50 * (1 + size)])
    return {"dmean_bp": mean * BASIS_POINTS, "ci_low_bp": low * BASIS_POINTS, "ci_high_bp": high * BASIS_POINTS,
            "p_value": p_value, "days": len(difference)}


def pair_table(run: Run, pairs: list[tuple[str, str]], reps: int, seed: int) -> pd.DataFrame:
    """One row per (trained, start) pair: `paired_difference` of their portfolio returns."""
    portfolio = portfolio_returns(daily_returns(run))
    rows = [{"trained": trained, "start": start,
             **paired_difference(portfolio[trained].to_numpy(), portfolio[start].to_numpy(), reps, seed)}
            for trained, start in pairs]
    return pd.DataFrame(rows)


def write_evaluation(run_dir: Path, pairs: list[tuple[str, str]], out: Path, reps: int = 2000, seed: int = 0) -> Path:
    """The Markdown file `out` (and `out` with .csv for the pairs): both tables of the module docstring."""
    run = load_run(run_dir)
    frameworks, compared = framework_table(run), pair_table(run, pairs, reps, seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    compared.to_csv(out.with_suffix(".csv"), index=False, float_format="%.6g")
    window = f"{run.equity['date'].min():%Y-%m-%d} .. {run.equity['date'].max():%Y-%m-%d}"
    out.write_text(
        f"# Trained policies against their starting points\n\n"
        f"Run: {run.info.get('suite', run_dir.name)}; tickers {', '.join(run.tickers)}; test window {window}.\n\n"
        f"## Frameworks\n\nARR, MDD: fractions; SR per day; averages over tickers.\n\n"
        f"{frameworks.to_markdown(floatfmt='.4f')}\n\n"
        f"## Trained vs start\n\nMean daily difference of the equal-weight portfolios (bp/day), stationary-bootstrap "
        f"p-value (two-sided, {reps} replications) and 95 % percentile CI of the mean difference.\n\n"
        f"{compared.to_markdown(index=False, floatfmt='.4g')}\n")
    return out


def parse_pair(text: str) -> tuple[str, str]:
    trained, _, start = text.partition(":")
    if not trained or not start:
        raise argparse.ArgumentTypeError(f"{text!r}: expected TRAINED:START framework names")
    return trained, start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.evaluation", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--pair", type=parse_pair, action="append", required=True, help="TRAINED:START")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(write_evaluation(args.run_dir, args.pair, args.out, args.reps, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
