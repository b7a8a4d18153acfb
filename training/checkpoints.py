"""Checkpoints: what the trainer resumes from, and the policy folder the benchmark loads.

A run directory holds the Trainer's `checkpoint-<step>/` folders (weights or LoRA adapter,
optimizer, scheduler, RNG states, trainer state: what `resume_from_checkpoint` needs). Inside
each, `policy/` is a plain transformers folder (config, weights with any LoRA adapter merged
in, tokenizer with its chat template) that `alphaquanter checkpoint=<run>/checkpoint-<step>/policy`
loads; its fingerprint is a digest of its weight files, so it changes with the weights. A
policy folder is written to a staging folder and renamed, so a killed run never leaves half of
one.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

from transformers import PreTrainedModel, TrainerCallback
from transformers.trainer_utils import get_last_checkpoint

from llm_backends.paths import build_folder

POLICY_DIR = "policy"
CHECKPOINT_PREFIX = "checkpoint-"


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


def last_checkpoint(output_dir: Path) -> Path | None:
    """The newest complete checkpoint of `output_dir` (one with its policy folder), or None."""
    if not Path(output_dir).is_dir():
        return None
    found = get_last_checkpoint(str(output_dir))
    while found is not None and not (Path(found) / POLICY_DIR / "config.json").is_file():
        shutil.rmtree(found)  # killed between the Trainer's save and the policy folder's
        found = get_last_checkpoint(str(output_dir))
    return Path(found) if found else None


def checkpoint_step(checkpoint: Path | None) -> int:
    """The optimizer step of a checkpoint folder (0 for None)."""
    return int(Path(checkpoint).name.removeprefix(CHECKPOINT_PREFIX)) if checkpoint else 0


class PolicyExport(TrainerCallback):
    """Writes `checkpoint-<step>/policy/` after every checkpoint the Trainer saves."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def on_save(self, args, state, control, model=None, **kwargs):
        save_policy(model, self.tokenizer, checkpoint_dir(Path(args.output_dir), state.global_step) / POLICY_DIR)
