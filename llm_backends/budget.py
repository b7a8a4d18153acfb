"""A local engine's machine budget: one memory value split into its KV caches, and its torch threads.

Memory. A local engine holds, besides its weights, keys and values in two places: the prefix
store (`kv_store`, kept across calls) and the cache of the batch being decoded (`kv_buffer`,
one per batch). Both are counted in KV positions, one position costing

    bytes/position = layers · 2 (keys, values) · kv heads · head dim · bytes per number

(SmolLM2-135M in float32: 30 · 2 · 3 · 64 · 4 = 46,080 B). `memory_mb` M is split as

    prefix store     = STORE_SHARE · M
    batch positions  = (1 − STORE_SHARE) · M / (2 · bytes/position)

The batch share is halved because a batch that continues stored prefixes assembles them in a
tensor of their own before copying them into the batch's buffers, so for a moment a batch
holds up to twice its positions. A run that fans out many conversations is handed them in
chunks that fit the store (`kv_store_positions`, `frameworks.base.TradingFramework.preferred_batch_size`).

Threads. torch's intra-op thread count is process-wide and by default one per core. On a
machine whose cores also serve other work, a parallel region waits for its slowest thread,
which the scheduler may have taken away: on 2 cores at a load of about 12, the quick suite's
single-agent row took 2,767 s with torch's default two threads against 929 s with one
(`benchmarks/busy_threads.py`, results/speed/NOTES.md). `torch_threads` sets the count before
the engine loads its model; None keeps torch's default; `idle` takes the cores other work leaves free
when the engine loads (at least one): on a quiet 2-core machine two threads took the quick suite's
single-agent row from 161 s to 99 s with the same answers token for token, while a busy machine
still gets one thread.
"""

from __future__ import annotations

import os

import psutil
import torch
from transformers import PreTrainedModel

STORE_SHARE = 0.375
"""Share of an engine's `memory_mb` given to its prefix store; the rest bounds its batches."""

MIB = 2**20


def kv_position_bytes(model: PreTrainedModel) -> int:
    """Bytes of keys and values one token position takes in `model`'s cache (module docstring)."""
    config = model.config.get_text_config(decoder=True)
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    return config.num_hidden_layers * 2 * kv_heads * head_dim * model.dtype.itemsize


def store_mb(memory_mb: float) -> float:
    """The prefix store's budget in MiB: STORE_SHARE of `memory_mb`."""
    return STORE_SHARE * memory_mb


def batch_positions(memory_mb: float, position_bytes: int) -> int:
    """KV positions one batch may hold: (1 − STORE_SHARE) · memory_mb over twice a position's bytes."""
    if memory_mb <= 0:
        raise ValueError(f"memory_mb must be positive, got {memory_mb}")
    return max(1, int((1 - STORE_SHARE) * memory_mb * MIB // (2 * position_bytes)))


IDLE = "idle"
"""`torch_threads: idle`: as many threads as there are cores other work leaves free right now."""

IDLE_SAMPLE_S = 0.5
"""Seconds over which `idle_cores` measures how busy the machine is."""


def idle_cores() -> int:
    """Cores not busy when the engine loads: max(1, round(n · (1 − u))), n the cores and u the machine's
    CPU utilisation over the last `IDLE_SAMPLE_S` (psutil). A load average would lag by a minute, so a
    run started right after an install would still see the install's load."""
    cores = os.cpu_count() or 1
    busy = psutil.cpu_percent(interval=IDLE_SAMPLE_S) / 100
    return max(1, round(cores * (1 - busy)))


def use_torch_threads(threads: int | str | None) -> int:
    """Set torch's intra-op thread count (None: leave torch's default; `idle`: `idle_cores()`); returns the count in force."""
    if threads == IDLE:
        threads = idle_cores()
    if threads is not None:
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"torch_threads must be at least 1, 'idle' or null for torch's default, got {threads!r}")
        torch.set_num_threads(threads)
    return torch.get_num_threads()
