"""The report's benchmark is the task's (buy_and_hold, equal_weight, long_1x) unless the run names one, and a
portfolio report leaves out the regime tables (no decision of it has a regime label)."""

from __future__ import annotations

import json

import pytest

from harness.tasks.registry import TASKS
from metrics.report import write_report
from in_process import run_in_process


def test_each_task_names_a_rule_it_ships_as_its_benchmark():
    assert {name: task.benchmark for name, (task, _) in TASKS.items()} == {
        "trading": "buy_and_hold", "portfolio": "equal_weight", "futures": "long_1x"}


@pytest.mark.slow
def test_a_portfolio_report_tests_against_equal_weight(tmp_path):
    run_in_process(tmp_path, "+suite=portfolio", "split.test.end=2019-08-30")
    assert json.loads((tmp_path / "run.json").read_text())["benchmark"] == "equal_weight"
    summary = write_report(tmp_path, reps=50).read_text()
    assert "Against equal_weight," in summary and "vs equal_weight" in summary
    assert "## regime" not in summary  # weights on a universe have no regime label


@pytest.mark.slow
def test_a_run_may_name_its_benchmark(tmp_path):
    run_in_process(tmp_path, "+suite=portfolio", "split.test.end=2019-08-30", "benchmark=inverse_volatility")
    assert json.loads((tmp_path / "run.json").read_text())["benchmark"] == "inverse_volatility"
    assert "Against inverse_volatility," in write_report(tmp_path, reps=50).read_text()
