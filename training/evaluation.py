"""The proof's evaluation: trained checkpoints against their own starting points on the test split.

    python -m training.evaluation RUN_DIR --pair grpo_seed0:start_seed0 --pair grpo_seed1:start_seed1 \
        --out results/training/evaluation.md

RUN_DIR is a run directory of `run_benchmark.py` (docs/run_directory.md) holding the frameworks
named in the pairs. Per framework: ARR, SR (annualised) and MDD averaged over tickers (`metrics.csv`)
and the regime accuracy of its decisions (the report's confusion matrices). Per pair
(trained, start), on their equal-weight daily portfolio returns over tickers: the mean daily
difference d = trained − start in basis points and the report's calibrated paired test of
E[d] = 0 (`metrics.paired.mean_difference_test`: t = mean(d)/SE with the EWC long-run variance
and a t(ν) reference, two-sided p-value), with its 95 % CI of mean(d) and minimum detectable
effect. Writes a Markdown table and a CSV next to it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from harness.run_directory import Run, load_run
from metrics import regime
from metrics.episodes import AVERAGE_TICKER
from metrics.paired import mean_difference_test
from metrics.returns import daily_returns, portfolio_returns
from metrics.run_tables import regime_confusions

BASIS_POINTS = 1e4


def framework_table(run: Run) -> pd.DataFrame:
    """ARR, SR_ann, MDD (ticker averages, mean over seeds) and regime accuracy per framework."""
    averages = run.metrics[run.metrics["ticker"] == AVERAGE_TICKER].groupby("framework")[["ARR", "SR_ann", "MDD"]].mean()
    accuracy = {name: regime.regime_accuracy(matrix) for name, matrix in regime_confusions(run).items()}
    return averages.assign(regime_accuracy=pd.Series(accuracy)).reindex(run.frameworks)


def paired_difference(a: np.ndarray, b: np.ndarray, size: float = 0.95) -> dict[str, float]:
    """The report's paired test of E[a − b] = 0 (`metrics.paired.mean_difference_test`: EWC long-run
    variance, t(ν) reference): mean daily difference, its CI and minimum detectable effect (bp), p-value."""
    test = mean_difference_test(a, b)
    low, high = test.ci(size)
    return {"dmean_bp": test.estimate * BASIS_POINTS, "ci_low_bp": low * BASIS_POINTS, "ci_high_bp": high * BASIS_POINTS,
            "p_value": test.pvalue, "mde_bp": test.minimum_detectable_effect() * BASIS_POINTS, "days": len(a)}


def pair_table(run: Run, pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """One row per (trained, start) pair: `paired_difference` of their portfolio returns."""
    portfolio = portfolio_returns(daily_returns(run))
    rows = [{"trained": trained, "start": start,
             **paired_difference(portfolio[trained].to_numpy(), portfolio[start].to_numpy())}
            for trained, start in pairs]
    return pd.DataFrame(rows)


def write_evaluation(run_dir: Path, pairs: list[tuple[str, str]], out: Path) -> Path:
    """The Markdown file `out` (and `out` with .csv for the pairs): both tables of the module docstring."""
    run = load_run(run_dir)
    frameworks, compared = framework_table(run), pair_table(run, pairs)
    out.parent.mkdir(parents=True, exist_ok=True)
    compared.to_csv(out.with_suffix(".csv"), index=False, float_format="%.6g")
    window = f"{run.equity['date'].min():%Y-%m-%d} .. {run.equity['date'].max():%Y-%m-%d}"
    out.write_text(
        f"# Trained policies against their starting points\n\n"
        f"Run: {run.info.get('suite', run_dir.name)}; tickers {', '.join(run.tickers)}; test window {window}.\n\n"
        f"## Frameworks\n\nARR, MDD: fractions; SR_ann annualised (√252 · mean/std of daily returns); averages over tickers.\n\n"
        f"{frameworks.to_markdown(floatfmt='.4f')}\n\n"
        f"## Trained vs start\n\nMean daily difference of the equal-weight portfolios (bp/day), the report's paired "
        f"test (EWC long-run variance, t(ν) reference; docs/metrics.md): two-sided p-value, 95 % CI of the mean "
        f"difference and its minimum detectable effect (5 %, power 80 %).\n\n"
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
    args = parser.parse_args(argv)
    print(write_evaluation(args.run_dir, args.pair, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
