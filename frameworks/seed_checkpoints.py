"""One trained checkpoint per run seed: the bookkeeping every trained row's plugin shares.

The papers' seeds are training seeds, so a trained row's plugin takes `checkpoints: {seed: path}`
(frameworks/suite_rows.py builds the mapping from a suite's `rows.trained`) and decides seed k's
contexts with checkpoint k. `seed_paths` reads that mapping (one line when it is empty),
`seeds_fingerprint` is the plugin's fingerprint over its seeds' fingerprints, SHA-256 of their
canonical JSON, and `require_seed` refuses a context whose seed has no checkpoint in one line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from typing import Any

from core.errors import ConfigError


def seed_paths(checkpoints: Mapping[Any, Any] | None, where: str) -> dict[int, str]:
    """seed -> checkpoint path of `checkpoints`; a ConfigError naming `where` (e.g. "alphamix.checkpoints") when empty."""
    if not checkpoints:
        raise ConfigError(f"{where}: name one checkpoint per seed, e.g. {{0: PATH}}")
    return {int(seed): str(path) for seed, path in checkpoints.items()}


def seeds_fingerprint(parts: Mapping[Any, Any]) -> str:
    """SHA-256 of the canonical JSON (sorted keys) of `parts`, e.g. {seed: that seed's checkpoint fingerprint}."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def require_seed(seed: int, available: Collection[int], where: str) -> None:
    """A ConfigError naming `where` and the seeds that have a checkpoint when `seed` has none."""
    if seed not in available:
        raise ConfigError(f"{where}: no checkpoint for seed {seed} (seeds with one: {', '.join(map(str, sorted(available)))})")
