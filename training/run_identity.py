"""What a training run is, so that a rerun into its `output_dir` resumes it only when it is the same run.

A run's identity is everything its weights depend on: the recipe (`train`, model included, less
`torch_threads` and `monitoring`, which change speed and logging, not weights), the seed, the
tickers, the data and split configs, and a digest of the market data itself up to the end of the
valid split (`harness.decision_inputs.data_fingerprint`, one digest per part: `bars:ALFA`, ...).
It is written to `<output_dir>/run_config.json` (flat dotted keys and their SHA-256) when a run
starts. A later run into the same folder goes on from its checkpoints only when its identity
hashes the same; otherwise it stops with one line naming the keys that differ, unless
`resume=force` (then it continues anyway and the new identity is written). Only a folder that
holds a run's files (checkpoints, the warm start, steps.csv) is checked: a run that stopped on a
configuration error before training is no run. Such a folder without `run_config.json` (an
earlier TradeDuel) is refused the same way.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from core.config_keys import flatten
from core.errors import ConfigError
from training.checkpoints import checkpoint_folders

RUN_CONFIG = "run_config.json"
RESUME_MODES = ("auto", "force")
LEFT_OUT = ("train.torch_threads", "train.monitoring")
"""Keys (and key prefixes) that do not change the weights."""
NAMED = 6
"""Differing keys named in the error line (the rest are counted)."""
RUN_FILES = ("warm_start", "steps.csv")
"""Files and folders besides checkpoints that show a run was made in a folder."""


def run_identity(parts: dict[str, Any]) -> dict[str, Any]:
    """The flat identity of a run from its parts ({"train": ..., "seed": ..., ...}), `LEFT_OUT` removed."""
    flat = flatten(json.loads(json.dumps(parts, default=str)))
    return {key: value for key, value in sorted(flat.items())
            if not any(key == out or key.startswith(out + ".") for out in LEFT_OUT)}


def identity_hash(identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def refuse_another_run(output_dir: Path, identity: dict[str, Any], digest: str) -> None:
    """One `ConfigError` line unless the run saved in `output_dir` has the identity hashing to `digest`."""
    saved_path = output_dir / RUN_CONFIG
    if not saved_path.is_file():
        raise ConfigError(f"{output_dir}: holds a run without {RUN_CONFIG} (an earlier TradeDuel), which cannot be told "
                          "from another run: choose another output_dir, or add resume=force to continue it")
    saved = json.loads(saved_path.read_text())
    if saved.get("hash") != digest:
        before = saved.get("config", {})
        differ = [key for key in sorted({*before, *identity}) if before.get(key) != identity.get(key)]
        more = f" and {len(differ) - NAMED} more" if len(differ) > NAMED else ""
        raise ConfigError(f"{output_dir}: holds a run with other settings (differs in {', '.join(differ[:NAMED])}{more}); "
                          "it resumes only the same run: choose another output_dir, or add resume=force to continue it")


def claim_output_dir(output_dir: Path, identity: dict[str, Any], resume: str) -> str:
    """Check that `output_dir` holds no run or the same run (see the module docstring) and return the run's
    identity hash; a mismatch is one `ConfigError` line. A fresh folder records the identity at once;
    a run forced over another records it with `record_identity` once it is sure to go on."""
    if resume not in RESUME_MODES:
        raise ConfigError(f"resume: {resume!r}; it must be one of {', '.join(RESUME_MODES)}")
    output_dir = Path(output_dir)
    digest = identity_hash(identity)
    made = output_dir.is_dir() and bool(checkpoint_folders(output_dir) or
                                        any((output_dir / name).exists() for name in RUN_FILES))
    if not made:
        record_identity(output_dir, identity)
    elif resume != "force":
        refuse_another_run(output_dir, identity, digest)
    return digest


def record_identity(output_dir: Path, identity: dict[str, Any]) -> None:
    """Write `identity` and its hash to `output_dir/run_config.json`."""
    Path(output_dir).mkdir(parents=True, exist_ok=True)
    (Path(output_dir) / RUN_CONFIG).write_text(json.dumps({"hash": identity_hash(identity), "config": identity}, indent=1) + "\n")
