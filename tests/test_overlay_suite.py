"""The risk overlay through `run_benchmark.py`: `+suite=smoke overlay=walkthrough` (docs/overlays.md)."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pandas as pd
import pytest
from cli_helpers import ROOT, benchmark_command, journal_rows, support_env

from harness.overlay import OVERLAY_PARTS
from metrics import trace

WALKTHROUGH = ("+suite=smoke", "overlay=walkthrough", "overlay.drift.window=20", "overlay.drift.max_hold_share=0.5")
"""The walkthrough overlay on the smoke suite, with a drift window its 62 days can fill."""


@pytest.mark.slow
def test_the_walkthrough_overlay_is_recorded_counted_in_the_report_and_warns_once_per_drifting_framework(
        tmp_path, run_cli, capsys):
    done = run_cli(*WALKTHROUGH, "report=true", "viewer=false", f"hydra.run.dir={tmp_path}")
    facts = json.loads((tmp_path / "run.json").read_text())
    assert all(facts["overlay"][part]["enabled"] for part in OVERLAY_PARTS)
    assert facts["overlay"]["cold_start"]["baseline"] == {"_target_": "frameworks.baselines.buy_and_hold.BuyAndHold"}

    overlays = pd.read_parquet(tmp_path / "overlays.parquet")
    decisions = pd.read_parquet(tmp_path / "decisions.parquet")
    assert len(overlays) == len(decisions)
    assert (overlays["original_action"].to_numpy() == decisions["action"].to_numpy()).all()  # the journal's own
    table = (tmp_path / "tables" / "overlays.md").read_text()
    counts = overlays.groupby(["framework", "ticker"], sort=False)[["changed", *OVERLAY_PARTS]].sum()
    for (framework, ticker), row in counts.iterrows():
        cells = " | ".join(str(int(row[c])) for c in ["changed", "loss_stop", "cool_down", "cold_start", "sizing", "drift"])
        assert f"| {framework} | {ticker} | {int((overlays['framework'] == framework).sum() / 2)} | {cells} |" in table

    drifted = [name for name, fired in overlays.groupby("framework", sort=False)["drift"].any().items() if fired]
    warned = [line for line in done.stderr.splitlines() if line.startswith("warning: overlay drift: ")]
    assert drifted and [line.split(":")[2].strip() for line in warned] == drifted
    summary = (tmp_path / "summary.md").read_text()
    assert "## overlays" in summary
    assert all(f"**Warning.** {line.removeprefix('warning: ')}" in summary for line in warned)

    stopped = overlays.loc[overlays["loss_stop"] & overlays["changed"]].iloc[0]
    assert trace.main([str(tmp_path), stopped["ticker"], f"{stopped['date']:%Y-%m-%d}", stopped["framework"],
                       "--seed", str(stopped["seed"])]) == 0
    shown = capsys.readouterr().out
    assert f"action: {stopped['original_action']}" in shown
    assert "overlay: executed HOLD, in place of the framework's decision; parts fired: loss_stop" in shown


@pytest.mark.slow
def test_a_killed_run_with_the_overlay_resumes_with_identical_metrics_and_overlay_records(tmp_path, run_cli):
    slow = "+frameworks.slow={_target_: support_frameworks.SlowRandom, delay_s: 0.01}"
    overrides = (*WALKTHROUGH, slow, "batch_size=8")
    run_cli(*overrides, f"hydra.run.dir={tmp_path / 'whole'}")
    killed = tmp_path / "killed"
    process = subprocess.Popen(benchmark_command(*overrides, f"hydra.run.dir={killed}"), cwd=ROOT,
                               env=support_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while journal_rows(killed / "journal.sqlite") < 7 * 2 * 62 + 40 and time.time() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert not (killed / "metrics.csv").exists(), "the run finished before it could be killed"

    run_cli(*overrides, f"hydra.run.dir={killed}")
    assert json.loads((killed / "run.json").read_text())["decisions_reused"] > 0
    assert (killed / "metrics.csv").read_bytes() == (tmp_path / "whole" / "metrics.csv").read_bytes()
    pd.testing.assert_frame_equal(pd.read_parquet(killed / "overlays.parquet"),
                                  pd.read_parquet(tmp_path / "whole" / "overlays.parquet"))


@pytest.mark.slow
@pytest.mark.parametrize("overrides, expected", [
    (["overlay.sizing.invest_fraction=1.5"], ("error: overlay: OverlayConfig: sizing.invest_fraction: Input should be "
                                              "less than or equal to 1")),
    (["+overlay.loss_stop.max_los=0.1"], "error: overlay.loss_stop: unknown key 'max_los' (did you mean 'max_loss'?)"),
    (["overlay.cold_start.enabled=true"], ("error: overlay.cold_start.baseline is not set: add "
                                           "+framework@overlay.cold_start.baseline=buy_and_hold")),
])
def test_a_bad_overlay_config_is_one_line_and_exit_2(tmp_path, run_cli, overrides, expected):
    done = run_cli("+suite=smoke", *overrides, f"hydra.run.dir={tmp_path}", check=False)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and lines == [expected], (done.returncode, done.stderr[-2000:])
