"""The portfolio and futures suites end to end through `run_benchmark.py`, and their bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest


@pytest.mark.slow
def test_the_portfolio_suite_writes_the_report_with_turnover_and_hhi(tmp_path, run_cli):
    run_cli("+suite=portfolio", f"hydra.run.dir={tmp_path}", "split.test.end=2019-09-30", "progress=false")
    metrics = pd.read_csv(tmp_path / "metrics.csv")
    assert {"Turnover", "HHI"} <= set(metrics.columns)
    assert set(metrics["framework"]) == {"equal_weight", "buy_and_hold_equal", "inverse_volatility", "momentum_top_k"}
    equal = metrics[(metrics.framework == "equal_weight") & (metrics.ticker == "UNIVERSE")].iloc[0]
    assert equal["HHI"] == pytest.approx(1 / 24, rel=0.05)  # equal weights on 24 instruments, drifting a day
    assert json.loads((tmp_path / "run.json").read_text())["task"] == "portfolio"
    for name in ("summary.md", "positions.parquet", "flows.parquet"):
        assert (tmp_path / name).is_file(), name
    assert "HHI" in (tmp_path / "summary.md").read_text()  # the metrics summary (the CLI tests run without the report)


@pytest.mark.slow
def test_the_futures_suite_writes_the_report_with_funding_and_liquidations(tmp_path, run_cli):
    run_cli("+suite=futures", f"hydra.run.dir={tmp_path}", "split.test.end=2021-11-30", "progress=false")
    metrics = pd.read_csv(tmp_path / "metrics.csv")
    assert {"Turnover", "Liquidations", "Funding", "MaxLeverage"} <= set(metrics.columns)
    flat = metrics[metrics.framework == "flat"].iloc[0]
    assert flat["TR"] == 0 and flat["Funding"] == 0
    long = metrics[(metrics.framework == "long_1x") & (metrics.ticker == "BTC_15M")].iloc[0]
    assert long["Funding"] > 0  # the synthetic rates are positive on average: longs pay
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["periods_per_year"] == 35_040 and info["calendar"]["session"] == "24/7"


@pytest.mark.slow
def test_a_trading_framework_in_a_portfolio_run_is_one_line(tmp_path, run_cli):
    done = run_cli("+suite=portfolio", f"hydra.run.dir={tmp_path}", "+framework@frameworks.macd=macd", check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == "error: frameworks.macd: MACDCross takes the task(s) trading, not task=portfolio"


@pytest.mark.slow
def test_a_pool_naming_an_unknown_instrument_is_one_line(tmp_path, run_cli):
    done = run_cli("+suite=portfolio", f"hydra.run.dir={tmp_path}", "task.pool={2019-07-01:[TEC1,ZZZ]}", check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("error: task.pool.2019-07-01: unknown instrument 'ZZZ'")


@pytest.mark.slow
def test_a_bad_funding_file_is_one_line(tmp_path, run_cli):
    funding = tmp_path / "funding.csv"
    funding.write_text("ticker,available_at,rate\nBTC_15M,2021-11-01T00:00:00Z,0.0001\nBTC_15M,2021-11-01T08:00:00Z,nan\n")
    done = run_cli("+suite=futures", f"hydra.run.dir={tmp_path / 'run'}", f"data.funding_file={funding}", check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == f"error: {funding}: row 2: field rate: not a number ('nan')"
