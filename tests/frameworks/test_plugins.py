"""Plugins: an out-of-tree package installed with pip runs through run_benchmark.py; the
README's example framework runs too, and a misspelt parameter of it is refused."""

from __future__ import annotations

import re
import subprocess
import sys

import pandas as pd
import pytest
from cli_helpers import ROOT

PLUGIN = ROOT / "tests" / "support" / "plugin_package"


def readme_example() -> str:
    """The Python code block of the README's 'Add your own framework' section."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Add your own framework", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow
def test_readme_plugin_installed_with_pip_runs_through_run_benchmark(tmp_path, run_cli):
    package = tmp_path / "plugin"
    subprocess.run(["cp", "-r", str(PLUGIN), str(package)], check=True)
    (package / "td_momentum" / "momentum.py").write_text(readme_example())
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(package)], check=True, capture_output=True)

    out = tmp_path / "run"
    run_cli("+suite=smoke", "+framework@frameworks.momentum=momentum", "frameworks.momentum.lookback=10",
            f"hydra.run.dir={out}", extra_path=site)
    metrics = pd.read_csv(out / "metrics.csv")
    assert set(metrics.query("framework == 'momentum'")["ticker"]) == {"MSFT", "NVDA", "AVG"}
    actions = pd.read_parquet(out / "decisions.parquet").query("framework == 'momentum'")["action"]
    assert {"BUY", "SELL"} <= set(actions)
    resolved = (out / ".hydra" / "config.yaml").read_text()
    assert "td_momentum.momentum.Momentum" in resolved and "lookback: 10" in resolved

    typo = run_cli("+suite=smoke", "+framework@frameworks.momentum=momentum", "+frameworks.momentum.lookbak=10",
                   f"hydra.run.dir={tmp_path / 'typo'}", extra_path=site, check=False)
    assert typo.returncode == 2
    assert typo.stderr == "error: frameworks.momentum: unknown key 'lookbak' (did you mean 'lookback'?)\n"
