"""A training log rewritten whole (training/log_files.py) is never left cut by a failure or a kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from training.log_files import rewrite_csv

WRITER = """
import sys
from training.log_files import rewrite_csv
rows = []
while True:
    rows.append({f"column_{k}": len(rows) + k / 7 for k in range(60)})
    rewrite_csv(rows, sys.argv[1], float_format="%.6g")
"""


def test_a_write_that_fails_midway_leaves_the_old_log(tmp_path, monkeypatch):
    path = tmp_path / "steps.csv"
    rewrite_csv([{"step": 1, "loss": 0.5}], path)

    def cut(frame, target, **kwargs):
        with open(target, "w") as handle:
            handle.write("step,lo")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", cut)
    with pytest.raises(OSError, match="disk full"):
        rewrite_csv([{"step": 1, "loss": 0.5}, {"step": 2, "loss": 0.4}], path)
    monkeypatch.undo()
    assert pd.read_csv(path).to_dict("records") == [{"step": 1, "loss": 0.5}]


def test_killed_writers_leave_a_whole_log(tmp_path):
    path = tmp_path / "steps.csv"
    counts = []
    for kill in range(6):
        child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], env={**os.environ, "PYTHONPATH": os.getcwd()})
        deadline = time.monotonic() + 30
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3 + 0.07 * kill)             # into a write of a few hundred rows of 60 columns
        child.send_signal(signal.SIGKILL)
        child.wait()
        frame = pd.read_csv(path)
        assert frame.shape[1] == 60 and len(frame) > 0
        assert frame["column_0"].tolist() == list(range(len(frame)))
        counts.append(len(frame))
    assert max(counts) > 50                       # the kills came during long rewrites, not only the first ones
