"""A report on bars other than days says "bar" where a daily report says "day"."""

import json
import shutil

import pytest

from metrics import report


def _reported(synthetic_run, tmp_path, frequency: str | None) -> str:
    run_dir = tmp_path / "run"
    shutil.copytree(synthetic_run, run_dir)
    info = json.loads((run_dir / "run.json").read_text())
    if frequency is not None:
        info["calendar"] = {"frequency": frequency, "session": "24/7", "decision_time": "0 days 16:00:00"}
    (run_dir / "run.json").write_text(json.dumps(info))
    return report.write_report(run_dir, reps=50).read_text()


@pytest.mark.slow
def test_a_daily_report_speaks_of_days(synthetic_run, tmp_path):
    summary = _reported(synthetic_run, tmp_path, "1 days 00:00:00")
    assert "bp/day" in summary and "mean daily return" in summary and "| days |" in summary
    assert "bp/bar" not in summary and "per-bar" not in summary and "bars of" not in summary


@pytest.mark.slow
def test_a_15_minute_report_speaks_of_bars(synthetic_run, tmp_path):
    summary = _reported(synthetic_run, tmp_path, "0 days 00:15:00")
    assert "bp/bar" in summary and "mean per-bar return" in summary and "| bars |" in summary
    assert "- bars of 15 minutes" in summary
    assert "bp/day" not in summary and "daily return" not in summary and "-day window" not in summary
