"""The report of a run directory: ``summary.md``, ``tables/`` (Markdown + LaTeX) and ``plots/`` (PNG).

    python -m metrics.report RUN_DIR [--benchmark buy_and_hold] [--reps 1000] [--seed 0]
        [--pair A B]... [--sweep RUN_DIR...] [--min-count 5]

Reads what the runner wrote (docs/run_directory.md) and recomputes no decision. ``summary.md``
opens with a verdict paragraph computed from the tests (:mod:`metrics.verdict`), then the run
facts and every table:

* ``main`` — per-ticker total return TR and the means over tickers of TR, ARR, SR_ann and MDD,
  each with its 95 % stationary-bootstrap CI and a marker (``*`` p < 0.05, ``**`` p < 0.01,
  Holm-adjusted) for a mean daily return different from the benchmark's; the seed range;
* ``portfolio`` — each framework's equal-weight portfolio (the series the tests use): mean, TR,
  SR_day, SR_ann, PSR, DSR over the configurations of a sweep, MCS; the SPA p-value in the caption;
* ``significance`` — paired tests vs the benchmark and vs the best framework: mean difference
  with its CI and MDE, raw and Holm p-values, Sharpe-difference test;
* ``head_to_head`` — chosen pairs (``--pair``; default every LLM framework against every other):
  the same tests, decision agreement, McNemar's test on regime accuracy;
* ``seed_tests`` — each seed of a stochastic framework against the benchmark;
* ``paper`` — the AlphaQuanter paper's layout and conventions (ARR, annualised SR, MDD);
* ``metrics``, ``seeds``, ``activity`` (rates with their counts), ``efficiency``,
  ``regime_scores``, ``regime_confusion``;
* ``agents`` — for runs with LLM frameworks: valid answers, fallbacks, parse failures, tokens
  and tool calls per decision, regime accuracy over model-made decisions, reward components,
  constrained decoding, and knowledge-cutoff warnings (:mod:`metrics.agent_rows`);
* ``roles`` — for frameworks whose LLM calls come from several roles (the debate): calls,
  prompt, reused and completion tokens per decision by role, and each role's share
  (:mod:`metrics.role_rows`);
* ``overlays`` — for runs with a risk overlay: how often each part fired per framework × ticker, and
  the drift monitor's warning (:mod:`metrics.overlay_rows`);
* ``paper_conventions`` — for runs with a framework that asks for them (its run facts): the seed
  systems' own metric conventions recomputed from the same equity, labelled
  (:mod:`metrics.paper_conventions`);
* ``memorisation`` — for runs with the memorisation probe: each framework's gap between the
  real run and its anonymised replay, with a line in the verdict (:mod:`metrics.memorisation`);
* ``plots/equity.png``, ``plots/drawdowns.png``, ``plots/pareto.png``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from core.errors import USER_ERROR_EXIT, UserError, one_line
from harness.run_directory import Run, load_run
from metrics import plots
from metrics.agent_rows import agent_section
from metrics.head_to_head import default_pairs, head_to_head, head_to_head_table
from metrics.memorisation import memorisation_report
from metrics.overlay_rows import overlay_section
from metrics.paper_conventions import paper_conventions_section
from metrics.paper_table import paper_table
from metrics.returns import daily_returns
from metrics.role_rows import role_section
from metrics.run_tables import (
    MIN_COUNT,
    activity_table,
    efficiency_table,
    main_table,
    metrics_table,
    regime_tables,
    seeds_table,
)
from metrics.significance import Significance, significance
from metrics.significance_tables import comparisons_table, portfolio_table, seed_comparisons_table
from metrics.sweep import configuration_sharpes
from metrics.tables import format_value, to_markdown, write_table
from metrics.verdict import verdict


def _spa_caption(result: Significance) -> str:
    if result.spa is None:
        return f"no SPA test: benchmark {result.benchmark} not in the run, alone, or too few days"
    return (
        f"Hansen SPA of all frameworks vs {result.benchmark}: consistent p = "
        f"{format_value(result.spa['consistent'], digits=3)} (lower {format_value(result.spa['lower'], digits=3)}, "
        f"upper {format_value(result.spa['upper'], digits=3)})"
    )


def _pairs_caption(pairs: Sequence[tuple[str, str]], chosen: bool, min_count: int) -> str:
    if not pairs:
        return ("No head-to-head pairs: no framework made LLM calls (the default pairs every LLM framework with "
                "every other); choose pairs with --pair A B")
    return (f"Head to head, A - B ({'chosen pairs' if chosen else 'every LLM framework against every other'}): "
            "paired tests on daily portfolio returns as in the significance table, Holm over the pairs; agreement = "
            "same action on the same (ticker, date[, seed]); accuracy against the regime label; McNemar's test on "
            "regime accuracy (exact below 25 discordant decisions; optimistic, as neighbouring labels overlap); "
            f"rates from fewer than {min_count} cases suppressed")


def build_tables(
    run: Run, benchmark: str, reps: int, seed: int, pairs: Sequence[tuple[str, str]] | None = None,
    sweep: Sequence[Run] = (), min_count: int = MIN_COUNT,
) -> tuple[str, list[tuple[str, pd.DataFrame, str]]]:
    """(verdict paragraph, [(name, formatted table, caption)]) of the report, in the order of ``summary.md``."""
    returns = daily_returns(run)
    result = significance(run, returns, benchmark, reps, seed, trial_sharpes=configuration_sharpes(run, list(sweep)))
    chosen = pairs is not None
    pairs = list(pairs) if chosen else default_pairs(run)
    pair_rows = head_to_head(run, returns, pairs)
    confusion, regime_scores = regime_tables(run, min_count)
    days, periods = result.days, run.periods_per_year
    nu = int(result.comparisons["df"].max()) if not result.comparisons.empty else 0
    tables = [
        ("main", main_table(run, returns, benchmark, reps, seed),
         f"Per-ticker total return TR over the {days} days and the means over tickers (the paper's 'average') of TR, "
         f"ARR, SR_ann and MDD, mean over seeds; value [95 % stationary-bootstrap CI]; * / ** = mean daily return "
         f"differs from {benchmark}'s at Holm-adjusted p < 0.05 / 0.01 (per ticker; on the equal-weight portfolio "
         f"for mean TR; family: every cell); ARR = (V_T/V_0)^(P/T) - 1 annualises the window (exponent "
         f"{periods / max(days, 1):.1f}); SR_ann = SR_day x sqrt(P); the MDD interval is indicative; seed range = "
         "lowest to highest mean TR of a framework's seeds"),
        ("portfolio", portfolio_table(result),
         "Each framework's equal-weight daily portfolio (mean over its tickers and seeds), the series every test uses: "
         "mean daily return, TR, SR_day (per day: PSR and DSR are defined on it), SR_ann = SR_day x sqrt(P), PSR = "
         "P(true SR_day > 0), DSR = PSR deflated for the configurations of that framework a sweep tried (DSR configs; "
         f"1 = nothing to deflate, DSR = PSR), MCS = Model Confidence Set at 90 %. {_spa_caption(result)}"),
        ("significance", comparisons_table(result),
         f"Paired tests on daily portfolio returns, framework minus reference ({benchmark}, and the best by mean daily "
         f"return, {result.best}): mean difference in bp/day [95 % CI] (EWC long-run variance, t with {nu} d.f.), "
         "p raw and Holm-adjusted within each reference, MDE = the difference found with 80 % power at 5 %, "
         "SR_day difference (Ledoit-Wolf delta method, EWC) with p raw and Holm"),
        ("head_to_head", head_to_head_table(pair_rows, min_count), _pairs_caption(pairs, chosen, min_count)),
        ("seed_tests", seed_comparisons_table(result),
         f"Each seed of a framework run with several seeds, alone (like for like with single-run baselines): TR and "
         f"SR_day of that seed's equal-weight portfolio, paired tests vs {benchmark}, Holm over the framework's seeds"),
        ("paper", paper_table(run),
         f"The AlphaQuanter paper's layout and conventions over {days} days: ARR % = ((V_T/V_0)^(P/T) - 1) x 100, "
         "SR = annualised Sharpe ratio = mean/std of daily returns x sqrt(P) (SR_ann), MDD %; AVG = mean over tickers; "
         "mean over seeds"),
        ("metrics", metrics_table(run),
         "metrics.csv: means over tickers (ticker=AVG rows), mean over seeds; SR_day per day, "
         "SR_ann = SR_day x sqrt(P)"),
        ("seeds", seeds_table(run, seed=seed), "Seed aggregation over seeds x tickers (stratified bootstrap 95 % CI)"),
        ("activity", activity_table(run, min_count),
         f"Trading activity pooled over each framework's episodes: rates with their counts (n), suppressed below "
         f"{min_count}; turnover = mean per episode"),
        ("efficiency", efficiency_table(run),
         "Cost per decision; rel. cost = tokens per decision / the cheapest LLM framework's"),
        ("regime_scores", regime_scores,
         f"Decisions against the regime label (H = 7, eta = 0.8, theta = 1.5 %): accuracy with the labelled decisions "
         f"(n); macro-F1 left out below {min_count}"),
        ("regime_confusion", confusion, "Confusion matrices: regime (rows) x decision (columns)"),
    ]
    return verdict(run, result, pair_rows), tables


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
    run_dir: Path | str, benchmark: str = "buy_and_hold", reps: int = 1000, seed: int = 0,
    pairs: Sequence[tuple[str, str]] | None = None, sweep: Sequence[Path | str] = (), min_count: int = MIN_COUNT,
) -> Path:
    """Write ``summary.md``, ``tables/`` and ``plots/`` into ``run_dir``; return the path of ``summary.md``.

    ``pairs``: head-to-head pairs (default: every LLM framework against every other); ``sweep``:
    the other run directories of a sweep, whose configurations the DSR deflates for;
    ``min_count``: fewest cases behind a printed rate.
    """
    run = load_run(run_dir)
    tables_dir = run.path / "tables"
    plots_dir = run.path / "plots"
    plots_dir.mkdir(exist_ok=True)
    paragraph, tables = build_tables(run, benchmark, reps, seed, pairs, [load_run(path) for path in sweep], min_count)
    probe_line, probe_section = memorisation_report(run, tables_dir, min_count)
    paragraph = f"{paragraph} {probe_line}" if probe_line else paragraph
    sections = [f"# TradeDuel run report\n\n**Verdict.** {paragraph}\n\n{_facts(run)}"]
    for name, table, caption in tables:
        write_table(table, name, tables_dir, caption)
        body = f"\n\n{to_markdown(table)}" if not table.empty else "\n"
        sections.append(f"## {name.replace('_', ' ')}\n\n{caption}.{body}")
    sections.append(agent_section(run, tables_dir))
    sections.append(role_section(run, tables_dir))
    sections.append(overlay_section(run, tables_dir))
    conventions = paper_conventions_section(run, tables_dir)
    if conventions:
        sections.append(conventions)
    sections.append(probe_section)
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
    parser.add_argument("--pair", nargs=2, action="append", metavar=("A", "B"),
                        help="a head-to-head pair (repeatable; default: every LLM framework against every other)")
    parser.add_argument("--sweep", nargs="+", type=Path, default=[], metavar="RUN_DIR",
                        help="the other run directories of a sweep: the DSR deflates for their configurations")
    parser.add_argument("--min-count", type=int, default=MIN_COUNT, help="fewest cases behind a printed rate")
    args = parser.parse_args(argv)
    pairs = [tuple(pair) for pair in args.pair] if args.pair else None
    try:
        summary = write_report(args.run_dir, args.benchmark, args.reps, args.seed, pairs, args.sweep, args.min_count)
    except UserError as error:
        print(f"error: {one_line(error)}", file=sys.stderr)
        return USER_ERROR_EXIT
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
