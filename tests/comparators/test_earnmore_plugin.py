"""The EarnMore plugin through the runner on a tiny universe, and its suite's not-run rows."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from earnmore_runs import TINY_TICKERS, tiny_overrides, train_tiny
from in_process import composed, run_in_process

from frameworks.suite_rows import expand_rows
from harness.decision_checks import CASH


@pytest.mark.slow
def test_the_plugin_decides_valid_weights_within_the_pool_through_the_runner(tmp_path):
    folder, _ = train_tiny(tmp_path / "train", seed=0)
    pool = "{2019-07-08: [TEC1, FIN2]}"
    metrics = run_in_process(tmp_path / "run", "+suite=earnmore", *tiny_overrides(), "seeds=[0]",
                             f"rows.trained.EarnMore.checkpoints={{0: {folder}}}", "~rows.trained.EarnMore-shuffled",
                             f"+task.pool={pool}")
    decisions = pd.read_parquet(metrics.parent / "decisions.parquet")
    mine = decisions[decisions["framework"] == "EarnMore"]
    assert len(mine) == 15 and mine["error"].isna().all()
    for _, row in mine.iterrows():
        weights = json.loads(row["weights"])
        assert set(weights) == {CASH, *TINY_TICKERS}
        assert sum(weights.values()) == pytest.approx(1.0, abs=1e-9)
        assert min(weights.values()) >= 0.0
        if pd.Timestamp(row["date"]) >= pd.Timestamp("2019-07-08"):
            assert weights["TEC2"] == 0.0 and weights["FIN1"] == 0.0
        else:
            assert weights["TEC2"] > 0.0 and weights["FIN1"] > 0.0
    table = pd.read_csv(metrics)
    assert "EarnMore" in set(table["framework"])


def test_a_missing_checkpoint_makes_the_row_not_run_with_its_train_command():
    cfg = composed("+suite=earnmore", "rows.trained.EarnMore.checkpoints={0: /nonexistent/seed-0/checkpoint}",
                   "seeds=[0]")
    frameworks, facts = expand_rows(cfg.frameworks, cfg.rows, cfg.get("backbones"), [0])
    assert "EarnMore" not in frameworks
    assert facts["EarnMore"]["status"].startswith("not run")
    assert "python -m comparators.earnmore.train --seed 0 --out outputs/train/earnmore/iid-alpha-long/seed-0" in facts["EarnMore"]["status"]


@pytest.mark.slow
def test_a_checkpoint_served_another_market_fails_its_decisions_with_one_line(tmp_path):
    folder, _ = train_tiny(tmp_path / "train", seed=0)
    metrics = run_in_process(tmp_path / "run", "+suite=earnmore", *tiny_overrides(), "seeds=[0]", "data.seed=1",
                             f"rows.trained.EarnMore.checkpoints={{0: {folder}}}", "~rows.trained.EarnMore-shuffled")
    decisions = pd.read_parquet(metrics.parent / "decisions.parquet")
    errors = decisions.loc[decisions["framework"] == "EarnMore", "error"]
    assert len(errors) == 15 and errors.notna().all()
    assert errors.str.contains(f"the checkpoint {folder} was trained on other bars than this run's market shows "
                               "over its training window 2015-01-01 .. 2018-06-15", regex=False).all()
