"""Checkpoints: what the trainer resumes from, and the policy folder the benchmark loads.

A run directory holds the Trainer's `checkpoint-<step>/` folders (weights or LoRA adapter,
optimizer, scheduler, RNG states, trainer state: what `resume_from_checkpoint` needs). Inside
each, `policy/` is a plain transformers folder (config, weights with any LoRA adapter merged
in, tokenizer with its chat template) that `alphaquanter checkpoint=<run>/checkpoint-<step>/policy`
loads; its fingerprint is a digest of its weight files, so it changes with the weights. A
policy folder is written to a staging folder and renamed, so a killed run never leaves half of
one.

The trainer deletes nothing it did not write. Before the Trainer saves a checkpoint, `saving.json`
in the run directory names the folder about to be written; once its policy folder is in place,
`checkpoint-<step>/tradeduel-checkpoint.json` (the marker, written last) says the checkpoint is
complete, and `saving.json` goes. On resuming, a `checkpoint-*` folder without the marker is
removed only when `saving.json` names it (this trainer was killed while writing it); any other
such folder stops the run with one line, since the Trainer would resume from it or rotate it
away (`save_total_limit`).
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

from transformers import PreTrainedModel, TrainerCallback

from core.errors import ConfigError
from llm_backends.paths import build_folder

POLICY_DIR = "policy"
CHECKPOINT_PREFIX = "checkpoint-"
MARKER = "tradeduel-checkpoint.json"
"""Written last into a checkpoint folder: the checkpoint is complete and this trainer wrote it."""
SAVING = "saving.json"
"""In the run directory while a checkpoint is being written: names its folder."""
CHECKPOINT_NAME = re.compile(rf"^{CHECKPOINT_PREFIX}(\d+)$")


def plain_model(model: Any) -> PreTrainedModel:
    """`model` itself, or for a peft model a copy with its adapters merged into the weights."""
    if hasattr(model, "merge_and_unload"):
        return copy.deepcopy(model).merge_and_unload()
    return model


def save_policy(model: Any, tokenizer: Any, folder: Path) -> Path:
    """Write `folder` as a loadable transformers folder of `model` (adapters merged) and `tokenizer`,
    replacing any folder there."""
    folder = Path(folder)
    shutil.rmtree(folder, ignore_errors=True)

    def build(staging: Path) -> None:
        plain_model(model).save_pretrained(staging)
        tokenizer.save_pretrained(staging)

    return build_folder(folder, build)


def checkpoint_dir(output_dir: Path, step: int) -> Path:
    """The Trainer's folder of the checkpoint at optimizer step `step`."""
    return Path(output_dir) / f"{CHECKPOINT_PREFIX}{step}"


def checkpoint_folders(output_dir: Path) -> list[Path]:
    """The `checkpoint-<step>` folders of `output_dir`, by step."""
    folders = [p for p in Path(output_dir).iterdir() if p.is_dir() and CHECKPOINT_NAME.match(p.name)]
    return sorted(folders, key=checkpoint_step)


def last_checkpoint(output_dir: Path) -> Path | None:
    """The newest complete checkpoint of `output_dir` (one with the marker), or None; the checkpoint this
    trainer was writing when it was killed is removed, a folder it did not write is one `ConfigError` line."""
    output_dir = Path(output_dir)
    if not output_dir.is_dir():
        return None
    saving = output_dir / SAVING
    in_flight = json.loads(saving.read_text())["checkpoint"] if saving.is_file() else None
    complete = []
    for folder in checkpoint_folders(output_dir):
        if (folder / MARKER).is_file():
            complete.append(folder)
        elif folder.name == in_flight:
            print(f"removing {folder}: this trainer was stopped while writing it")
            shutil.rmtree(folder)
        else:
            raise ConfigError(f"{folder}: a checkpoint folder this trainer did not write (no {MARKER}); move it out of "
                              f"{output_dir}, which the Trainer would resume from or rotate away")
    saving.unlink(missing_ok=True)
    return complete[-1] if complete else None


MODEL_SHAPE = ("model_type", "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
               "num_attention_heads", "num_key_value_heads")
"""The model config fields a checkpoint's weights must match."""


def check_checkpoint_model(checkpoint: Path, model: Any, settings: Any) -> None:
    """One `ConfigError` line when `checkpoint` was trained on another model than `model` (its shape,
    or LoRA adapters against full fine-tuning per `settings.lora`): resuming would fail on its weights."""
    saved = json.loads((Path(checkpoint) / POLICY_DIR / "config.json").read_text())
    configured = model.config.to_dict()
    differ = [f"{key} {saved.get(key)} there, {configured.get(key)} here" for key in MODEL_SHAPE
              if saved.get(key) != configured.get(key)]
    adapters = (Path(checkpoint) / "adapter_config.json").is_file()
    if adapters != (settings.lora is not None):
        differ.append(f"{'LoRA adapters' if adapters else 'full fine-tuning'} there, "
                      f"{'LoRA adapters' if settings.lora is not None else 'full fine-tuning'} here")
    if differ:
        raise ConfigError(f"{checkpoint}: trained on another model ({'; '.join(differ)}); resume it with the model it "
                          "was trained on, or choose another output_dir")


def checkpoint_step(checkpoint: Path | None) -> int:
    """The optimizer step of a checkpoint folder (0 for None)."""
    return int(Path(checkpoint).name.removeprefix(CHECKPOINT_PREFIX)) if checkpoint else 0


class PolicyExport(TrainerCallback):
    """Marks each checkpoint the Trainer saves as this trainer's: names it in `saving.json` before the
    save, writes `checkpoint-<step>/policy/` after it, then the marker, then removes `saving.json`.
    From the main process only, as the Trainer saves (data-parallel processes hold the same weights)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def on_step_end(self, args, state, control, **kwargs):
        # should_save is set by the Trainer's flow callback, which runs first
        if control.should_save and state.is_world_process_zero:
            folder = checkpoint_dir(Path(args.output_dir), state.global_step)
            (Path(args.output_dir) / SAVING).write_text(json.dumps({"checkpoint": folder.name}) + "\n")

    def on_save(self, args, state, control, model=None, **kwargs):
        if not state.is_world_process_zero:
            return
        folder = checkpoint_dir(Path(args.output_dir), state.global_step)
        save_policy(model, self.tokenizer, folder / POLICY_DIR)
        (folder / MARKER).write_text(json.dumps({"step": state.global_step}) + "\n")
        (Path(args.output_dir) / SAVING).unlink(missing_ok=True)
