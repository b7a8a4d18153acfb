"""A MASSA checkpoint: the executed policy and its input scaling survive save and load."""

from __future__ import annotations

import json

import pytest
import torch
from massa_fixtures import UNIVERSE, scaling, write_checkpoint

from comparators.checkpoint import fingerprint
from comparators.massa.agent import load_agent
from comparators.massa.inputs import InputScaling
from core.errors import DataError, MissingFileError


@pytest.mark.parametrize("variant", ["massa", "random_signal", "central"])
def test_a_saved_policy_loads_to_the_same_actions_and_fingerprint(tmp_path, variant):
    policy, written = write_checkpoint(tmp_path / "policy", variant)
    checkpoint, loaded_scaling = load_agent(tmp_path / "policy")
    assert checkpoint.fingerprint == written == fingerprint(tmp_path / "policy")
    assert checkpoint.config["instruments"] == list(UNIVERSE)
    assert loaded_scaling == scaling(2)
    o, c = torch.randn(4, len(UNIVERSE), checkpoint.config["observation"]), torch.randn(4, checkpoint.config["context"])
    expected = policy.act(o, c, generator=torch.Generator().manual_seed(5))
    got = checkpoint.model.act(o, c, generator=torch.Generator().manual_seed(5))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


def test_the_input_scaling_round_trips_through_plain_json():
    fitted = scaling(3)
    assert InputScaling.from_dict(json.loads(json.dumps(fitted.to_dict()))) == fitted


def test_another_variants_weights_do_not_load_into_the_config(tmp_path):
    write_checkpoint(tmp_path / "policy", "massa")
    config_file = tmp_path / "policy" / "config.json"
    config = json.loads(config_file.read_text())
    config["massa"]["variant"] = "central"
    config_file.write_text(json.dumps(config))
    with pytest.raises(DataError, match="does not fit the model"):
        load_agent(tmp_path / "policy")


def test_a_missing_checkpoint_is_one_line(tmp_path):
    with pytest.raises(MissingFileError, match="no checkpoint folder"):
        load_agent(tmp_path / "absent")


@pytest.mark.parametrize("variant, refused", [("massa", True), ("no_signal", False)])
def test_a_learned_signal_trained_under_the_clamp_is_refused(tmp_path, variant, refused):
    """A checkpoint whose config lacks `signal_log_std` (its signal's log σ was clamped in training)."""
    write_checkpoint(tmp_path / "policy", variant)
    config_file = tmp_path / "policy" / "config.json"
    config = json.loads(config_file.read_text())
    del config["signal_log_std"]
    config_file.write_text(json.dumps(config))
    if refused:
        with pytest.raises(DataError, match="trained with log σ clamped"):
            load_agent(tmp_path / "policy")
    else:
        assert load_agent(tmp_path / "policy")[0].config["massa"]["variant"] == "no_signal"
