"""A trained comparator on disk: one torch model, its config and its training facts in one folder.

    FOLDER/weights.pt      the model's state_dict (`torch.save`)
    FOLDER/config.json     what rebuilds the model and its inputs (architecture, feature scaling, ...)
    FOLDER/training.json   facts of the training run (seed, data window, wall and CPU seconds, losses)
    FOLDER/<name>          anything else the trainer moves in (`include`, e.g. its log/)

`save_checkpoint` writes into a private staging folder next to FOLDER and renames it (an existing
FOLDER is replaced only once the new one is complete), so a killed training never leaves a
half-written checkpoint. `load_checkpoint` rebuilds the model with `build(config)` and loads the
weights strictly. `fingerprint` is the SHA-256 over the canonical JSON of the config and, per
state-dict entry in name order, its name, dtype, shape and raw bytes: it changes with any retrain
that changes a weight, and not with the file's container bytes or path. A missing or damaged
checkpoint is one line (`MissingFileError`, `DataError`) naming the folder.

The interface (`save_checkpoint`, `load_checkpoint`, `fingerprint`, `Checkpoint`) is shared by
every comparator: several models go in one `torch.nn.ModuleDict`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from core.errors import DataError, MissingFileError
from llm_backends.paths import build_folder

WEIGHTS_FILE = "weights.pt"
CONFIG_FILE = "config.json"
FACTS_FILE = "training.json"


@dataclass
class Checkpoint:
    """A loaded checkpoint: the model (eval mode), its config and training facts, and the fingerprint."""

    model: torch.nn.Module
    config: dict
    facts: dict
    fingerprint: str


def _canonical(values: Mapping) -> bytes:
    return json.dumps(values, sort_keys=True, separators=(",", ":")).encode()


def weights_fingerprint(state: Mapping[str, torch.Tensor], config: Mapping) -> str:
    """SHA-256 over the canonical config JSON and every tensor's name, dtype, shape and bytes (module docstring)."""
    digest = hashlib.sha256(_canonical(config))
    for name in sorted(state):
        tensor = state[name].detach().cpu().contiguous()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    return digest.hexdigest()


def save_checkpoint(folder: str | Path, model: torch.nn.Module, config: Mapping, facts: Mapping,
                    include: Mapping[str, Path] | None = None) -> str:
    """Write `model`'s weights, `config` and `facts` (JSON-able) into `folder` atomically; return the fingerprint.

    `include` maps names to files or folders moved into the checkpoint under those names (e.g. a
    training log written next to it while training); they are not part of the fingerprint."""
    folder = Path(folder)
    state = {name: tensor.detach().cpu() for name, tensor in model.state_dict().items()}
    config, facts = json.loads(_canonical(config)), json.loads(json.dumps(dict(facts), default=str))

    def write(staging: Path) -> None:
        staging.mkdir(parents=True)
        torch.save(state, staging / WEIGHTS_FILE)
        (staging / CONFIG_FILE).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
        (staging / FACTS_FILE).write_text(json.dumps(facts, indent=2, sort_keys=True) + "\n")
        for name, path in (include or {}).items():
            shutil.move(str(path), str(staging / name))

    if folder.exists():
        old = folder.with_name(f"{folder.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        staged = folder.with_name(f"{folder.name}.new")
        shutil.rmtree(staged, ignore_errors=True)
        build_folder(staged, write)
        folder.rename(old)
        staged.rename(folder)
        shutil.rmtree(old, ignore_errors=True)
    else:
        build_folder(folder, write)
    return weights_fingerprint(state, config)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise DataError(f"{path}: not valid JSON ({error.msg} at line {error.lineno})") from error


def _check_folder(folder: Path) -> None:
    if not folder.is_dir():
        raise MissingFileError(f"{folder}: no checkpoint folder (train it first)")
    for name in (WEIGHTS_FILE, CONFIG_FILE, FACTS_FILE):
        if not (folder / name).is_file():
            raise MissingFileError(f"{folder}: checkpoint incomplete, {name} is missing")


def _state(folder: Path) -> dict[str, torch.Tensor]:
    try:
        return torch.load(folder / WEIGHTS_FILE, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises several types for a damaged file
        raise DataError(f"{folder / WEIGHTS_FILE}: not a readable state dict ({type(error).__name__})") from error


def fingerprint(folder: str | Path) -> str:
    """The fingerprint of the checkpoint in `folder` (module docstring), without building the model."""
    folder = Path(folder)
    _check_folder(folder)
    return weights_fingerprint(_state(folder), _read_json(folder / CONFIG_FILE))


def load_checkpoint(folder: str | Path, build: Callable[[dict], torch.nn.Module]) -> Checkpoint:
    """The checkpoint in `folder`: `build(config)` with its weights loaded strictly, in eval mode."""
    folder = Path(folder)
    _check_folder(folder)
    config, facts, state = _read_json(folder / CONFIG_FILE), _read_json(folder / FACTS_FILE), _state(folder)
    model = build(config)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as error:
        first = str(error).splitlines()[0]
        raise DataError(f"{folder / WEIGHTS_FILE}: does not fit the model its config builds ({first})") from error
    model.eval()
    return Checkpoint(model=model, config=config, facts=facts, fingerprint=weights_fingerprint(state, config))
