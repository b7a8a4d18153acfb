"""Running `run_benchmark.py` in a subprocess from tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "tests" / "support"


def benchmark_command(*overrides: str) -> list[str]:
    """The command line of `run_benchmark.py` with Hydra overrides, progress bar off."""
    return [sys.executable, str(ROOT / "run_benchmark.py"), "progress=false", "report=false", *overrides]


def support_env(extra_path: Path | None = None) -> dict[str, str]:
    """The environment with tests/support (and `extra_path`) importable."""
    env = dict(os.environ)
    paths = [str(SUPPORT)] + ([str(extra_path)] if extra_path else [])
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    return env
