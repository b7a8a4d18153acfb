"""Findings 2 and 4: the trainer deleted `checkpoint-*` folders it had not written; it resumed a run with
another seed and learning rate as if it were the same; a different model width was a 47-line traceback;
`learning_rate=inf` trained NaN weights; a top-level typo was ignored. Now each is one line, or refused."""

from __future__ import annotations

import json
import shutil

import pytest

import train_single_agent
from core.errors import ConfigError
from training.checkpoints import MARKER, SAVING, last_checkpoint
from training.run_identity import RUN_CONFIG
from training_runs import fast_config

pytestmark = pytest.mark.timeout(600)


def mark(folder, step: int) -> None:
    folder.mkdir(parents=True)
    (folder / MARKER).write_text(json.dumps({"step": step}))


def test_only_the_checkpoint_this_trainer_was_writing_is_removed(tmp_path, capsys):
    mark(tmp_path / "checkpoint-1", 1)
    (tmp_path / "checkpoint-2").mkdir()
    (tmp_path / "checkpoint-2" / "model.safetensors").write_bytes(b"half")
    (tmp_path / SAVING).write_text(json.dumps({"checkpoint": "checkpoint-2"}))
    assert last_checkpoint(tmp_path) == tmp_path / "checkpoint-1"
    assert not (tmp_path / "checkpoint-2").exists() and not (tmp_path / SAVING).exists()
    assert capsys.readouterr().out == f"removing {tmp_path / 'checkpoint-2'}: this trainer was stopped while writing it\n"


def test_a_checkpoint_folder_placed_by_hand_is_kept_and_named(tmp_path):
    mark(tmp_path / "checkpoint-1", 1)
    (tmp_path / "checkpoint-7").mkdir()
    (tmp_path / "checkpoint-7" / "notes.txt").write_text("mine")
    (tmp_path / "checkpoint-best").mkdir()  # not a step: the Trainer ignores it, and so do we
    with pytest.raises(ConfigError) as refused:
        last_checkpoint(tmp_path)
    assert str(refused.value) == (f"{tmp_path / 'checkpoint-7'}: a checkpoint folder this trainer did not write "
                                  f"(no {MARKER}); move it out of {tmp_path}, which the Trainer would resume from or "
                                  "rotate away")
    assert (tmp_path / "checkpoint-7" / "notes.txt").read_text() == "mine"


@pytest.mark.slow
def test_hand_placed_folders_in_an_output_dir_survive_a_training_command(cache_root, tmp_path):
    for name in ("checkpoint-3", "checkpoint-9"):
        (tmp_path / name).mkdir()
    with pytest.raises(ConfigError, match=r"holds a run without run_config.json \(an earlier TradeDuel\)"):
        train_single_agent.train(fast_config(tmp_path, steps=1))
    with pytest.raises(ConfigError, match=r"checkpoint-3: a checkpoint folder this trainer did not write"):
        train_single_agent.train(fast_config(tmp_path, 1, "resume=force"))
    assert {p.name for p in tmp_path.iterdir() if p.name.startswith("checkpoint")} == {"checkpoint-3", "checkpoint-9"}


@pytest.mark.parametrize(("override", "message"), [
    ("train.optimisation.learning_rate=inf", "train: TrainConfig: optimisation.learning_rate: Input should be a finite number"),
    ("train.optimisation.beta=nan", "train: TrainConfig: optimisation.beta: Input should be a finite number"),
    ("+seeed=1", "top level: unknown key 'seeed' (did you mean 'seed'?)"),
    ("resume=always", "resume: 'always'; it must be one of auto, force"),
])
@pytest.mark.slow
def test_what_would_ruin_a_run_is_refused_before_it_starts(cache_root, tmp_path, override, message):
    with pytest.raises(ConfigError) as refused:
        train_single_agent.train(fast_config(tmp_path, 1, override))
    assert str(refused.value) == message
    assert not any(tmp_path.iterdir()) or not list(tmp_path.glob("checkpoint-*"))


@pytest.mark.slow
def test_a_different_run_into_an_existing_output_dir_is_one_line_and_force_goes_on(cache_root, tmp_path):
    train_single_agent.train(fast_config(tmp_path, 2))
    assert (tmp_path / "checkpoint-1" / MARKER).is_file() and not (tmp_path / SAVING).exists()
    shutil.rmtree(tmp_path / "checkpoint-2")  # as if it had been stopped after its first step
    saved = json.loads((tmp_path / RUN_CONFIG).read_text())
    assert saved["config"]["seed"] == 0 and saved["hash"] == json.loads((tmp_path / "run.json").read_text())["config_hash"]

    with pytest.raises(ConfigError) as refused:
        train_single_agent.train(fast_config(tmp_path, 2, "seed=1", "train.optimisation.learning_rate=2e-3"))
    assert str(refused.value) == (f"{tmp_path}: holds a run with other settings (differs in seed, "
                                  "train.optimisation.learning_rate); it resumes only the same run: choose another "
                                  "output_dir, or add resume=force to continue it")
    assert not (tmp_path / "checkpoint-2").exists()

    wider = fast_config(tmp_path, 2, "train.model.tiny.hidden_size=96", "resume=force")
    with pytest.raises(ConfigError) as mismatch:
        train_single_agent.train(wider)
    assert str(mismatch.value) == (f"{tmp_path / 'checkpoint-1'}: trained on another model (hidden_size 64 there, 96 "
                                   "here); resume it with the model it was trained on, or choose another output_dir")

    train_single_agent.train(fast_config(tmp_path, 2))  # the same run goes on from its checkpoint
    facts = json.loads((tmp_path / "run.json").read_text())
    assert facts["resumed_from"].endswith("checkpoint-1") and facts["steps"] == 2
