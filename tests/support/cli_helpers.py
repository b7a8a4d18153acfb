"""Running `run_benchmark.py` in a subprocess from tests."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "tests" / "support"


def benchmark_command(*overrides: str) -> list[str]:
    """The command line of `run_benchmark.py` with Hydra overrides, progress bar off."""
    return [sys.executable, str(ROOT / "run_benchmark.py"), "progress=false", "report=false", *overrides]


def support_env(extra_path: Path | None = None) -> dict[str, str]:
    """The environment with tests/support (and `extra_path`) importable, and torch on one thread
    unless the caller chose (the tests' models are too small to gain from more; on a busy machine
    two threads made a run with the tiny model about three times slower)."""
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    paths = [str(SUPPORT)] + ([str(extra_path)] if extra_path else [])
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    return env


def journal_rows(path: Path, framework: str | None = None) -> int:
    """Decisions journaled in the journal at `path` (of `framework` only, when given); 0 before it exists."""
    where, parameters = ("WHERE framework = ?", (framework,)) if framework else ("", ())
    try:
        with sqlite3.connect(path) as db:
            return db.execute(f"SELECT count(*) FROM decisions {where}", parameters).fetchone()[0]
    except sqlite3.OperationalError:
        return 0
