"""EarnMore checkpoints: a save/load round trip decides alike; a retrain changes the fingerprint; the
checkpoint holds the weights that scored best on the validation split."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from earnmore_runs import TINY_TICKERS, tiny_overrides, tiny_settings, train_tiny

from comparators.checkpoint import fingerprint
from comparators.earnmore.agent import load_policy, pool_weights
from comparators.earnmore.data import split_arrays
from comparators.earnmore.selection import excess_log_return
from comparators.earnmore.train import main, run_config
from comparators.features import Standardiser
from core.errors import ConfigError, MissingFileError
from frameworks.earnmore import EarnMore
from frameworks.registry import instantiate_or_explain
from market.view import MarketView

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


def test_the_checkpoint_holds_the_weights_that_scored_best_on_the_validation_split(tmp_path):
    folder, facts = train_tiny(tmp_path / "run", select_every=16)
    curve = facts["selection"]["curve"]
    best = max(curve, key=lambda point: point["valid_excess_bp"])
    assert [point["step"] for point in curve] == [16, 32, 48]
    assert facts["selection"]["selected_step"] == best["step"]
    settings = tiny_settings()
    cfg = run_config("earnmore", tiny_overrides())
    data = instantiate_or_explain(cfg.data, "data")
    tickers = [str(t) for t in cfg.tickers]
    start, end = pd.Timestamp(cfg.split.valid.start), pd.Timestamp(cfg.split.valid.end)
    checkpoint = load_policy(folder)
    windows, opens, _, _ = split_arrays(MarketView(data, data.trading_days(tickers[0], start, end)[-1]), tickers,
                                        settings.channels, settings.days, start, end,
                                        standardiser=Standardiser.from_dict(checkpoint.config["standardiser"]))
    score = excess_log_return(checkpoint.model, windows, opens, settings.fee, settings.temperature, settings.cash)
    assert score * 1e4 == pytest.approx(best["valid_excess_bp"], abs=1e-3)
