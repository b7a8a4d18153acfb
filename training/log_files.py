"""The training logs rewritten whole at every entry (`steps.csv`, `validation.csv`, `groups.csv`),
written so that a kill at any moment leaves the old file or the new one, never a cut one.

`pandas.DataFrame.to_csv(path)` truncates `path` before it formats and writes the rows, so a run
killed during that window (tens of milliseconds once a log holds a few hundred rows of sixty
columns) left an empty `steps.csv`: the run's whole curve lost, and a resume from its last
checkpoint stopped on pandas' EmptyDataError. `rewrite_csv` writes the rows to a sibling file and
renames it over the log with `os.replace`, which is atomic on POSIX file systems.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

PARTIAL_SUFFIX = ".partial"


def rewrite_csv(rows: list[dict], path: Path, float_format: str | None = None) -> None:
    """Replace the CSV at `path` with `rows` (one dict per row, no index), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + PARTIAL_SUFFIX)
    pd.DataFrame(rows).to_csv(partial, index=False, float_format=float_format)
    os.replace(partial, path)
