"""The MacroHFT plugin and the DP oracle row decide valid futures targets through the runner."""

from __future__ import annotations

import pytest
from macrohft_fixture import tiny_checkpoint, tiny_market

from frameworks.baselines.futures_rules import TrendFollowing
from frameworks.dp_oracle import DPTeacherOracle
from frameworks.macrohft import MacroHFTAgent
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from harness.tasks.futures import FuturesConfig, FuturesTask

pytestmark = pytest.mark.slow


def _run(market, frameworks, path, seeds, batch_size):
    index = market.frame("SYN").index
    spec = RunSpec(tickers=["SYN"], seeds=seeds, start=index[4600], end=index[4999], batch_size=batch_size,
                   task=FuturesTask(FuturesConfig()))
    with Journal(path) as journal:
        runner = EpisodeRunner(market, spec, journal, progress=False, warn=lambda _: None)
        return runner.run([FrameworkEntry(n, f, config_hash=n) for n, f in frameworks.items()])


def test_plugin_and_oracle_decide_valid_targets_on_a_short_intraday_window(tmp_path):
    market = tiny_market()
    checkpoints = {seed: tiny_checkpoint(tmp_path / f"seed-{seed}", seed=seed) for seed in (0, 1)}
    start = str(market.frame("SYN").index[4600])
    macrohft = MacroHFTAgent(checkpoints={s: str(p) for s, p in checkpoints.items()}, start=start)
    oracle = DPTeacherOracle(market, positions=[-1.0, 0.0, 1.0], fee_bps=5.0)
    frameworks = {"macrohft": macrohft, "oracle": oracle, "trend": TrendFollowing(fast=16, slow=64)}
    result = _run(market, frameworks, tmp_path / "journal.sqlite", seeds=[0, 1], batch_size=64)
    mine = [d for d in result.decisions if d.framework == "macrohft"]
    rule = [d for d in result.decisions if d.framework == "trend"]   # deterministic: seed 0 only
    assert len(mine) == 2 * len(rule) > 0 and result.failed == 0
    assert {d.decision.target for d in mine} <= {0.0, 1.0}
    assert macrohft.run_facts()["paper_conventions"] == ["macrohft"]
    equity = {key: episode.equity["equity"].iloc[-1] for key, episode in result.episodes.items()}
    oracle_end = next(v for k, v in equity.items() if "oracle" in str(k))
    assert all(oracle_end >= v for k, v in equity.items() if "oracle" not in str(k))
    # one batch or many: the same decisions (the plugin extends its path, never redoes it)
    again = _run(market, {"macrohft": MacroHFTAgent(checkpoints={s: str(p) for s, p in checkpoints.items()}, start=start)},
                 tmp_path / "again.sqlite", seeds=[0, 1], batch_size=1000)
    assert [d.decision.target for d in again.decisions] == [d.decision.target for d in mine]
