"""The unseen-regime claim read from a run directory: routings from run.json, equity per seed, the
injected window from config.yaml, the same paired test as the claim module."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from comparators.fineft.run_claim import main, run_measures
from core.errors import DataError

START = pd.Timestamp("2024-02-24")


def write_run(path, curves: dict[tuple[str, int], list[float]], inject=True):
    """A run directory with the three files the reader needs; curves: (framework, seed) -> equity per minute."""
    facts = {"FineFT": {"routing": "vae"}, "FineFT-unrouted": {"routing": "ensemble"}, "trend": {"rule": "trend"}}
    (path / "run.json").write_text(json.dumps({"framework_facts": facts}))
    data = "data: {inject: {start: '2024-02-24', bars: 2, drift: -0.0002, vol_scale: 4.0}}" if inject else "data: {inject: null}"
    (path / "config.yaml").write_text(data + "\n")
    frames = [pd.DataFrame({"date": START - pd.Timedelta(minutes=2) + pd.to_timedelta(np.arange(len(v)), unit="min"),
                            "framework": fw, "seed": seed, "equity": v})
              for (fw, seed), v in curves.items()]
    pd.concat(frames).to_parquet(path / "equity.parquet")
    return path


CURVES = {  # minutes -2 .. 3; the injected window is minutes 0 .. 2
    ("FineFT", 0): [100, 120, 110, 99, 110, 60],
    ("FineFT-unrouted", 0): [100, 100, 100, 50, 100, 100],
    ("FineFT", 1): [100, 100, 100, 100, 100, 100],
    ("FineFT-unrouted", 1): [100, 200, 100, 80, 80, 80],
    ("trend", 0): [100] * 6,
}


def test_each_fineft_row_gets_its_routing_and_the_drawdowns_of_the_window_and_the_crash(tmp_path):
    frame = run_measures(write_run(tmp_path, CURVES)).set_index(["seed", "routing"])
    assert set(frame.index) == {(0, "vae"), (0, "ensemble"), (1, "vae"), (1, "ensemble")}   # trend is no FineFT row
    assert frame.loc[(0, "vae"), "max_drawdown"] == pytest.approx(0.5)            # 120 -> 60
    assert frame.loc[(0, "vae"), "max_drawdown_in_window"] == pytest.approx(0.1)  # 110 -> 99 within minutes 0 .. 2
    assert frame.loc[(0, "ensemble"), "max_drawdown_in_window"] == pytest.approx(0.5)
    assert frame.loc[(1, "ensemble"), "max_drawdown"] == pytest.approx(0.6)       # 200 -> 80
    assert frame.loc[(1, "vae"), "total_return"] == 0.0 and frame["injected"].all()


def test_the_paired_test_is_written_beside_the_measures(tmp_path, capsys):
    main([str(write_run(tmp_path, CURVES)), "--out", str(tmp_path / "out")])
    test = pd.read_csv(tmp_path / "out" / "run_claim_test.csv").set_index(["measure", "comparison"])
    row = test.loc[("max_drawdown_in_window", "ensemble - vae")]
    assert row["seeds"] == 2 and row["mean_difference"] == pytest.approx(((0.5 - 0.1) + (0.2 - 0.0)) / 2)
    assert "ensemble - dynamics" not in test.index.get_level_values("comparison")   # the run has no such row


def test_a_run_without_the_crash_is_marked_so(tmp_path):
    assert not run_measures(write_run(tmp_path, CURVES, inject=False))["injected"].any()


def test_a_run_without_fineft_rows_or_files_is_one_clear_line(tmp_path):
    write_run(tmp_path, {("trend", 0): [100] * 6})
    (tmp_path / "run.json").write_text(json.dumps({"framework_facts": {"trend": {}}}))
    with pytest.raises(DataError, match="no framework states a FineFT routing"):
        run_measures(tmp_path)
    (tmp_path / "equity.parquet").unlink()
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--out", str(tmp_path / "out")])
