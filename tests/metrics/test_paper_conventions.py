"""metrics.paper_conventions: each convention against a hand computation, and the report's table."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pandas as pd
import pytest

from harness.run_directory import load_run
from metrics.paper_conventions import (
    alphamix_total_return,
    earnmore_arr,
    earnmore_sharpe,
    fineft_asr,
    fineft_capital_base,
    macrohft_required_money,
    macrohft_return,
    paper_conventions_section,
    requested,
)


def test_earnmore_and_alphamix_conventions():
    r = np.array([0.01, -0.02, 0.03, 0.0])
    assert earnmore_sharpe(r) == pytest.approx(r.mean() / r.std(ddof=1) * 2.0)
    assert earnmore_arr(r, 252) == pytest.approx(0.005 * 252)
    assert alphamix_total_return(r) == pytest.approx(0.02)
    assert math.isnan(earnmore_sharpe(np.array([0.01])))


def test_fineft_capital_base_and_asr():
    dates = pd.to_datetime(["2020-01-01 08:00", "2020-01-01 16:00", "2020-01-02 16:00", "2020-01-03 16:00"])
    equity = pd.DataFrame({"date": dates, "equity": [1000.0, 990.0, 1010.0, 1005.0],
                           "margin": [0.0, 200.0, 210.0, 100.0]})
    # margin - pnl = 0, 210, 200, 95 -> base 210
    assert fineft_capital_base(equity) == 210.0
    daily = np.array([-10.0, 20.0, -5.0]) / 210.0
    assert fineft_asr(equity) == pytest.approx(daily.mean() / daily.std(ddof=1) * math.sqrt(365))
    assert math.isnan(fineft_capital_base(equity.drop(columns="margin")))


def test_macrohft_return_on_required_money():
    spot = pd.DataFrame({"equity": [100.0, 101.0, 99.0, 104.0], "cash": [100.0, 50.0, 20.0, 104.0]})
    assert macrohft_required_money(spot) == pytest.approx(79.0)
    assert macrohft_return(spot) == pytest.approx(4.0 / 79.0)
    futures = spot.assign(leverage=[0.0, 2.0, 1.0, 0.0])
    assert macrohft_required_money(futures) == pytest.approx(202.0)


def test_the_table_appears_only_when_a_framework_asks(synthetic_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(synthetic_run, run_dir)
    assert requested(load_run(run_dir)) == []
    assert paper_conventions_section(load_run(run_dir), tmp_path / "tables") == ""
    info = json.loads((run_dir / "run.json").read_text())
    info["framework_facts"] = {"momentum": {"paper_conventions": ["alphamix", "earnmore"]}}
    (run_dir / "run.json").write_text(json.dumps(info))
    run = load_run(run_dir)
    assert requested(run) == ["earnmore", "alphamix"]
    section = paper_conventions_section(run, tmp_path / "tables")
    assert "AlphaMix TR % = sum r" in section and "EarnMore SR" in section
    assert (tmp_path / "tables" / "paper_conventions.md").is_file()
    episode = run.equity[(run.equity["framework"] == "buy_and_hold")]
    sums = [episode[episode["ticker"] == t]["equity"].pct_change().sum() for t in run.tickers]
    row = next(line for line in section.splitlines() if line.startswith("| buy_and_hold"))
    assert f"{np.mean(sums) * 100:.2f}" in row
