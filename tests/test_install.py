"""A non-editable install finds its configs through the package: `pip install .` (here `--target`, without
dependencies, which the test environment already has), then `python -m run_benchmark +suite=smoke` from
a directory that is not the checkout gives the same metrics as the checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from cli_helpers import ROOT, benchmark_command

LEFT_OUT = shutil.ignore_patterns(".git", ".venv", ".ci-cache", ".cache", "outputs", "multirun", "tests", "results",
                                  "docs", "benchmarks", "build", "dist", "*.egg-info", "__pycache__", "*.sqlite*")
"""What a source distribution would not need: the package is built from the rest of the checkout."""

QUIET = ["progress=false", "report=false", "viewer=false"]


def installed_env(target) -> dict[str, str]:
    """The environment with only the installed copy at `target` importable ahead of site-packages."""
    return {**os.environ, "PYTHONPATH": str(target), "OMP_NUM_THREADS": "1"}


@pytest.mark.slow
def test_a_non_editable_install_runs_the_smoke_suite_from_another_directory(tmp_path):
    source, target, elsewhere = tmp_path / "source", tmp_path / "site", tmp_path / "elsewhere"
    shutil.copytree(ROOT, source, ignore=LEFT_OUT)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(source)], check=True, capture_output=True, timeout=300)
    shutil.rmtree(source)  # nothing may be read from the copy it was built from
    elsewhere.mkdir()
    where = subprocess.run([sys.executable, "-c", "import configs, harness, run_benchmark; "
                            "print(configs.__file__, harness.__file__, run_benchmark.__file__)"],
                           cwd=elsewhere, env=installed_env(target), capture_output=True, text=True, check=True)
    assert all(path.startswith(str(target)) for path in where.stdout.split()), where.stdout
    installed = subprocess.run([sys.executable, "-m", "run_benchmark", "+suite=smoke", "hydra.run.dir=out", *QUIET],
                               cwd=elsewhere, env=installed_env(target), capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    checkout = tmp_path / "checkout"
    subprocess.run(benchmark_command("+suite=smoke", f"hydra.run.dir={checkout}", "viewer=false"), cwd=ROOT,
                   env={**os.environ, "OMP_NUM_THREADS": "1"}, check=True, capture_output=True, timeout=600)
    assert (elsewhere / "out" / "metrics.csv").read_bytes() == (checkout / "metrics.csv").read_bytes()
