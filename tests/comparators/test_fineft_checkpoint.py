"""FineFT checkpoints: save/load round trip, a retrain that changes the weights changes the fingerprint,
and the plugin loaded from a trained checkpoint runs through the futures task."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch
from in_process import run_in_process

from comparators.checkpoint import save_checkpoint
from comparators.fineft.checkpoint_io import FineFTCheckpoint
from comparators.fineft.policy import FineFTModel
from comparators.fineft.positions import position_grid
from comparators.fineft.stage_one import StageOneSettings
from comparators.fineft.stage_two import VaeSettings
from comparators.fineft.train import CHECKPOINT_DIR, FineFTSettings, train
from frameworks.fineft import FineFT

SMALL_MARKET = ["data.bars=7200", 'split.train={start: "2024-01-01", end: "2024-01-02"}',
                'split.valid={start: "2024-01-03", end: "2024-01-03"}', 'split.test={start: "2024-01-04", end: "2024-01-04"}',
                "split.gap_bars=0"]
TINY = FineFTSettings(learners=3, hidden=8, vae_hidden=8, chunk_bars=48, step_minutes=5,
                      stage_one=StageOneSettings(pretrain_steps=10, train_steps=20, rollout_steps=128,
                                                 updates_per_rollout=10, batch=32),
                      vae=VaeSettings(epochs=1, max_states=500))


def test_save_and_load_round_trip(tmp_path):
    torch.manual_seed(3)
    model = FineFTModel(5, position_grid(5.0), learners=3, dynamics=2, hidden=8)
    model.chosen.copy_(torch.tensor([2, 0]))
    model.threshold.fill_(0.02)
    model.conservative = "hold"
    for k in range(2):
        model.set_reference(k, np.random.default_rng(k).normal(size=300))
    config = {"features": 5, "grid": position_grid(5.0).tolist(), "learners": 3, "dynamics": 2, "hidden": 8,
              "vae_latent": 4, "vae_hidden": 32, "conservative": "hold", "funding_hours": 8.0, "step_minutes": 15,
              "standardiser": {"names": list("abcde"), "mean": [0.0] * 5, "std": [1.0] * 5}}
    saved = save_checkpoint(tmp_path / "ckpt", model, config, {"seed": 0})
    loaded = FineFTCheckpoint.load(tmp_path / "ckpt")
    assert loaded.fingerprint == saved
    assert loaded.model.conservative == "hold" and float(loaded.model.threshold) == pytest.approx(0.02)
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, loaded.model.state_dict()[name]), name
    x = np.random.default_rng(9).normal(size=(50, 5)).astype(np.float32)
    for routing in ("vae", "dynamics", "ensemble"):
        assert np.array_equal(model.targets(x, routing)[0], loaded.model.targets(x, routing)[0])


@pytest.mark.slow
def test_retraining_changes_the_fingerprint_and_a_seed_reproduces_it(tmp_path):
    first = train("futures_intraday", SMALL_MARKET, TINY, tmp_path / "a", progress=False)
    again = train("futures_intraday", SMALL_MARKET, TINY, tmp_path / "b", progress=False)
    other = train("futures_intraday", SMALL_MARKET, dataclasses.replace(TINY, seed=1), tmp_path / "c", progress=False)
    assert first["fingerprint"] == again["fingerprint"]
    assert other["fingerprint"] != first["fingerprint"]
    assert FineFTCheckpoint.load(tmp_path / "c" / CHECKPOINT_DIR).fingerprint == other["fingerprint"]
    plugin = FineFT({0: str(tmp_path / "a" / CHECKPOINT_DIR)})
    assert plugin.fingerprint() != FineFT({0: str(tmp_path / "c" / CHECKPOINT_DIR)}).fingerprint()
    log = pd.read_csv(tmp_path / "a" / "log" / "log.csv")
    assert {"pretrain/loss", "train/td", "vae0/neg_elbo"} <= set(log.columns)

    checkpoint = str(tmp_path / "a" / CHECKPOINT_DIR)
    metrics = pd.read_csv(run_in_process(
        tmp_path / "run", "+suite=fineft", *SMALL_MARKET, "seeds=[0]",
        f"rows.trained.FineFT.checkpoints={{0: {checkpoint}}}",
        f"rows.trained.FineFT-unrouted.checkpoints={{0: {checkpoint}}}",
        f"rows.trained.FineFT-no-conservative.checkpoints={{0: {checkpoint}}}"))
    rows = metrics[metrics["ticker"] == "SYNBTC"].set_index("framework")
    assert {"FineFT", "FineFT-unrouted", "FineFT-no-conservative", "trend"} <= set(rows.index)
    assert rows.loc["FineFT", "Trades"] > 0
    assert rows.loc["FineFT", "MaxLeverage"] < 5.5  # targets within the 5x cap, drifting with the price between steps
