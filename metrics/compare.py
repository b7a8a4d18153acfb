"""What changed between two runs: run facts, metrics and decisions.

    python -m metrics.compare RUN_A RUN_B [--limit 20] [--tolerance 1e-9]

Prints (B relative to A): the resolved config values (``config.yaml``) and the
``run.json`` facts that differ (how the results were obtained — wall time, decisions made or
reused from the journal — left out), the episodes present in one run only, the
``metrics.csv`` rows whose metrics moved by more than ``tolerance`` with A, B and B - A, and
the decisions (same framework, ticker, seed, date) whose action or target differ.

Exit code 0 when the results are the same (episodes, metrics, decisions), 1 when they differ,
2 on bad input; config and fact differences are shown as context only, so a resumed run
compares equal to an uninterrupted one, and so does a run that differs only in, say,
``progress``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from core.config_keys import flatten
from core.errors import DataError
from harness.run_directory import Run, load_run
from harness.schema import EPISODE_KEYS
from metrics.performance import METRIC_KEYS

HOW_OBTAINED = ("wall_s", "decisions_made", "decisions_reused", "failures_reused", "failures_retried", "failures")
"""``run.json`` facts about how the results were obtained, not what they are."""


def fact_differences(a: Run, b: Run) -> dict[str, tuple[object, object]]:
    """``run.json`` keys whose values differ: {key: (A, B)}; missing keys read as None."""
    keys = [k for k in dict.fromkeys([*a.info, *b.info]) if k not in HOW_OBTAINED]
    return {k: (a.info.get(k), b.info.get(k)) for k in keys if a.info.get(k) != b.info.get(k)}


def config_differences(a: Run, b: Run) -> dict[str, tuple[object, object]]:
    """Resolved config values (``config.yaml``, dotted keys) that differ; empty when a run has none."""
    paths = [run.path / "config.yaml" for run in (a, b)]
    if not all(path.is_file() for path in paths):
        return {}
    left, right = (flatten(yaml.safe_load(path.read_text())) for path in paths)
    keys = dict.fromkeys([*left, *right])
    return {k: (left.get(k), right.get(k)) for k in keys if left.get(k) != right.get(k)}


def metric_deltas(a: pd.DataFrame, b: pd.DataFrame, tolerance: float = 1e-9) -> pd.DataFrame:
    """Rows of two ``metrics.csv`` tables (same framework, ticker, seed) where any metric moved by > ``tolerance``.

    Columns: ``<metric>_A``, ``<metric>_B``, ``<metric>_delta`` (B - A) for the metrics both have.
    """
    metrics = [m for m in METRIC_KEYS if m in a.columns and m in b.columns]
    merged = a.merge(b, on=list(EPISODE_KEYS), suffixes=("_A", "_B"))
    for metric in metrics:
        merged[f"{metric}_delta"] = merged[f"{metric}_B"] - merged[f"{metric}_A"]
    deltas = merged[[f"{m}_delta" for m in metrics]].to_numpy(dtype=float)
    both_nan = np.isnan(merged[[f"{m}_A" for m in metrics]].to_numpy(dtype=float)) & np.isnan(
        merged[[f"{m}_B" for m in metrics]].to_numpy(dtype=float))
    moved = ((np.abs(deltas) > tolerance) | (np.isnan(deltas) & ~both_nan)).any(axis=1)
    columns = [f"{m}_{s}" for m in metrics for s in ("A", "B", "delta")]
    return merged.loc[moved, [*EPISODE_KEYS, *columns]].reset_index(drop=True)


def episodes_only_in(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """(framework, ticker, seed) episodes of metrics table ``a`` that ``b`` lacks."""
    keys = list(EPISODE_KEYS)
    merged = a[keys].merge(b[keys].drop_duplicates(), on=keys, how="left", indicator=True)
    return merged.loc[merged["_merge"] == "left_only", keys].drop_duplicates().reset_index(drop=True)


def decision_differences(a: pd.DataFrame, b: pd.DataFrame) -> tuple[int, pd.DataFrame]:
    """(number of decisions both runs made, the ones whose action or target differ with both values)."""
    keys = [*EPISODE_KEYS, "date"]
    columns = [c for c in ("action", "target") if c in a.columns and c in b.columns]
    merged = a[keys + columns].merge(b[keys + columns], on=keys, suffixes=("_A", "_B"))
    differs = np.zeros(len(merged), dtype=bool)
    for column in columns:
        left, right = merged[f"{column}_A"].astype(object), merged[f"{column}_B"].astype(object)
        same = (left == right) | (left.isna() & right.isna())
        differs |= ~same.to_numpy(dtype=bool)
    return len(merged), merged.loc[differs].sort_values(keys).reset_index(drop=True)


def compare_runs(a: Run, b: Run, limit: int = 20, tolerance: float = 1e-9) -> tuple[str, bool]:
    """The printed comparison of run B against run A, and whether the results differ."""
    lines = [f"A: {a.path}", f"B: {b.path}", ""]
    config = config_differences(a, b)
    lines.append(f"config values that differ: {len(config)}")
    lines += [f"  {key}: {left!r} -> {right!r}" for key, (left, right) in config.items()]
    facts = fact_differences(a, b)
    lines.append(f"run facts that differ: {len(facts)}")
    lines += [f"  {key}: {left!r} -> {right!r}" for key, (left, right) in facts.items()]
    only_a = episodes_only_in(a.metrics, b.metrics)
    only_b = episodes_only_in(b.metrics, a.metrics)
    lines.append(f"episodes only in A: {len(only_a)}; only in B: {len(only_b)}")
    lines += [f"  A only: {tuple(row)}" for row in only_a.head(limit).itertuples(index=False)]
    lines += [f"  B only: {tuple(row)}" for row in only_b.head(limit).itertuples(index=False)]
    deltas = metric_deltas(a.metrics, b.metrics, tolerance)
    lines.append(f"metrics rows that moved (> {tolerance:g}): {len(deltas)}")
    if len(deltas):
        shown = [*EPISODE_KEYS, "ARR_A", "ARR_B", *[c for c in deltas.columns if c.endswith("_delta")]]
        lines.append(deltas[shown].head(limit).to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    compared, decisions = decision_differences(a.decisions, b.decisions)
    lines.append(f"decisions compared: {compared}; different: {len(decisions)}")
    if len(decisions):
        lines.append(decisions.head(limit).to_string(index=False))
    changed = len(only_a) + len(only_b) + len(deltas) + len(decisions) > 0
    if changed:
        lines.append("results differ")
    else:
        lines.append("same results" + (" (config or run facts differ)" if config or facts else "; no change"))
    return "\n".join(lines).rstrip() + "\n", changed


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m metrics.compare RUN_A RUN_B``."""
    parser = argparse.ArgumentParser(prog="python -m metrics.compare", description=__doc__.splitlines()[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--limit", type=int, default=20, help="rows shown per section")
    parser.add_argument("--tolerance", type=float, default=1e-9, help="smallest metric change reported")
    args = parser.parse_args(argv)
    try:
        text, changed = compare_runs(load_run(args.run_a), load_run(args.run_b), args.limit, args.tolerance)
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(text, end="")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
