"""MacroHFT training end to end on a tiny market: checkpoint round trip, fingerprints, causal trading."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from macrohft_fixture import tiny_checkpoint, tiny_market

from comparators.checkpoint import fingerprint
from comparators.macrohft.settings import load_settings
from comparators.macrohft.trader import MacroHFTTrader
from comparators.macrohft.train import conditions
from core.errors import ConfigError, MissingFileError

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return tiny_checkpoint(tmp_path_factory.mktemp("macrohft") / "seed-0", seed=0)


def test_checkpoint_round_trip_gives_the_same_q_values(trained):
    trader = MacroHFTTrader(trained)
    again = MacroHFTTrader(trained)
    config = json.loads((trained / "config.json").read_text())
    assert config["model"]["agents"] == 6 and config["positions"] == [0.0, 1.0]
    single, trend, context = torch.randn(7, config["model"]["single_dim"]), torch.randn(7, 7), torch.randn(7, 2)
    previous = torch.tensor([0, 1, 0, 1, 0, 1, 0])
    with torch.no_grad():
        assert torch.equal(trader.model(single, trend, context, previous), again.model(single, trend, context, previous))
    assert trader.fingerprint == again.fingerprint == fingerprint(trained)
    facts = json.loads((trained / "training.json").read_text())
    assert set(facts["stages"]) == {"sub_trend0", "sub_trend1", "sub_trend2", "sub_vol0", "sub_vol1", "sub_vol2", "hyper"}
    assert (trained.parent / "log" / "log.csv").is_file()


def test_retraining_with_another_seed_changes_the_fingerprint(trained, tmp_path):
    other = tiny_checkpoint(tmp_path / "seed-1", seed=1)
    assert fingerprint(other) != fingerprint(trained)


@pytest.mark.parametrize("start", [None, 4600])
def test_the_trader_is_causal_and_extends_its_path_identically(trained, start):
    bars = tiny_market().frame("SYN")
    anchor = bars.index[start] if start is not None else None
    whole = MacroHFTTrader(trained, anchor).targets("SYN", bars)
    assert set(whole.unique()) <= {0.0, 1.0}
    if start is not None:
        assert (whole.iloc[:start] == 0.0).all()
    stepped = MacroHFTTrader(trained, anchor)
    for end in (4700, 4701, 5000, 5999):   # shorter histories first, as the runner's batches arrive
        part = stepped.targets("SYN", bars.iloc[:end + 1])
        assert np.array_equal(part.to_numpy(), whole.iloc[:end + 1].to_numpy())
    changed = bars.copy()
    changed.iloc[5000:, :4] *= 0.5        # the future changes; decisions up to bar 4999 do not
    assert np.array_equal(MacroHFTTrader(trained, anchor).targets("SYN", changed).to_numpy()[:5000],
                          whole.to_numpy()[:5000])


def test_grid_conditions_and_bad_settings():
    grid = load_settings(None, {"subagents": "grid", "volatility_quantiles": [0.5]})
    assert conditions(grid) == [{"trend": t, "vol": v} for t in range(3) for v in range(2)]
    with pytest.raises(ConfigError, match="grid needs one volatility"):
        load_settings(None, {"subagents": "grid"})
    with pytest.raises(ConfigError, match="sub_epoch"):
        load_settings(None, {"sub_epoch": 3})


def test_a_missing_checkpoint_is_one_line(tmp_path):
    with pytest.raises(MissingFileError, match="no checkpoint folder"):
        MacroHFTTrader(tmp_path / "absent")


def test_the_futures_target_grid_and_the_grid_of_conditions_train_and_trade(tmp_path):
    folder = tiny_checkpoint(tmp_path / "grid", seed=0, positions=[-1.0, 0.0, 1.0], subagents="grid",
                             volatility_quantiles=[0.5])
    trader = MacroHFTTrader(folder)
    config = json.loads((folder / "config.json").read_text())
    assert config["model"]["agents"] == 6 and config["model"]["actions"] == 3
    assert config["conditions"][1] == {"trend": 0, "vol": 1}
    targets = trader.targets("SYN", tiny_market().frame("SYN"))
    assert set(targets.unique()) <= {-1.0, 0.0, 1.0} and targets.iloc[0] in (-1.0, 0.0, 1.0)
