"""The per-step CSV: one row per training log, and a resumed run drops the rows after its checkpoint."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from training.step_log import StepLog


def log_steps(log: StepLog, steps: range) -> None:
    for step in steps:
        log.on_log(None, SimpleNamespace(global_step=step, is_world_process_zero=True), None, logs={"reward": float(step), "loss": 0.1})
    log.on_log(None, SimpleNamespace(global_step=steps[-1], is_world_process_zero=True), None, logs={"train_runtime": 9.0})   # the summary


def test_rows_per_step_and_resume(tmp_path):
    path = tmp_path / "steps.csv"
    log_steps(StepLog(path), range(1, 6))
    first = pd.read_csv(path)
    assert first["step"].tolist() == [1, 2, 3, 4, 5] and "train_runtime" not in first
    assert {"wall_s", "cpu_s", "reward", "loss"} <= set(first.columns)
    resumed = StepLog(path, resume_step=3)          # killed after step 5, last checkpoint at step 3
    log_steps(resumed, range(4, 7))
    again = pd.read_csv(path)
    assert again["step"].tolist() == [1, 2, 3, 4, 5, 6]
    assert again["reward"].tolist() == [1, 2, 3, 4, 5, 6]
    assert again["wall_s"].is_monotonic_increasing and again["cpu_s"].is_monotonic_increasing
