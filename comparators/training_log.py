"""The log of one training run: a tqdm progress bar, a CSV file and TensorBoard event files.

    with TrainingLog(folder, total=steps, description="alphamix") as log:
        for step in range(steps):
            ...
            log.step(loss=float(loss), lr=lr)       # one row, the bar advances by one
        log.scalars(step, valid_accuracy=0.55)      # a row without advancing the bar

`folder/log.csv` has one row per call: `step`, `wall_s` (seconds since the log opened) and the
given scalars as columns (a row lacking a column leaves it empty; columns are the union in first
appearance order: a row is appended, and the file is rewritten only when a new column appears). `folder/tensorboard/` holds the same scalars
(`torch.utils.tensorboard.SummaryWriter`, tags as given): `tensorboard --logdir folder/tensorboard`.
The bar shows the latest scalars. `progress=False` silences the bar (tests, non-interactive
runs); the files are written either way.

The interface (`TrainingLog`, `step`, `scalars`, `close`, `rows`) is shared by every comparator.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

CSV_FILE = "log.csv"
TENSORBOARD_DIR = "tensorboard"


class TrainingLog:
    """Progress bar + CSV + TensorBoard for one training run (module docstring)."""

    def __init__(self, folder: str | Path, total: int | None = None, description: str = "train",
                 progress: bool = True):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.rows: list[dict[str, float]] = []
        self._started = time.monotonic()
        self._steps = 0
        self._columns: list[str] = []
        self._writer = SummaryWriter(log_dir=str(self.folder / TENSORBOARD_DIR))
        self._bar = tqdm(total=total, desc=description, disable=not progress, dynamic_ncols=True)

    def scalars(self, step: int, **values: float) -> None:
        """Record `values` at `step` in the CSV and TensorBoard, without advancing the bar."""
        row = {"step": int(step), "wall_s": round(time.monotonic() - self._started, 3),
               **{name: float(value) for name, value in values.items()}}
        self.rows.append(row)
        for name, value in values.items():
            self._writer.add_scalar(name, float(value), int(step))
        self._write_csv()

    def step(self, **values: float) -> None:
        """Record `values` at the next step (1, 2, ...) and advance the bar by one."""
        self._steps += 1
        self.scalars(self._steps, **values)
        self._bar.update(1)
        if values:
            self._bar.set_postfix({name: f"{float(value):.4g}" for name, value in values.items()}, refresh=False)

    def _write_csv(self) -> None:
        """Append the last row, or rewrite the file when it brings a new column."""
        new = [name for name in self.rows[-1] if name not in self._columns]
        self._columns.extend(new)
        rewrite = bool(new)
        with (self.folder / CSV_FILE).open("w" if rewrite else "a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=self._columns)
            if rewrite:
                writer.writeheader()
            writer.writerows(self.rows if rewrite else self.rows[-1:])

    def close(self) -> None:
        """Flush TensorBoard and close the bar."""
        self._writer.flush()
        self._writer.close()
        self._bar.close()

    def __enter__(self) -> TrainingLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
