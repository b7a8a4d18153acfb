"""Automatic prefix caching: the keys and values of token blocks, reused by any later request
that starts with the same tokens.

A token sequence is cut into blocks of `block_size` tokens. Block j is named by a digest chained
over blocks 0..j (SHA-256 of the parent block's digest and the block's token ids), so a name
stands for the whole prefix up to the end of its block, as in vLLM's automatic prefix caching.
A request reuses the longest run of stored blocks from its start: the system prompt and tool
schemas that every episode shares, and an episode's own earlier turns (prompt + completion)
when it continues. Each block is stored once however many sequences share it, as one tensor
[layers, 2 (keys, values), kv heads, block_size, head dim].

Blocks are evicted least recently used first under `budget_bytes`. A lookup or insert touches
its chain deepest block first, so a block is never older than the blocks that extend it, and
eviction removes the tails of old sequences before the prefixes they share. Only full blocks
are stored; up to block_size - 1 trailing tokens of a prefix are recomputed. Keys and values
are only valid for the weights that computed them: the engine clears the store whenever its
weights change.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import OrderedDict
from collections.abc import Callable

import torch

ROOT = b""


def block_digests(ids: list[int], block_size: int) -> list[bytes]:
    """The chained digest of every full block of `ids`."""
    digests = []
    parent = ROOT
    for start in range(0, len(ids) - block_size + 1, block_size):
        parent = hashlib.sha256(parent + array("q", ids[start:start + block_size]).tobytes()).digest()
        digests.append(parent)
    return digests


class PrefixKVStore:
    """Keys and values of token blocks under a byte budget, found by prefix."""

    def __init__(self, budget_bytes: int, block_size: int = 16) -> None:
        if block_size <= 0:
            raise ValueError(f"block_size must be positive, got {block_size}")
        self.budget_bytes = budget_bytes
        self.block_size = block_size
        self._blocks: OrderedDict[bytes, torch.Tensor] = OrderedDict()
        self.bytes_used = 0

    def __repr__(self) -> str:
        return f"PrefixKVStore({len(self)} blocks of {self.block_size} tokens, {self.bytes_used / 2**20:.1f} of {self.budget_bytes / 2**20:.0f} MiB)"

    def __len__(self) -> int:
        return len(self._blocks)

    def _touch(self, digests: list[bytes]) -> None:
        """Mark a chain as just used, deepest block first (so its prefix is the most recent)."""
        for digest in reversed(digests):
            self._blocks.move_to_end(digest)

    def lookup(self, ids: list[int]) -> list[torch.Tensor]:
        """The stored blocks covering the longest stored prefix of `ids`, in order."""
        found = []
        digests = block_digests(ids, self.block_size)
        for digest in digests:
            block = self._blocks.get(digest)
            if block is None:
                break
            found.append(block)
        self._touch(digests[:len(found)])
        return found

    def insert(self, ids: list[int], kv: Callable[[int, int], torch.Tensor]) -> int:
        """Store the full blocks of `ids` that are missing; returns how many were added.

        `kv(start, end)` gives the keys and values of tokens start..end-1 as one tensor
        [layers, 2, kv heads, end - start, head dim]; it is called once, for the missing span.
        Blocks of other sequences are evicted to make room; when even that is not enough,
        the sequence is stored only as far as it fits.
        """
        digests = block_digests(ids, self.block_size)
        first = next((j for j, d in enumerate(digests) if d not in self._blocks), len(digests))
        if first == len(digests) or self.budget_bytes <= 0:
            self._touch([d for d in digests if d in self._blocks])
            return 0
        span = kv(first * self.block_size, len(digests) * self.block_size)
        own = set(digests)
        added = 0
        for j in range(first, len(digests)):
            if digests[j] in self._blocks:
                continue
            offset = (j - first) * self.block_size
            block = span[:, :, :, offset:offset + self.block_size].clone()
            if not self._make_room(block.nbytes, own):
                break
            self._blocks[digests[j]] = block
            self.bytes_used += block.nbytes
            added += 1
        self._touch([d for d in digests if d in self._blocks])
        return added

    def _make_room(self, size: int, keep: set[bytes]) -> bool:
        """Evict least recently used blocks outside `keep` until `size` more bytes fit."""
        while self.bytes_used + size > self.budget_bytes:
            victim = next((d for d in self._blocks if d not in keep), None)
            if victim is None:
                return False
            self.bytes_used -= self._blocks.pop(victim).nbytes
        return True

    def clear(self) -> None:
        """Drop every block (weights changed: the stored keys and values are invalid)."""
        self._blocks.clear()
        self.bytes_used = 0
