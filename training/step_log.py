"""The per-step training log as a CSV file, one row per logging step.

Every `on_log` of the trainer that carries training metrics (TRL's reward, its components,
KL, lengths, step time; our `episodes/*` statistics) becomes a row keyed by `step` (the
optimizer step), `wall_s` (seconds since this log was opened, plus the time logged before a
resume) and `cpu_s` (this process's CPU seconds, likewise: on a shared machine the honest
measure of work). On a resumed run the rows after the checkpoint's step are dropped first, so the file
reads as one uninterrupted run. The file is rewritten whole at each log (a few hundred rows),
atomically (`training.log_files`).
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
from transformers import TrainerCallback

from training.log_files import rewrite_csv

TRAINING_KEYS = ("reward", "loss")
"""A log holding one of these is a training step's log (not the end-of-training summary)."""


class StepLog(TrainerCallback):
    """Writes `path` (CSV) from the trainer's logs (see the module docstring)."""

    def __init__(self, path: Path, resume_step: int = 0) -> None:
        self.path = Path(path)
        self.rows: list[dict] = []
        if self.path.is_file() and resume_step > 0:
            kept = pd.read_csv(self.path)
            self.rows = kept[kept["step"] <= resume_step].to_dict("records")
        self.offset_s = float(self.rows[-1]["wall_s"]) if self.rows else 0.0
        self.offset_cpu_s = float(self.rows[-1]["cpu_s"]) if self.rows else 0.0
        self.opened = time.perf_counter()
        self.opened_cpu = time.process_time()

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs or not any(key in logs for key in TRAINING_KEYS):
            return
        wall_s = self.offset_s + time.perf_counter() - self.opened
        cpu_s = self.offset_cpu_s + time.process_time() - self.opened_cpu
        self.rows.append({"step": state.global_step, "wall_s": round(wall_s, 3), "cpu_s": round(cpu_s, 3), **logs})
        rewrite_csv(self.rows, self.path, float_format="%.6g")
