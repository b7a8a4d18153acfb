"""A trained MacroHFT checkpoint as a causal trader: the target leverage of every bar of a history.

The policy is greedy on the mixed Q-values with its own previous action fed back
(`policy.greedy_path`), from flat at a fixed anchor: the first bar of the history it is given (the
data's first bar), or the first bar at or after `start` (the test window's start in a suite, so
that only the bars traded are run through the networks). The anchor is the same for every
decision of a run. Decisions on bars ≤ t read bars ≤ t only: the states
are causal (`features`), the Q-table row of bar t depends on bar t's state alone and the
recursion runs forward.

Repeated calls on longer histories of the same instrument extend the path instead of recomputing
it: the Q-table is computed in fixed blocks of `BLOCK` bars at fixed offsets (a block still being
filled is padded to the full size), so every row comes out of the same network call shape
whichever history length asked for it, and a resumed run decides exactly as an uninterrupted one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from comparators.checkpoint import Checkpoint, load_checkpoint
from comparators.macrohft.features import StateScaling
from comparators.macrohft.model import MacroHFT, build_model
from comparators.macrohft.policy import greedy_path, q_table

BLOCK = 4096


@dataclass
class _Path:
    """One instrument's path so far: its anchor row, the Q-table blocks done from there, and the
    actions of the bars from the anchor on."""

    first: pd.Timestamp
    anchor: int
    blocks: list[np.ndarray] = field(default_factory=list)
    actions: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))


class MacroHFTTrader:
    """Target leverages of a checkpoint (module docstring); with `start`, the path begins flat at
    the first bar at or after `start` (flat before it) instead of at the history's first bar."""

    def __init__(self, folder: str | Path, start: str | pd.Timestamp | None = None):
        self.checkpoint: Checkpoint = load_checkpoint(folder, build_model)
        self.model: MacroHFT = self.checkpoint.model
        self.positions = np.asarray(self.checkpoint.config["positions"], dtype=np.float64)
        self.scaling = StateScaling.from_dict(self.checkpoint.config["scaling"])
        self.flat = int(np.argmin(np.abs(self.positions)))
        self.start = pd.Timestamp(start) if start is not None else None
        self._paths: dict[str, _Path] = {}

    @property
    def fingerprint(self) -> str:
        return self.checkpoint.fingerprint

    def _table_block(self, states: dict[str, np.ndarray], lo: int) -> tuple[np.ndarray, bool]:
        """Q-table rows lo .. lo+BLOCK−1 (padded to BLOCK rows) and whether the block is complete."""
        hi = min(len(states["single"]), lo + BLOCK)
        padded = {}
        for name, values in states.items():
            part = np.zeros((BLOCK, values.shape[1]), dtype=np.float32)
            part[:hi - lo] = values[lo:hi]
            padded[name] = torch.from_numpy(part)
        table = q_table(self.model, padded["single"], padded["trend"], padded["context"], len(self.positions))
        return table[:hi - lo], hi - lo == BLOCK

    def actions(self, ticker: str, bars: pd.DataFrame) -> np.ndarray:
        """The action index of every bar of `bars` (one instrument's history from its first bar)."""
        path = self._paths.get(ticker)
        if path is None or path.first != bars.index[0]:
            anchor = int(bars.index.searchsorted(self.start)) if self.start is not None else 0
            path = self._paths[ticker] = _Path(first=bars.index[0], anchor=anchor)
        known = path.anchor + len(path.actions)
        if len(bars) > known:
            states = self.scaling.states(bars)
            partial = []
            for lo in range(path.anchor + len(path.blocks) * BLOCK, len(bars), BLOCK):
                table, complete = self._table_block(states, lo)
                (path.blocks if complete else partial).append(table)
            table = np.concatenate([*path.blocks, *partial])[len(path.actions):]
            previous = int(path.actions[-1]) if len(path.actions) else self.flat
            path.actions = np.concatenate([path.actions, greedy_path(table, previous)])
        before = np.full(min(path.anchor, len(bars)), self.flat, dtype=np.int64)
        return np.concatenate([before, path.actions])[:len(bars)]

    def targets(self, ticker: str, bars: pd.DataFrame) -> pd.Series:
        """Target leverage per bar of `bars`."""
        return pd.Series(self.positions[self.actions(ticker, bars)], index=bars.index)
