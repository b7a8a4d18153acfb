"""comparators.massa.summary on a hand-made run: the rows table and the signal's paired tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from comparators.massa.summary import rows_table, signal_tests
from core.errors import ConfigError
from harness.run_directory import Run
from metrics.significance import paired_row

DAYS = pd.bdate_range("2024-01-01", periods=60)


def curve(seed: int, drift: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 100.0 * np.cumprod(1.0 + rng.normal(drift, 0.01, len(DAYS)))


def fake_run() -> Run:
    equity, metrics = [], []
    for framework, drift in (("MASSA", 0.001), ("MASSA-no-signal", 0.0)):
        for seed in (0, 1):
            values = curve(10 * seed + int(drift * 1e4), drift)
            equity.append(pd.DataFrame({"date": DAYS, "framework": framework, "ticker": "UNIVERSE", "seed": seed,
                                        "equity": values}))
            for ticker in ("UNIVERSE", "AVG"):  # the runner's metrics.csv repeats each episode as its average row
                metrics.append({"framework": framework, "ticker": ticker, "seed": seed, "TR": values[-1] / values[0] - 1,
                                "SR_ann": 1.0 + seed, "MDD": 0.1, "Turnover": 2.0, "HHI": 0.2})
    info = {"framework_facts": {"MASSA": {"seeds": {"0": {"scaled_share": 0.5, "mean_buy_scale": 0.8, "action_correlation": 0.1},
                                                    "1": {"scaled_share": 0.7, "mean_buy_scale": 0.6, "action_correlation": 0.3}}}}}
    empty = pd.DataFrame()
    return Run(path=Path("run"), info=info, equity=pd.concat(equity, ignore_index=True), decisions=empty,
               prices=empty, trades=empty, metrics=pd.DataFrame(metrics))


def test_the_rows_table_gives_seed_means_and_spreads_and_the_execution_facts():
    table = rows_table(fake_run())
    assert table.loc["MASSA", "seeds"] == "2"
    assert table.loc["MASSA", "SR_ann"] == "1.500 ± 0.707"
    assert table.loc["MASSA", "scaled share"] == "0.600 ± 0.141"
    assert table.loc["MASSA-no-signal", "scaled share"] == ""


def test_the_signal_tests_are_the_reports_paired_test_on_seed_means_and_per_seed():
    run = fake_run()
    tests = signal_tests(run, "MASSA", "MASSA-no-signal")
    wide = run.equity.pivot(index="date", columns=["framework", "seed"], values="equity").pct_change().dropna()
    pooled = paired_row(wide["MASSA"].mean(axis=1).to_numpy(), wide["MASSA-no-signal"].mean(axis=1).to_numpy())
    assert tests.loc["seed mean", "dmean"] == pytest.approx(pooled["dmean"])
    assert tests.loc["seed mean", "p_mean"] == pytest.approx(pooled["p_mean"])
    single = paired_row(wide["MASSA"][1].to_numpy(), wide["MASSA-no-signal"][1].to_numpy())
    assert tests.loc["seed 1", "p_mean"] == pytest.approx(single["p_mean"])
    assert tests.loc["seed 1", "p_mean_holm"] >= tests.loc["seed 1", "p_mean"]
    with pytest.raises(ConfigError, match="no framework 'MADDPG'"):
        signal_tests(run, "MADDPG", "MASSA")
