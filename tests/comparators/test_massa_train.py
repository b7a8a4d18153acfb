"""The training command and the suite's trained rows: a tiny training run, its log and checkpoint,
one-line refusals, and rows that are "not run" with their command until their checkpoints exist."""

from __future__ import annotations

import csv

import pytest
from hydra import compose, initialize_config_dir
from massa_fixtures import DATES, MARKET, UNIVERSE, write_checkpoint

from comparators.massa.agent import load_agent
from comparators.massa.config import MassaConfig
from comparators.massa.train import main, train
from configs import CONFIG_DIR
from frameworks.suite_rows import expand_rows
from harness.tasks.portfolio import PortfolioConfig
from market.splits import Splits

ROWS = {"MASSA": "massa", "MASSA-no-signal": "no_signal", "MASSA-constant-signal": "constant_signal",
        "MASSA-random-signal": "random_signal", "MADDPG": "maddpg", "central-policy": "central"}


@pytest.mark.slow
def test_a_tiny_training_run_writes_a_loadable_checkpoint_and_its_log(tmp_path):
    splits = Splits(train={"start": DATES[30], "end": DATES[100]}, valid={"start": DATES[105], "end": DATES[125]},
                    test={"start": DATES[130], "end": DATES[199]})
    config = MassaConfig(episodes=2, episode_bars=20, warmup_steps=5, batch_size=8, eval_every=1, hidden=8,
                         critic_hidden=8, signal_dim=2)
    facts = train(config, MARKET, splits, PortfolioConfig(), UNIVERSE, seed=3, out=tmp_path, progress=False)
    checkpoint, _ = load_agent(tmp_path / "policy")
    assert checkpoint.fingerprint == facts["fingerprint"] and checkpoint.config["seen_until"] == str(DATES[125].date())
    assert facts["updates"] > 0 and facts["env_steps"] == 2 * 19
    with (tmp_path / "log" / "log.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["step"] for r in rows if r["episode_reward"]] == ["1", "2"]
    assert any(r["valid_reward"] for r in rows) and any(r["critic_loss"] for r in rows)
    assert list((tmp_path / "log" / "tensorboard").iterdir())


@pytest.mark.parametrize(("args", "says"), [
    (["--config", "nonesuch"], "no configs/massa/nonesuch.yaml"),
    (["--set", "episodes=0"], "episodes"),
    (["--set", "episodes"], "write key=value"),
    (["--seed", "0", "1"], "need {seed} in the folder name"),
])
def test_the_training_command_refuses_bad_input_in_one_line(tmp_path, capsys, args, says):
    with pytest.raises(SystemExit) as stop:
        main(["--out", str(tmp_path / "out"), *args])
    assert stop.value.code == 2 and says in capsys.readouterr().err


def suite():
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return compose("config", overrides=["+suite=massa"])


def test_each_trained_row_is_not_run_with_its_command_until_its_checkpoints_exist(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = suite()
    rows, facts = expand_rows(cfg.frameworks, cfg.rows, cfg.get("backbones"), [0, 1, 2])
    for row, config in ROWS.items():
        assert row not in rows and facts[row]["status"].startswith("not run")
        assert (f"python -m comparators.massa.train --config {config} --seed <seed> "
                f"--out outputs/train/massa/{config}/seed-<seed>") in facts[row]["status"]
    for seed in (0, 1, 2):
        write_checkpoint(tmp_path / "outputs" / "train" / "massa" / "massa" / f"seed-{seed}" / "policy", seed=seed)
    rows, facts = expand_rows(cfg.frameworks, cfg.rows, cfg.get("backbones"), [0, 1, 2])
    assert facts["MASSA"]["status"] == "run" and rows.MASSA._target_ == "frameworks.massa.MassaFramework"
    assert dict(rows.MASSA.checkpoints) == {s: f"outputs/train/massa/massa/seed-{s}/policy" for s in (0, 1, 2)}
    assert "MASSA-no-signal" not in rows
