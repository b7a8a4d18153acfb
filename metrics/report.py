"""The report of a run directory: ``summary.md``, ``tables/`` (Markdown + LaTeX) and ``plots/`` (PNG).

    python -m metrics.report RUN_DIR [--benchmark buy_and_hold] [--reps 1000] [--seed 0]

Reads what the runner wrote (docs/run_directory.md) and recomputes no decision. Writes:

* ``tables/main.{md,tex}`` — the paper's layout: ARR % per ticker, average ARR %, SR, MDD %,
  each with its 95 % stationary-bootstrap CI and a marker (``*`` p < 0.05, ``**`` p < 0.01,
  Holm-adjusted) for a mean daily return different from the benchmark's;
* ``tables/metrics.{md,tex}`` — every metric of the ``ticker=AVG`` rows, mean over seeds;
* ``tables/significance.{md,tex}`` — paired tests vs the benchmark and vs the best framework
  (raw and Holm p-values), MCS p-value and membership, PSR and DSR; the SPA p-value is in the
  caption;
* ``tables/seeds.{md,tex}`` — mean, std, IQM and CIs over seeds x tickers (several seeds only);
* ``tables/activity.{md,tex}`` — closed trades, win rates, exposure, turnover;
* ``tables/efficiency.{md,tex}`` — LLM calls, tokens and wall time per decision, relative cost;
* ``tables/regime_confusion.{md,tex}`` and ``tables/regime_scores.{md,tex}`` — decisions
  against the paper's regime label, accuracy and macro-F1;
* ``tables/agents.{md,tex}`` — for runs with LLM frameworks: valid answers, fallbacks, parse
  failures, tokens and tool calls per decision, regime accuracy over model-made decisions,
  reward components, constrained decoding, and knowledge-cutoff warnings (:mod:`metrics.agent_rows`);
* ``plots/equity.png``, ``plots/drawdowns.png``, ``plots/pareto.png``;
* ``summary.md`` — run facts and all of the above in one page.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from market.errors import DataError
from metrics import plots
from metrics.agent_rows import agent_section
from metrics.rundir import Run, daily_returns, load_run
from metrics.run_tables import (
    activity_table,
    efficiency_table,
    main_table,
    metrics_table,
    regime_tables,
    seeds_table,
)
from metrics.significance import significance, significance_table
from metrics.tables import format_value, to_markdown, write_table


def _spa_caption(result) -> str:
    if result.spa is None:
        return f"no SPA test: benchmark {result.benchmark} not in the run or alone"
    return (
        f"Hansen SPA of all frameworks vs {result.benchmark}: consistent p = "
        f"{format_value(result.spa['consistent'], digits=3)} (lower {format_value(result.spa['lower'], digits=3)}, "
        f"upper {format_value(result.spa['upper'], digits=3)})"
    )


def build_tables(run: Run, benchmark: str, reps: int, seed: int) -> list[tuple[str, pd.DataFrame, str]]:
    """(name, formatted table, caption) of every table of the report, in the order of ``summary.md``."""
    returns = daily_returns(run)
    result = significance(run, returns, benchmark, reps, seed)
    confusion, regime_scores = regime_tables(run)
    days = returns.shape[0]
    return [
        ("main", main_table(run, returns, benchmark, reps, seed),
         f"Performance over {days} days: value [95 % stationary-bootstrap CI]; * / ** = mean daily return differs "
         f"from {benchmark} at Holm-adjusted p < 0.05 / 0.01; SR per day, not annualised"),
        ("metrics", metrics_table(run), "metrics.csv: averages over tickers (ticker=AVG rows), mean over seeds"),
        ("significance", significance_table(result),
         f"Paired tests on daily portfolio returns vs {benchmark} (bench)"
         + ("" if result.best == benchmark else f" and vs the best, {result.best} (best)")
         + f"; the best by average ARR is {result.best}; "
         f"MCS at 90 %; DSR over {result.n_trials} configurations. {_spa_caption(result)}"),
        ("seeds", seeds_table(run, seed=seed), "Seed aggregation over seeds x tickers (stratified bootstrap 95 % CI)"),
        ("activity", activity_table(run), "Trading activity, mean per episode"),
        ("efficiency", efficiency_table(run),
         "Cost per decision; rel. cost = tokens per decision / the cheapest LLM framework's"),
        ("regime_scores", regime_scores, "Decisions against the regime label (H = 7, eta = 0.8, theta = 1.5 %)"),
        ("regime_confusion", confusion, "Confusion matrices: regime (rows) x decision (columns)"),
    ]


def _facts(run: Run) -> str:
    info = run.info
    window = f"{run.equity['date'].min():%Y-%m-%d} .. {run.equity['date'].max():%Y-%m-%d}"
    seeds = sorted(run.equity["seed"].unique().tolist())
    lines = [
        f"- suite: {info.get('suite', 'unknown')}",
        f"- frameworks: {', '.join(run.frameworks)}",
        f"- tickers: {', '.join(run.tickers)}; seeds: {', '.join(map(str, seeds))}",
        f"- window: {window}; {format_value(run.periods_per_year, digits=0)} periods per year",
    ]
    return "\n".join(lines) + "\n"


def write_report(
    run_dir: Path | str, benchmark: str = "buy_and_hold", reps: int = 1000, seed: int = 0
) -> Path:
    """Write ``summary.md``, ``tables/`` and ``plots/`` into ``run_dir``; return the path of ``summary.md``."""
    run = load_run(run_dir)
    tables_dir = run.path / "tables"
    plots_dir = run.path / "plots"
    plots_dir.mkdir(exist_ok=True)
    sections = [f"# TradeDuel run report\n\n{_facts(run)}"]
    for name, table, caption in build_tables(run, benchmark, reps, seed):
        write_table(table, name, tables_dir, caption)
        if not table.empty:
            sections.append(f"## {name.replace('_', ' ')}\n\n{caption}.\n\n{to_markdown(table)}")
    sections.append(agent_section(run, tables_dir))
    figures = {
        "equity": plots.plot_equity(run, plots_dir / "equity.png", benchmark),
        "drawdowns": plots.plot_drawdowns(run, plots_dir / "drawdowns.png", benchmark),
        "pareto": plots.plot_pareto(run, plots_dir / "pareto.png", benchmark),
    }
    images = "\n".join(f"![{name}](plots/{path.name})" for name, path in figures.items())
    sections.append(f"## plots\n\n{images}\n")
    summary = run.path / "summary.md"
    summary.write_text("\n".join(sections))
    return summary


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m metrics.report RUN_DIR``."""
    parser = argparse.ArgumentParser(prog="python -m metrics.report", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--benchmark", default="buy_and_hold", help="framework the tests compare against")
    parser.add_argument("--reps", type=int, default=1000, help="bootstrap replications")
    parser.add_argument("--seed", type=int, default=0, help="seed of every bootstrap")
    args = parser.parse_args(argv)
    try:
        summary = write_report(args.run_dir, args.benchmark, args.reps, args.seed)
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
