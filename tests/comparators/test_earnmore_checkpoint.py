"""EarnMore checkpoints: a save/load round trip decides alike; a retrain changes the fingerprint."""

from __future__ import annotations

import numpy as np
import pytest
from earnmore_runs import TINY_TICKERS, train_tiny

from comparators.checkpoint import fingerprint
from comparators.earnmore.agent import load_policy, pool_weights
from comparators.earnmore.train import main
from core.errors import ConfigError, MissingFileError
from frameworks.earnmore import EarnMore

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return train_tiny(tmp_path_factory.mktemp("earnmore") / "seed-0", seed=0)


def test_a_loaded_checkpoint_decides_as_the_trained_policy(trained):
    folder, facts = trained
    loaded = load_policy(folder)
    assert loaded.fingerprint == facts["fingerprint"] == fingerprint(folder)
    assert loaded.config["tickers"] == list(TINY_TICKERS)
    rng = np.random.default_rng(0)
    windows = rng.standard_normal((3, 4, loaded.config["days"], loaded.config["n_features"])).astype(np.float32)
    outside = np.zeros((3, 4), dtype=np.float32)
    again = load_policy(folder)
    first = pool_weights(loaded.model, windows, outside, loaded.config["temperature"])
    assert np.array_equal(first, pool_weights(again.model, windows, outside, again.config["temperature"]))
    assert facts["reconstruction_loss"]["first"] is not None
    assert (folder.parent / "log" / "log.csv").is_file()


def test_a_retrain_changes_the_fingerprint_of_checkpoint_and_plugin(trained, tmp_path):
    folder, facts = trained
    before = EarnMore({0: str(folder)}).fingerprint()
    retrained, refacts = train_tiny(tmp_path / "seed-0", seed=1)
    assert refacts["fingerprint"] != facts["fingerprint"]
    assert EarnMore({0: str(retrained)}).fingerprint() != before


def test_a_missing_checkpoint_is_one_line(tmp_path):
    with pytest.raises(MissingFileError, match="no checkpoint folder"):
        EarnMore({0: str(tmp_path / "absent")})


def test_a_malformed_channel_flag_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="CHANNEL:FIELD"):
        main(["--out", str(tmp_path), "--channels", "news"])
