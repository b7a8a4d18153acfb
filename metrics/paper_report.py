"""The AlphaQuanter paper's tables with ours beside them: ``paper/`` of a run directory.

    python -m metrics.paper_report RUN_DIR [--results DIR] [--reps 1000] [--seed 0]

Reads what the runner wrote and the run config's ``paper`` settings (``config.yaml``; class
:class:`PaperSettings`); recomputes no decision. Writes ``paper/summary.md``, each table as
Markdown and LaTeX under ``paper/tables/``, its numbers as CSV under ``paper/csv/``, and
``paper/equity.png``; with ``results_dir`` (or ``--results``) the same files are copied there.

* ``main`` — the paper's Tables 5 and 10–11: per-ticker ARR %, then AVG ARR %, SR (annualised:
  mean/std of daily returns x sqrt(P)) and MDD %, in the paper's order of rows: the paper's
  line, ours with its 95 % stationary-bootstrap CI and a marker (* / ** Holm-adjusted p < 0.05 /
  0.01, mean daily return vs the benchmark: per ticker, and on the equal-weight portfolio for
  AVG ARR), and ours − paper (Δ; on AVG only when our tickers are the paper's). A paper row
  without a counterpart is the paper's line alone; a suite row that was not run is a line
  "not run"; a framework without a paper row is ours alone.
* ``head_to_head`` — per backbone B, the configured pairs of row prefixes (``SA-B`` vs ``MA-B``,
  the compute-matched ``SC-B`` vs ``MA-B``, ...): paired tests, agreement, McNemar
  (:mod:`metrics.head_to_head`), beside the paper's AVG ARR of both rows.
* ``efficiency`` — the paper's Table 6: tokens per decision, relative cost (tokens per decision
  / those of the first ``cost_reference`` prefix that ran on the same backbone, MA then SA; the
  paper's multi-agent pipeline = 1) and AVG ARR %, beside the paper's values; for a
  self-consistency row, how its k was set (run.json ``rows``: measured or explicit).
* ``ablations`` — the paper's Tables 13–14 (reward and θ ablations): the configured rows, from
  their checkpoints, or "not run" with the command that trains them.
* ``rolling`` — the paper's Table 12: windows re-simulated from the journal's decisions
  (:mod:`metrics.rolling`), averaged over windows, in the main table's layout.
* ``mcs`` — Model Confidence Set (90 %) membership of every framework's equal-weight portfolio.
* ``provenance`` — how every row was obtained (:mod:`metrics.provenance`).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import pandas as pd
from omegaconf import OmegaConf
from pydantic import BaseModel, ConfigDict

from core.config_keys import typed_config
from core.errors import USER_ERROR_EXIT, ConfigError, UserError, one_line
from harness.execution import ExecutionConfig
from harness.run_directory import Run, load_run
from metrics import plots
from metrics.bootstrap import average_metric_cis
from metrics.episodes import AVERAGE_TICKER
from metrics.head_to_head import head_to_head, head_to_head_table
from metrics.model_selection import model_confidence_set
from metrics.paper_reference import (
    ABLATION,
    EFFICIENCY,
    MAIN,
    NOT_IN_PAPER,
    OURS,
    ROLLING,
    PaperRow,
    beside_paper,
    paper_layout,
    paper_reference,
    paper_rows,
)
from metrics.provenance import provenance_numbers
from metrics.returns import daily_returns, portfolio_returns
from metrics.rolling import bars_by_ticker, rolling_table, rolling_windows, window_metrics
from metrics.run_tables import efficiency_numbers, return_markers
from metrics.significance import MIN_BOOTSTRAP_DAYS
from metrics.tables import MISSING, format_ci, format_value, to_markdown, write_table

NOT_RUN = "not run"
SCALES = {"ARR": 100.0, "MDD": 100.0, "SR_ann": 1.0, "tokens": 1.0, "relative_cost": 1.0}
"""Our unit -> the paper's (ARR and MDD in %)."""
HEADINGS = {"ARR": "ARR %", "SR_ann": "SR", "MDD": "MDD %", "tokens": "tokens/dec", "relative_cost": "rel. cost"}
KEYS = ["category", "model", "framework", "source"]


class RollingSettings(BaseModel):
    """Rolling windows: `months` or `days` long (one of them), stepped `step_days` calendar days."""

    model_config = ConfigDict(extra="forbid")
    months: int | None = 3
    days: int | None = None
    step_days: int = 7


class PaperSettings(BaseModel):
    """The run config's `paper` node (configs/suite/paper.yaml documents each field)."""

    model_config = ConfigDict(extra="forbid")
    rows: dict[str, dict[str, str]]
    benchmark: str = "buy_and_hold"
    head_to_head: list[tuple[str, str]] = []
    cost_reference: list[str] = ["MA", "SA"]
    ablations: list[str] = []
    rolling: RollingSettings = RollingSettings()
    results_dir: str | None = None


def paper_units(value: float, metric: str, digits: int = 2) -> str:
    """A value of ours or the paper's in the paper's units (ARR, MDD in %), `digits` decimals."""
    return format_value(value, SCALES.get(metric, 1.0), digits if metric != "tokens" else 0)


def column_metric(column: str) -> tuple[str, str]:
    """"<ticker> <metric>" -> (ticker, metric)."""
    ticker, metric = column.split(" ", 1)
    return ticker, metric


def heading(column: str) -> str:
    """The paper's heading of a layout column: "GOOGL ARR %", "AVG SR"."""
    ticker, metric = column_metric(column)
    return f"{ticker} {HEADINGS.get(metric, metric)}"


def our_cells(run: Run, returns: pd.DataFrame, layout: pd.DataFrame, benchmark: str, reps: int,
              seed: int) -> dict[tuple[str, str], str]:
    """(framework, layout column) -> "value [95 % CI]marker" for our lines of a main-table layout."""
    markers = return_markers(run, returns, benchmark)
    cells = {}
    ours = layout[layout.index.get_level_values("source") == OURS]
    for (_, _, framework, _), line in ours.iterrows():
        for column, value in line.items():
            ticker, metric = column_metric(column)
            if pd.isna(value) or (ticker != AVERAGE_TICKER and ticker not in returns[framework].columns.get_level_values(0)):
                cells[(framework, column)] = MISSING
                continue
            episodes = returns[framework] if ticker == AVERAGE_TICKER else returns[framework][[ticker]]
            low, high = average_metric_cis(episodes, run.periods_per_year, reps, seed)[metric]
            marker = markers.get((framework, ticker), "") if metric == "ARR" else ""
            cells[(framework, column)] = format_ci(value, low, high, SCALES[metric], 2, marker)
    return cells


def formatted_layout(layout: pd.DataFrame, cells: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """A `paper_layout` in the paper's units: the paper's and Δ lines as numbers, ours from `cells` when given."""
    lines = []
    for (_, _, framework, source), line in layout.iterrows():
        ours = cells if cells is not None and source == OURS else {}
        lines.append([ours.get((framework, column)) or paper_units(value, column_metric(column)[1])
                      for column, value in line.items()])
    return pd.DataFrame(lines, index=layout.index, columns=[heading(c) for c in layout.columns])


def with_not_run(table: pd.DataFrame, not_run: dict[str, str], rows: dict[str, PaperRow]) -> pd.DataFrame:
    """`table` with a line per row that was not run, after its paper row's lines (else at the end), cells "not run"."""
    lines = list(table.iterrows())
    for name, status in not_run.items():
        label = rows[name].label if name in rows else name
        key = ("", label, name, OURS)
        line = pd.Series({c: NOT_RUN for c in table.columns}, name=key)
        if "how" in table.columns:
            line["how"] = status
        models = [k[1] for k, _ in lines]
        at = len(lines) - models[::-1].index(label) if label in models else len(lines)
        category = lines[at - 1][0][0] if label in models else NOT_IN_PAPER
        lines.insert(at, ((category, label, name, OURS), line))
    frame = pd.DataFrame([line for _, line in lines], columns=table.columns)
    frame.index = pd.MultiIndex.from_tuples([key for key, _ in lines], names=KEYS)
    return frame


def same_tickers_as_paper(run: Run, reference: pd.DataFrame) -> bool:
    """True when the run traded exactly the paper's five stocks (only then are AVG values comparable)."""
    stocks = set(reference.loc[reference["table"] == MAIN, "ticker"]) - {AVERAGE_TICKER}
    return set(run.tickers) == stocks


def main_table(run: Run, returns: pd.DataFrame, settings: PaperSettings, rows: dict[str, PaperRow],
               not_run: dict[str, str], how: dict[str, str], reps: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the formatted main table, its numbers long) — see the module docstring."""
    beside = beside_paper(run.metrics, rows, MAIN)
    layout = paper_layout(beside)
    table = formatted_layout(layout, our_cells(run, returns, layout, settings.benchmark, reps, seed))
    table["how"] = [how.get(key[2], "") if key[3] == OURS else "" for key in table.index]
    shown = {name: status for name, status in not_run.items() if name not in settings.ablations}
    return with_not_run(table, shown, rows), beside


def pairs_by_backbone(run: Run, backbones: list[str], prefixes: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(A-B, C-B) for every backbone B and configured prefix pair (A, C) whose rows are both in the run."""
    return [(f"{a}-{b}", f"{c}-{b}") for b in backbones for a, c in prefixes
            if f"{a}-{b}" in run.frameworks and f"{c}-{b}" in run.frameworks]


def paper_average(reference: pd.DataFrame, row: PaperRow | None, metric: str = "ARR") -> float:
    """The paper's AVG `metric` of a row in its main table (NaN without one)."""
    if row is None:
        return float("nan")
    cells = reference[(reference["table"] == MAIN) & (reference["row"] == row.row)
                      & (reference["backbone"] == row.backbone) & (reference["ticker"] == AVERAGE_TICKER)
                      & (reference["metric"] == metric)]
    return float(cells["value"].iloc[0]) if len(cells) else float("nan")


def head_to_head_paper(run: Run, returns: pd.DataFrame, pairs: list[tuple[str, str]], rows: dict[str, PaperRow],
                       reference: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the formatted head-to-head table with the paper's AVG ARR % of A and B, its numbers)."""
    numbers = head_to_head(run, returns, pairs)
    if numbers.empty:
        return pd.DataFrame(), numbers
    table = head_to_head_table(numbers)
    for side, position in (("A", 0), ("B", 1)):
        values = [paper_average(reference, rows.get(pair[position])) for pair in numbers.index]
        numbers[f"paper AVG ARR {side}"] = values
        table[f"paper AVG ARR % {side}"] = [paper_units(v, "ARR") for v in values]
    return table, numbers


def efficiency_ours(run: Run, backbones: list[str], reference_prefixes: list[str]) -> pd.DataFrame:
    """Per LLM framework and ticker: tokens per decision, relative cost (/ the tokens per decision of the first
    of `reference_prefixes` that ran on the same backbone) and ARR (metrics.csv layout for `beside_paper`)."""
    numbers = efficiency_numbers(run)
    llm = [f for f in run.frameworks if numbers.loc[f, "tokens"] > 0]
    per_ticker = run.decisions.groupby(["framework", "ticker"], sort=False)[["prompt_tokens", "completion_tokens"]].mean()
    tokens = (per_ticker["prompt_tokens"] + per_ticker["completion_tokens"]).rename("tokens")
    reference_tokens = {}
    for framework in llm:
        backbone = next((b for b in backbones if framework.endswith(f"-{b}")), None)
        anchors = [f"{prefix}-{backbone}" for prefix in reference_prefixes if f"{prefix}-{backbone}" in numbers.index]
        reference_tokens[framework] = numbers.loc[anchors[0], "tokens"] if backbone and anchors else float("nan")
    arr = run.metrics[run.metrics["ticker"] != AVERAGE_TICKER].groupby(["framework", "ticker"], sort=False)["ARR"].mean()
    frame = pd.concat([tokens, arr], axis=1).reset_index()
    frame = frame[frame["framework"].isin(llm)]
    frame["relative_cost"] = frame["tokens"] / frame["framework"].map(reference_tokens).astype(float)
    return frame


def efficiency_table(run: Run, backbones: list[str], settings: PaperSettings, rows: dict[str, PaperRow],
                     not_run: dict[str, str], reference: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the formatted Table 6 beside ours with a "not run" line per row not run (ablations aside), its numbers long)."""
    ours = efficiency_ours(run, backbones, settings.cost_reference)
    comparable = same_tickers_as_paper(run, reference)
    beside = beside_paper(ours, rows, EFFICIENCY, reference, average_comparable=comparable)
    layout = paper_layout(beside, per_ticker=(), average=("tokens", "relative_cost", "ARR"))
    table = formatted_layout(layout)
    k_from = {name: facts.get("k_from", "") for name, facts in run.info.get("rows", {}).items()}
    table["k (self-consistency)"] = [k_from.get(key[2], "") if key[3] == OURS else "" for key in table.index]
    shown = {name: status for name, status in not_run.items() if name not in settings.ablations}
    return with_not_run(table, shown, rows), beside


def ablation_table(run: Run, settings: PaperSettings, rows: dict[str, PaperRow], not_run: dict[str, str],
                   reference: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(Tables 13–14 beside the configured ablation rows that ran, "not run" lines for the others, its numbers)."""
    ran = [name for name in settings.ablations if name in run.frameworks]
    ours = run.metrics[run.metrics["framework"].isin(ran)]
    beside = beside_paper(ours, rows, ABLATION, reference)
    table = formatted_layout(paper_layout(beside))
    missing = {name: not_run.get(name, f"{NOT_RUN}: no row {name} in the run") for name in settings.ablations
               if name not in ran}
    table["how"] = ""
    return with_not_run(table, missing, rows), beside


def rolling_numbers(run: Run, settings: RollingSettings, execution: ExecutionConfig) -> tuple[pd.DataFrame, int]:
    """(rolling windows through the run's test window re-simulated from its decisions and averaged
    (metrics.rolling), how many windows)."""
    start, end = (pd.Timestamp(d) for d in run.info.get("test_window", [run.equity["date"].min(), run.equity["date"].max()]))
    if (settings.months is None) == (settings.days is None):
        raise ConfigError("paper.rolling: set exactly one of months and days")
    windows = rolling_windows(start, end, months=settings.months or 0, step_days=settings.step_days, days=settings.days)
    per_window = window_metrics(run.decisions, bars_by_ticker(run.prices), windows, execution, run.periods_per_year)
    return rolling_table(per_window), len(windows)


def mcs_table(run: Run, returns: pd.DataFrame, reps: int, seed: int) -> pd.DataFrame:
    """Per framework: MCS p-value and membership at 90 % of the equal-weight portfolio (needs MIN_BOOTSTRAP_DAYS days)."""
    portfolio = portfolio_returns(returns)[run.frameworks]
    if portfolio.dropna().shape[0] < MIN_BOOTSTRAP_DAYS or len(run.frameworks) < 2:
        return pd.DataFrame()
    result = model_confidence_set(portfolio, 0.10, reps, seed)
    return pd.DataFrame({"MCS p": result["pvalue"].map(lambda v: format_value(v, digits=3)),
                         "in MCS (90 %)": result["included"].map(lambda v: "yes" if v else "no")}).rename_axis("framework")


def short_how(provenance: pd.DataFrame) -> dict[str, str]:
    """framework -> "kind; decoding; convergence" for the main table's `how` column."""
    how = {}
    for name, line in provenance.iterrows():
        parts = [line["kind"]] + [line[c] for c in ("backbone", "decoding", "converged") if line[c] != "-"]
        how[name] = "; ".join(parts)
    return how


def write_paper_report(run_dir: Path | str, settings: dict | None = None, reps: int = 1000, seed: int = 0,
                       results_dir: Path | str | None = None) -> Path:
    """Write ``paper/`` into ``run_dir`` (and copy it to ``results_dir``); return the path of ``paper/summary.md``.

    ``settings``: the run config's ``paper`` node; None reads it from the run's ``config.yaml``.
    """
    run = load_run(run_dir)
    config = OmegaConf.to_container(OmegaConf.load(run.path / "config.yaml"), resolve=True) \
        if (run.path / "config.yaml").is_file() else {}
    if settings is None:
        settings = config.get("paper")
        if not settings:
            raise ConfigError(f"{run.path / 'config.yaml'}: no `paper` settings (a paper suite writes them)")
    paper = typed_config(PaperSettings, settings, "paper")
    rows = paper_rows(paper.rows)
    reference = paper_reference()
    returns = daily_returns(run)
    backbones = [str(b) for b in (config.get("backbones") or [])]
    row_facts = run.info.get("rows", {})
    not_run = {name: facts["status"] for name, facts in row_facts.items() if facts["status"] != "run"}
    seeds_run = run.equity.groupby("framework", sort=False)["seed"].unique().map(sorted).to_dict()
    provenance = provenance_numbers(run.info, config.get("frameworks", {}), run.frameworks, seeds_run)
    execution = typed_config(ExecutionConfig, config.get("execution", {}), "execution")
    pairs = pairs_by_backbone(run, backbones, paper.head_to_head)
    out = run.path / "paper"
    days = returns.shape[0]

    main, main_numbers = main_table(run, returns, paper, rows, not_run, short_how(provenance), reps, seed)
    h2h, h2h_numbers = head_to_head_paper(run, returns, pairs, rows, reference)
    efficiency, efficiency_beside = efficiency_table(run, backbones, paper, rows, not_run, reference)
    llm_ran = bool((efficiency_beside["source"] == OURS).any()) if "source" in efficiency_beside else False
    ablations, ablation_beside = ablation_table(run, paper, rows, not_run, reference)
    rolling, windows = rolling_numbers(run, paper.rolling, execution)
    rolling_beside = beside_paper(rolling, rows, ROLLING, reference)
    mcs = mcs_table(run, returns, reps, seed)
    length = f"{paper.rolling.months} months" if paper.rolling.months else f"{paper.rolling.days} days"
    tables = [
        ("main", main, main_numbers,
         f"The paper's Tables 5 and 10-11 beside ours over {days} daily returns: ARR % = ((V_T/V_0)^(P/T) - 1) x 100, "
         "SR = mean/std of daily returns x sqrt(P) (the paper's annualised convention), MDD %; AVG = mean over "
         f"tickers, ours the mean over seeds with its 95 % stationary-bootstrap CI; * / ** = mean daily return differs "
         f"from {paper.benchmark}'s at Holm-adjusted p < 0.05 / 0.01; Δ = ours - paper (on AVG only on the paper's "
         "five stocks); how = kind; backbone; decoding; convergence (details in the provenance table)"),
        ("head_to_head", h2h, h2h_numbers,
         "Head to head per backbone, A - B: paired tests on daily portfolio returns (bp/day, Holm over the pairs), "
         "agreement, regime accuracy and McNemar's test; the paper's AVG ARR % of A and B"
         + ("" if pairs else "; no pair of the configured prefixes ran on one backbone")),
        ("efficiency", efficiency, efficiency_beside,
         f"The paper's Table 6 beside ours: tokens per decision, relative cost = tokens per decision / those of the "
         f"first of the {', '.join(paper.cost_reference)} rows that ran on the same backbone (the paper: its "
         "multi-agent pipeline = 1), AVG ARR %; k = episodes per decision of a self-consistency row, measured "
         "(round of the MA / SA tokens per decision in this run) or an explicit budget"
         + ("" if llm_ran else f"; no LLM row ran (backbones: {', '.join(backbones) or 'none'}), so ours has no lines")),
        ("ablations", ablations, ablation_beside,
         "The paper's Tables 13-14 (reward and theta ablations of AlphaQuanter-7B) beside the configured ablation "
         "rows; a row without its checkpoints is not run, with the command that trains them"),
        ("rolling", formatted_layout(paper_layout(rolling_beside)), rolling_beside,
         f"The paper's Table 12 beside ours: {windows} windows of {length} stepped {paper.rolling.step_days} days "
         "through the test window, each re-simulated from the journal's decisions (no model ran again), metrics "
         "averaged over windows; columns as in the main table"),
        ("mcs", mcs, mcs,
         "Model Confidence Set at 90 % over every framework's equal-weight daily portfolio (arch, losses = -returns)"
         + ("" if not mcs.empty else f"; not computed: fewer than {MIN_BOOTSTRAP_DAYS} days or one framework")),
        ("provenance", provenance, provenance,
         "How each row was obtained: kind, backbone, fingerprint (the journal's key of its decisions), decoding, "
         "seeds run, training (steps, wall time, convergence) and status"),
    ]
    sections = [f"# The AlphaQuanter paper beside this run\n\n{len(run.frameworks)} frameworks on "
                f"{', '.join(run.tickers)}; {days} daily returns; rows not run: {len(not_run)}.\n"]
    for name, table, numbers, caption in tables:
        write_table(table, name, out / "tables", caption)
        (out / "csv").mkdir(parents=True, exist_ok=True)
        numbers.to_csv(out / "csv" / f"{name}.csv", float_format="%.10g")
        body = f"\n\n{to_markdown(table)}" if not table.empty else "\n"
        sections.append(f"## {name.replace('_', ' ')}\n\n{caption}.{body}")
    plots.plot_equity(run, out / "equity.png", paper.benchmark)
    sections.append("## equity\n\n![equity](equity.png)\n")
    summary = out / "summary.md"
    summary.write_text("\n".join(sections))
    target = results_dir or paper.results_dir
    if target:
        shutil.copytree(out, Path(target), dirs_exist_ok=True)
    return summary


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m metrics.paper_report RUN_DIR [--results DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m metrics.paper_report", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--results", type=Path, default=None, help="also copy paper/ into this folder")
    parser.add_argument("--reps", type=int, default=1000, help="bootstrap replications")
    parser.add_argument("--seed", type=int, default=0, help="seed of every bootstrap")
    args = parser.parse_args(argv)
    try:
        summary = write_paper_report(args.run_dir, None, args.reps, args.seed, args.results)
    except UserError as error:
        print(f"error: {one_line(error)}", file=sys.stderr)
        return USER_ERROR_EXIT
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
