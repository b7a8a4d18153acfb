"""Shared fixtures: the repository root and a runner for `run_benchmark.py` in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUPPORT = ROOT / "tests" / "support"
sys.path.insert(0, str(SUPPORT))


def benchmark_command(*overrides: str) -> list[str]:
    """The command line of `run_benchmark.py` with Hydra overrides, progress bar off."""
    return [sys.executable, str(ROOT / "run_benchmark.py"), "progress=false", "report=false", *overrides]


def support_env(extra_path: Path | None = None) -> dict[str, str]:
    """The environment with tests/support (and `extra_path`) importable."""
    env = dict(os.environ)
    paths = [str(SUPPORT)] + ([str(extra_path)] if extra_path else [])
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    return env


@pytest.fixture
def run_cli():
    """Run run_benchmark.py with overrides; returns the CompletedProcess."""

    def run(*overrides: str, extra_path: Path | None = None, check: bool = True):
        done = subprocess.run(benchmark_command(*overrides), cwd=ROOT, env=support_env(extra_path),
                              capture_output=True, text=True, timeout=600)
        if check and done.returncode != 0:
            raise AssertionError(f"run_benchmark failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return done

    return run
