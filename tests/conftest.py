"""Shared fixtures; tests/support is importable from every test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

from cli_helpers import ROOT, benchmark_command, support_env  # noqa: E402


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
