"""The MASSA rows of a run directory as one Markdown page: metrics per row, order scaling, action
correlation, and the signal's value against the no-signal control.

    python -m comparators.massa.summary RUN_DIR [--signal MASSA] [--control MASSA-no-signal]

Per row (mean ± std over its seeds, from metrics.csv): TR, SR_ann, MDD, annualised one-way
Turnover and HHI; from run.json's framework facts (`frameworks.massa.MassaFramework.run_facts`):
the share of bars whose orders were scaled down, the mean buy scale λ and the mean pairwise
correlation of the agents' raw weight changes. The test is the report's paired test
(`metrics.significance.paired_row`: EWC t test of the mean daily return difference, and the
Sharpe-difference test) on the rows' daily portfolio returns, each the mean over its seeds
(`metrics.returns.portfolio_returns`), then once per seed (seed k of the signal row against seed
k of the control: both trained with the same seed), Holm over the seeds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import ConfigError, exit_on_user_error
from harness.run_directory import Run, load_run
from metrics.episodes import AVERAGE_TICKER
from metrics.paired import holm
from metrics.returns import daily_returns, portfolio_returns, seed_portfolio_returns
from metrics.significance import paired_row

METRICS = ("TR", "SR_ann", "MDD", "Turnover", "HHI")
EXECUTION = ("scaled_share", "mean_buy_scale", "action_correlation")


def spread(values: pd.Series, scale: float = 1.0, digits: int = 3) -> str:
    values = values.dropna() * scale
    if values.empty:
        return "n/a"
    if len(values) == 1:
        return f"{values.iloc[0]:.{digits}f}"
    return f"{values.mean():.{digits}f} ± {values.std(ddof=1):.{digits}f}"


def rows_table(run: Run) -> pd.DataFrame:
    """Per framework: seeds, each metric as mean ± std over seeds, and the execution facts of MASSA rows."""
    facts = run.info.get("framework_facts", {})
    table = {}
    episodes = run.metrics[run.metrics["ticker"] != AVERAGE_TICKER]  # one row per seed, not the average row too
    for framework, group in episodes.groupby("framework", sort=False):
        row = {"seeds": str(len(group))}
        for metric in METRICS:
            if metric in group:
                row[metric] = spread(group[metric], 100.0 if metric in ("TR", "MDD") else 1.0, 1 if metric in ("TR", "MDD") else 3)
        seeds = facts.get(framework, {}).get("seeds", {})
        for key in EXECUTION:
            values = pd.Series([s.get(key) for s in seeds.values()], dtype=float)
            row[key] = spread(values) if seeds and values.notna().any() else ""
        table[framework] = row
    return pd.DataFrame(table).T.rename(columns={"TR": "TR %", "MDD": "MDD %", "scaled_share": "scaled share",
                                                  "mean_buy_scale": "mean λ", "action_correlation": "action corr"})


def signal_tests(run: Run, signal: str, control: str) -> pd.DataFrame:
    """The paired tests of `signal` vs `control`: on the seed-mean portfolios, then seed by seed (Holm)."""
    returns = daily_returns(run)
    names = set(returns.columns.get_level_values("framework"))
    for name in (signal, control):
        if name not in names:
            raise ConfigError(f"{run.path}: no framework {name!r} in the run (it has {', '.join(sorted(names))})")
    pooled = portfolio_returns(returns)
    rows = {"seed mean": paired_row(pooled[signal].to_numpy(), pooled[control].to_numpy())}
    by_seed = seed_portfolio_returns(returns)
    seeds = sorted(set(by_seed[signal].columns) & set(by_seed[control].columns))
    for seed in seeds:
        rows[f"seed {seed}"] = paired_row(by_seed[signal][seed].to_numpy(), by_seed[control][seed].to_numpy())
    frame = pd.DataFrame(rows).T
    per_seed = [f"seed {s}" for s in seeds]
    frame.loc[per_seed, "p_mean_holm"] = holm(frame.loc[per_seed, "p_mean"].tolist())
    return frame


def tests_markdown(tests: pd.DataFrame) -> pd.DataFrame:
    cells = {}
    for name, r in tests.iterrows():
        cells[name] = {"days": f"{r.days:.0f}",
                       "d mean bp/day [95 % CI]": f"{1e4 * r.dmean:.2f} [{1e4 * r.dmean_low:.2f}, {1e4 * r.dmean_high:.2f}]",
                       "p": f"{r.p_mean:.3f}", "p Holm (seeds)": "" if np.isnan(r.get("p_mean_holm", np.nan)) else f"{r.p_mean_holm:.3f}",
                       "MDE bp/day": f"{1e4 * r.mde_mean:.1f}", "d SR_day": f"{r.dsharpe:.3f}", "p SR": f"{r.p_sharpe:.3f}"}
    return pd.DataFrame(cells).T


def summary(run_dir: Path, signal: str, control: str) -> str:
    run = load_run(run_dir)
    parts = [f"# MASSA rows of {run_dir.name}", "", rows_table(run).to_markdown(), "",
             f"## {signal} − {control}: paired tests on daily portfolio returns", "",
             tests_markdown(signal_tests(run, signal, control)).to_markdown(), ""]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--signal", default="MASSA")
    parser.add_argument("--control", default="MASSA-no-signal")
    args = parser.parse_args(argv)
    with exit_on_user_error():
        print(summary(args.run_dir, args.signal, args.control))


if __name__ == "__main__":
    main()
