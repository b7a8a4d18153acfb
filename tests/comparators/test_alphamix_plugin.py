"""AlphaMix trained on a tiny universe: checkpoint round trip, fingerprint, the plugin through the runner,
a market other than the training one refused, and a missing checkpoint reported as not run."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
import torch
from omegaconf import OmegaConf

from comparators.alphamix.data import FeatureSpec, feature_frames, split_dates, windows_at
from comparators.alphamix.model import AlphaMixModel
from comparators.alphamix.train import TrainSettings, main, market_config, train
from comparators.checkpoint import fingerprint, load_checkpoint
from comparators.features import Standardiser
from core.errors import ConfigError, MissingFileError
from frameworks.alphamix import AlphaMix
from frameworks.registry import instantiate_or_explain
from frameworks.suite_rows import expand_rows
from harness.decision_checks import CASH
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from harness.tasks.portfolio import PortfolioConfig, PortfolioTask
from market.decision import DecisionContext
from market.view import MarketView

pytestmark = pytest.mark.slow

TICKERS = ["TEC1", "TEC2", "FIN1", "FIN2", "NRG1", "NRG2"]
OVERRIDES = [f"tickers=[{','.join(TICKERS)}]"]
SETTINGS = TrainSettings(learning_rates=[1e-3], batch_sizes=[32], pool_seeds=2, hidden=8, ensemble_size=2,
                         epochs=1, router_epochs=1, router_hidden=4, top_k=2)
SPEC = FeatureSpec(window=5, channels={"news": "sentiment"}, shuffle_seed=7)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Two checkpoints (seeds 0 and 1) on the tiny universe, and the market they were trained on."""
    root = tmp_path_factory.mktemp("alphamix")
    printed = {seed: train(root / f"seed-{seed}", seed, "portfolio_duel", OVERRIDES, SPEC, SETTINGS, threads=1,
                           progress=False) for seed in (0, 1)}
    data = instantiate_or_explain(market_config("portfolio_duel", OVERRIDES).data, "data")
    return root, printed, data


def test_the_checkpoint_round_trips_and_predicts_the_same(trained):
    root, printed, data = trained
    loaded = load_checkpoint(root / "seed-0", AlphaMixModel.from_config)
    assert loaded.fingerprint == printed[0] == fingerprint(root / "seed-0")
    assert len(loaded.model.experts) == 2 and loaded.config["greedy"]
    assert loaded.facts["samples"]["train"] > 0 and loaded.facts["train_cpu_s"] >= 0
    again = load_checkpoint(root / "seed-0", AlphaMixModel.from_config)
    view = MarketView(data, data.frame("TEC1").index[-1])
    spec = FeatureSpec.from_dict(loaded.config["features"]["spec"])
    scaler = Standardiser.from_dict(loaded.config["features"]["standardiser"])
    windows = windows_at(feature_frames(view, TICKERS, spec), split_dates(view, TICKERS, "2019-07-01", "2019-07-31"),
                         spec, scaler)
    x = torch.from_numpy(windows.x.reshape(-1, windows.x.shape[-1]))
    last = torch.from_numpy(windows.last.reshape(-1, windows.last.shape[-1]))
    for mixture in ("router", "greedy", "mean"):
        up, used = loaded.model.predict(x, last, mixture)
        torch.testing.assert_close(up, again.model.predict(x, last, mixture)[0])
        assert ((up > 0) & (up < 1)).all() and ((used >= 1) & (used <= 2)).all()
    assert (root / "seed-0" / "log" / "log.csv").is_file()


def test_a_retrain_changes_the_fingerprint(trained, tmp_path):
    root, printed, _ = trained
    assert printed[0] != printed[1]
    path = tmp_path / "again"
    same = train(path, 0, "portfolio_duel", OVERRIDES, SPEC, SETTINGS, threads=1, progress=False)
    assert same == printed[0]  # a retrain with the same seed and settings is bit for bit the same
    before = AlphaMix({0: str(path)}).fingerprint()
    retrained = train(path, 0, "portfolio_duel", OVERRIDES, SPEC,
                      SETTINGS.model_copy(update={"learning_rates": [3e-3]}), threads=1, progress=False)
    assert retrained != printed[0] and fingerprint(path) == retrained
    assert AlphaMix({0: str(path)}).fingerprint() != before


def test_the_plugin_decides_top_k_weights_through_the_runner(trained, tmp_path):
    root, _, data = trained
    framework = AlphaMix({0: str(root / "seed-0"), 1: str(root / "seed-1")}, top_k=2)
    assert framework.run_facts()["paper_conventions"] == ["alphamix"]
    index = data.frame("TEC1").index
    start, end = index[index >= pd.Timestamp("2019-07-01")][0], index[index >= pd.Timestamp("2019-07-01")][11]
    spec = RunSpec(tickers=TICKERS, seeds=[0, 1], start=start, end=end, batch_size=5,
                   task=PortfolioTask(PortfolioConfig()))
    with Journal(tmp_path / "journal.sqlite") as journal:
        result = EpisodeRunner(data, spec, journal, progress=False).run(
            [FrameworkEntry("alphamix", framework, config_hash="alphamix")])
    assert result.failed == 0 and len(result.decisions) == 24
    for entry in result.decisions:
        weights = entry.decision.weights
        held = {name: w for name, w in weights.items() if name != CASH and w > 0}
        assert len(held) == 2 and all(w == pytest.approx(0.5) for w in held.values())
        assert weights.get(CASH, 0.0) == pytest.approx(0.0, abs=1e-12)
        up = entry.decision.trace.extra["up_probability"]
        assert set(held) == set(sorted(up, key=lambda n: -up[n])[:2])
    by_seed = {seed: [e.decision.weights for e in result.decisions if e.seed == seed] for seed in (0, 1)}
    assert by_seed[0] != by_seed[1]
    one_day = framework.decide([c for c in _contexts(data, start)])[0]
    first = next(e for e in result.decisions if e.seed == 0 and e.date == start)
    assert one_day.weights == first.decision.weights


def _contexts(data, date, pool=None):
    return [DecisionContext(ticker="UNIVERSE", date=date, view=MarketView(data, date), seed=0, universe=tuple(TICKERS),
                            pool=pool)]


def test_a_pool_restricts_the_ranking(trained):
    root, _, data = trained
    framework = AlphaMix({0: str(root / "seed-0")}, top_k=4)
    (context,) = _contexts(data, data.frame("TEC1").index[-20], pool=("TEC1", "FIN2"))
    decision = framework.decide([context])[0]
    assert {n for n, w in decision.weights.items() if w > 0 and n != CASH} == {"TEC1", "FIN2"}


def test_a_checkpoint_refuses_a_market_with_other_training_bars(trained):
    root, _, _ = trained
    other = instantiate_or_explain(market_config("portfolio_duel", [*OVERRIDES, "data.seed=1"]).data, "data")
    framework = AlphaMix({0: str(root / "seed-0")}, top_k=2)
    with pytest.raises(ConfigError, match="trained on other bars than this run's market shows over its training window"):
        framework.decide(_contexts(other, other.frame("TEC1").index[-20]))


def test_a_checkpoint_without_its_training_bars_is_refused_with_one_line(trained, tmp_path):
    root, _, data = trained
    shutil.copytree(root / "seed-0", tmp_path / "old")
    facts = json.loads((tmp_path / "old" / "training.json").read_text())
    del facts["train_bars"]
    (tmp_path / "old" / "training.json").write_text(json.dumps(facts))
    with pytest.raises(ConfigError, match="holds no record of the bars it was trained on"):
        AlphaMix({0: str(tmp_path / "old")}, top_k=2).decide(_contexts(data, data.frame("TEC1").index[-20]))


def test_a_missing_checkpoint_is_a_not_run_row_with_its_command_and_a_bad_one_a_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)          # the suite's relative checkpoint paths: none exists here
    cfg = market_config("portfolio_duel", [])
    rows, facts = expand_rows(cfg.frameworks, cfg.rows, cfg.get("backbones"), [0, 1, 2])
    assert "AlphaMix" not in rows
    assert facts["AlphaMix"]["status"].startswith("not run")
    assert "python -m comparators.alphamix.train --suite portfolio_duel --seed <seed>" in facts["AlphaMix"]["status"]
    assert "--shuffle news_sentiment" in facts["AlphaMix-shuffled"]["status"]
    with pytest.raises(MissingFileError, match="no checkpoint folder"):
        AlphaMix({0: str(tmp_path / "absent")})
    with pytest.raises(ConfigError, match="mixture"):
        AlphaMix({0: str(tmp_path)}, mixture="vote")


def test_the_training_command_refuses_bad_input_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--out", str(tmp_path / "x"), "--channel", "news"])
    assert stop.value.code == 2 and "CHANNEL:FIELD" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["--out", str(tmp_path / "x"), "--set", "epochs=0"])
    assert stop.value.code == 2 and "epochs" in capsys.readouterr().err


def test_the_shuffled_control_is_another_stocks_news(trained):
    _, _, data = trained
    view = MarketView(data, data.frame("TEC1").index[-1])
    real = feature_frames(view, TICKERS, SPEC)
    control = feature_frames(view, TICKERS, FeatureSpec(5, {"news": "sentiment"}, ("news_sentiment",), 7))
    table = pd.DataFrame({n: real[n]["news_sentiment"] for n in TICKERS})
    mixed = pd.DataFrame({n: control[n]["news_sentiment"] for n in TICKERS})
    np.testing.assert_array_equal(np.sort(table.to_numpy(), axis=1), np.sort(mixed.to_numpy(), axis=1))
    own = np.mean([np.corrcoef(table[n], mixed[n])[0, 1] for n in TICKERS])
    assert abs(own) < 0.2
    pd.testing.assert_frame_equal(real["TEC1"].drop(columns="news_sentiment"),
                                  control["TEC1"].drop(columns="news_sentiment"))
    assert json.loads(json.dumps(SPEC.to_dict())) == SPEC.to_dict() and OmegaConf.create(SPEC.to_dict())
