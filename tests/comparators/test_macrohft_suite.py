"""The futures_duel suite: rules, the labelled oracle row, MacroHFT "not run" with its train command."""

from __future__ import annotations

from cli_helpers import ROOT
from hydra import compose, initialize_config_dir
from omegaconf import open_dict

from frameworks.suite_rows import NOT_RUN, expand_rows


def test_the_duel_has_the_rules_the_oracle_and_a_trained_row_per_seed(tmp_path):
    missing = {seed: str(tmp_path / f"seed-{seed}" / "checkpoint") for seed in (0, 1, 2)}
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["+suite=futures_duel"])
    with open_dict(cfg):
        cfg.rows.trained.MacroHFT.checkpoints = missing
    frameworks, facts = expand_rows(cfg.frameworks, cfg.rows, cfg.get("backbones"), list(cfg.seeds))
    assert {"flat", "long_1x", "long_cap", "trend", "ORACLE-dp_teacher"} <= set(frameworks)
    assert "MacroHFT" not in frameworks
    status = facts["MacroHFT"]["status"]
    assert status.startswith(NOT_RUN) and "python -m comparators.macrohft.train --seed <seed>" in status
    assert frameworks["ORACLE-dp_teacher"]["_target_"] == "frameworks.dp_oracle.DPTeacherOracle"
    assert cfg.task.name == "futures" and list(cfg.seeds) == [0, 1, 2]
