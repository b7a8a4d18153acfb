"""Validation during training: the starting policy and a checkpoint traded on the valid split
through the benchmark's runner, one row of validation.csv each."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import train_single_agent
from training_runs import fast_config


@pytest.mark.slow
def test_the_start_and_each_checkpoint_are_traded_on_the_valid_split(cache_root, tmp_path):
    output = tmp_path / "run"
    days = 3
    train_single_agent.train(fast_config(output, 1, "train.monitoring.validate_every=1",
                                         f"train.monitoring.validation_days={days}"))
    rows = pd.read_csv(output / "validation.csv")
    assert rows["step"].tolist() == [0, 1]
    assert (rows["decisions"] == days).all()
    for column in ["ARR", "SR_ann", "MDD", "regime_accuracy", "result", "tool_calls", "no_answer"]:
        assert all(math.isfinite(v) for v in rows[column]), column
    assert (output / "validation" / "step-1" / "journal.sqlite").is_file()
