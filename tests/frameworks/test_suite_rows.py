"""Rows built from config: one per (row kind, backbone), and trained rows mapped seed -> checkpoint."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from configs import compose_option
from frameworks.suite_rows import NOT_RUN, expand_rows
from llm_backends.build import engine_config

TEMPLATES = {
    "single_agent": {"_target_": "frameworks.single_agent.SingleAgent", "llm": {"_target_": "x"},
                     "temperature": 0.0, "samples": 1, "protocol": "compact"},
    "pipeline": {"_target_": "some.Pipeline", "quick": {"llm": "smollm2"}, "deep": {"llm": "${..quick.llm}"}},
    "alphaquanter": {"_target_": "frameworks.checkpoint_seeds.CheckpointPerSeed", "checkpoints": {}, "protocol": "compact"},
}


def backbones(*names: str) -> OmegaConf:
    """The composed `backbones` group of a run that selects `names` (backbones=[...])."""
    return OmegaConf.create({key: value for name in names for key, value in compose_option("backbones", name).items()})


def rows_config(trained: dict | None = None) -> OmegaConf:
    return OmegaConf.create({
        "templates": TEMPLATES,
        "per_backbone": {
            "SA": {"template": "single_agent", "backbone_fields": {"llm": "llm"}, "overrides": {"protocol": "paper"}},
            "SC": {"template": "single_agent", "backbone_fields": {"llm": "llm", "samples": "sc_samples"},
                   "overrides": {"temperature": 0.7}},
            "MA": {"template": "pipeline", "backbone_fields": {"quick.llm": "chat_llm"}},
        },
        "trained": trained or {},
    })


@pytest.mark.slow
def test_each_backbone_gets_one_row_per_prefix_with_its_fields_set():
    selected = backbones("tiny", "qwen2.5-7b")
    frameworks, facts = expand_rows(OmegaConf.create({"macd": {"_target_": "x.Macd"}}), rows_config(), selected, [0])
    assert list(frameworks) == ["macd", "SA-tiny", "SC-tiny", "MA-tiny", "SA-qwen2.5-7b", "SC-qwen2.5-7b", "MA-qwen2.5-7b"]
    assert frameworks["SA-tiny"].llm == engine_config("tiny") and frameworks["SA-tiny"].protocol == "paper"
    qwen = OmegaConf.to_container(frameworks["SA-qwen2.5-7b"].llm)   # the transformers option with the backbone's fields
    assert qwen == engine_config("transformers", ["path=models/Qwen2.5-7B-Instruct", "knowledge_cutoff='2024-09'"])
    assert frameworks["SC-qwen2.5-7b"].samples == selected["qwen2.5-7b"].sc_samples
    assert frameworks["SC-tiny"].temperature == 0.7 and frameworks["SA-tiny"].temperature == 0.0
    assert frameworks["MA-qwen2.5-7b"].quick.llm == engine_config("qwen2.5-7b-server")
    assert frameworks["MA-qwen2.5-7b"].deep.llm == engine_config("qwen2.5-7b-server")  # the deep tier follows the quick one
    assert facts["SC-tiny"] == {"kind": "SC", "template": "single_agent", "backbone": "tiny", "status": "run",
                                "k_from": f"explicit budget: k = {frameworks['SC-tiny'].samples} (set in the row's config)"}
    assert facts["SA-tiny"] == {"kind": "SA", "template": "single_agent", "backbone": "tiny", "status": "run"}


@pytest.mark.slow
def test_a_compute_matched_row_names_the_rows_it_is_matched_to():
    rows = rows_config()
    rows.per_backbone.SC = {"template": "single_agent", "compute_match": {"row": "MA", "unit": "SA"},
                            "overrides": {"temperature": 0.7}}
    frameworks, facts = expand_rows(OmegaConf.create({}), rows, backbones("tiny"), [0])
    assert facts["SC-tiny"]["compute_match"] == {"row": "MA-tiny", "unit": "SA-tiny"}
    assert "k_from" not in facts["SC-tiny"] and frameworks["SC-tiny"].samples == 1, "k is set when MA and SA have run"


def test_a_trained_row_without_its_checkpoints_is_not_run_and_names_the_training_commands(tmp_path):
    present = tmp_path / "seed-0" / "policy"
    present.mkdir(parents=True)
    trained = {
        "AQ-ready": {"template": "alphaquanter", "checkpoints": {0: str(present), 1: str(present)},
                     "train": "train seed={seed}"},
        "AQ-missing": {"template": "alphaquanter", "checkpoints": {0: str(present), 1: str(tmp_path / "nope")},
                       "train": "python train_single_agent.py seed={seed}"},
    }
    frameworks, facts = expand_rows(OmegaConf.create({}), rows_config(trained), None, [0, 1])
    assert list(frameworks) == ["AQ-ready"]
    assert OmegaConf.to_container(frameworks["AQ-ready"].checkpoints) == {0: str(present), 1: str(present)}
    assert facts["AQ-ready"]["status"] == "run"
    status = facts["AQ-missing"]["status"]
    assert status == f"{NOT_RUN}: no checkpoint for seed 1 ({tmp_path / 'nope'}); train: python train_single_agent.py seed=1"
    both = {"template": "alphaquanter", "checkpoints": {0: "a", 1: "b"}, "train": "train seed={seed} out=s-{seed}"}
    _, facts = expand_rows(OmegaConf.create({}), rows_config({"AQ": both}), None, [0, 1])
    assert facts["AQ"]["status"] == f"{NOT_RUN}: no checkpoint for seed 0, 1 (a, ...); train: train seed=<seed> out=s-<seed>"
    only_first, facts = expand_rows(OmegaConf.create({}), rows_config(trained), None, [0])
    assert list(only_first) == ["AQ-ready", "AQ-missing"]  # seed 1 is not run, so its checkpoint is not needed
    _, facts = expand_rows(OmegaConf.create({}), rows_config(trained), None, [0, 2])
    assert facts["AQ-ready"]["status"] == f"{NOT_RUN}: no checkpoint for seed 2 (not configured); train: train seed=2"


@pytest.mark.parametrize(("selected", "trained", "message"), [
    (("tiny",), None, "rows.per_backbone.SA.backbone_fields.llm_overrides"),
    ((), {"AQ": {"template": "nothing", "checkpoints": {0: "."}, "train": "t"}}, "rows.trained.AQ.template"),
    ((), {"AQ": {"template": "alphaquanter", "checkpoints": {0: "missing"}}}, "rows.trained.AQ.train"),
    ((), {"AQ": {"template": "alphaquanter", "checkpoints": {}, "train": "t"}}, "rows.trained.AQ.checkpoints"),
])
def test_bad_row_config_is_one_line_naming_the_field(selected, trained, message):
    rows = rows_config(trained)
    rows.per_backbone.SA.backbone_fields.llm_overrides = "no_such_field"
    with pytest.raises(Exception, match=message.replace(".", r"\.")):
        expand_rows(OmegaConf.create({}), rows, backbones(*selected), [0])


def test_an_optional_row_whose_template_is_not_installed_is_not_run():
    config = rows_config()
    config.per_backbone.MA.optional = True
    del config.templates["pipeline"]
    frameworks, facts = expand_rows(OmegaConf.create({}), config, backbones("tiny"), [0])
    assert list(frameworks) == ["SA-tiny", "SC-tiny"]
    assert facts["MA-tiny"]["status"] == f"{NOT_RUN}: no framework config pipeline (configs/framework/pipeline.yaml is not installed)"
    config.per_backbone.MA.optional = False
    with pytest.raises(Exception, match=r"rows\.per_backbone\.MA\.template"):
        expand_rows(OmegaConf.create({}), config, backbones("tiny"), [0])
