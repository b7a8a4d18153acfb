"""The unseen-regime claim read from a benchmark run: the FineFT rows as the runner played them.

    python -m comparators.fineft.run_claim RUN_DIR --out FOLDER

`comparators.fineft.claim` plays each routing from its planned path (the previous target of the
path); the runner decides from the account (the grid leverage nearest to q·close/equity, which
drifts with the price between decisions), so the two can differ. This reads a run of
`+suite=fineft` (or any run with FineFT rows): each row's routing from `run.json`'s framework facts,
its equity per seed from `equity.parquet`, and the injected window from the run's `config.yaml`
(`data.inject`; none: a run without the crash, whose in-window MDD is taken over the same dates
as `claim.INJECTION`'s). Per seed and routing: total return, the MDD of the test window and the MDD
over the injection's window (its start to start + bars minutes, both ends included, as in
`claim.measure`); then `claim.paired_test`. Writes FOLDER/run_claim.csv and FOLDER/run_claim_test.csv.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
from omegaconf import OmegaConf

from comparators.fineft.claim import INJECTION, paired_test, write_claim
from core.errors import DataError, exit_on_user_error
from metrics.performance import max_drawdown, simple_returns


def routings(run_dir: Path) -> dict[str, str]:
    """framework name -> its FineFT routing, for every row of the run that states one."""
    facts = json.loads((run_dir / "run.json").read_text())["framework_facts"]
    found = {name: fact["routing"] for name, fact in facts.items() if isinstance(fact, dict) and "routing" in fact}
    if not found:
        raise DataError(f"{run_dir / 'run.json'}: no framework states a FineFT routing (no FineFT rows in this run)")
    return found


def injection(run_dir: Path) -> tuple[dict, bool]:
    """The run's `data.inject` and True, or `claim.INJECTION` and False when the run injected nothing."""
    inject = OmegaConf.to_container(OmegaConf.load(run_dir / "config.yaml")).get("data", {}).get("inject")
    return (dict(inject), True) if inject else (dict(INJECTION), False)


def run_measures(run_dir: Path) -> pd.DataFrame:
    """One row per (seed, routing): total_return, max_drawdown, max_drawdown_in_window (module docstring)."""
    rows_routing = routings(run_dir)
    inject, injected = injection(run_dir)
    start = pd.Timestamp(inject["start"])
    stop = start + pd.Timedelta(minutes=int(inject["bars"]))
    equity = pd.read_parquet(run_dir / "equity.parquet", columns=["date", "framework", "seed", "equity"])
    rows = []
    for (framework, seed), group in equity[equity["framework"].isin(list(rows_routing))].groupby(["framework", "seed"]):
        values = group.set_index("date")["equity"].sort_index()
        rows.append({"seed": int(seed), "routing": rows_routing[framework], "framework": framework, "injected": injected,
                     "total_return": float(values.iloc[-1] / values.iloc[0] - 1.0),
                     "max_drawdown": float(max_drawdown(simple_returns(values))),
                     "max_drawdown_in_window": float(max_drawdown(simple_returns(values.loc[start:stop])))})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m comparators.fineft.run_claim", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    with exit_on_user_error():
        for name in ("run.json", "config.yaml", "equity.parquet"):
            if not (args.run_dir / name).is_file():
                raise DataError(f"{args.run_dir / name}: missing (a finished run directory has it)")
        frame = run_measures(args.run_dir)
        write_claim(args.out, "run_claim", frame, paired_test(frame))


if __name__ == "__main__":
    main()
