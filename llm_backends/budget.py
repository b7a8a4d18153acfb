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
the engine loads its model; None keeps torch's default; `idle` takes the cores other work leaves
free (at least one), read when the engine loads and again before each generation pass
(`IdleThreads`), so a neighbour that starts or stops during a run changes the count: on a quiet
2-core machine two threads took the quick suite's single-agent row from 161 s to 99 s with the
same answers token for token, while a busy machine gets one thread.
"""

from __future__ import annotations

import os
import time

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
"""Seconds over which `idle_cores` measures how busy the machine is when an engine loads."""

IDLE_REFRESH_S = 1.0
"""`IdleThreads` reads the free cores again once at least this many seconds have passed."""


def machine_busy_s() -> float:
    """CPU seconds every core of the machine has spent busy since boot (all but idle and iowait)."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def process_busy_s() -> float:
    """CPU seconds this process (all its threads) has spent, user and system."""
    times = psutil.Process().cpu_times()
    return times.user + times.system


class FreeCores:
    """The cores other processes left free between two readings:

        others = (Δ machine busy s − Δ this process's busy s) / Δ wall s      (cores)
        free   = max(1, round(n − others))                                  (n = the machine's cores)

    This process's own threads do not count as other work, so an engine that keeps both cores
    busy on a quiet machine still reads both as free.
    """

    def __init__(self, cores: int | None = None, machine=machine_busy_s, own=process_busy_s, clock=time.monotonic):
        self.cores = cores or os.cpu_count() or 1
        self._machine, self._own, self._clock = machine, own, clock
        self._last = self._counters()

    def _counters(self) -> tuple[float, float, float]:
        return self._clock(), self._machine(), self._own()

    def since_last(self) -> float:
        """Wall seconds since the last reading (or since construction)."""
        return self._clock() - self._last[0]

    def read(self) -> int:
        """The free cores since the last reading; the next reading starts now."""
        now = self._counters()
        wall, machine, own = (b - a for a, b in zip(self._last, now, strict=True))
        self._last = now
        others = max(0.0, machine - own) / wall if wall > 0 else 0.0
        return max(1, min(self.cores, round(self.cores - others)))


def idle_cores() -> int:
    """Cores not busy with other work when the engine loads: `FreeCores` over `IDLE_SAMPLE_S`.
    A load average would lag by a minute, so a run started right after an install would still see
    the install's load."""
    cores = FreeCores()
    time.sleep(IDLE_SAMPLE_S)
    return cores.read()


class IdleThreads:
    """`torch_threads: idle` during a run: before each generation pass, once `IDLE_REFRESH_S` have
    passed since the last reading, torch's thread count is set to the cores other work left free
    over that interval (`FreeCores`)."""

    def __init__(self, cores: FreeCores | None = None):
        self.cores = cores or FreeCores()

    def refresh(self) -> int:
        """The thread count in force for the next pass."""
        if self.cores.since_last() >= IDLE_REFRESH_S:
            threads = self.cores.read()
            if threads != torch.get_num_threads():
                torch.set_num_threads(threads)
        return torch.get_num_threads()


def use_torch_threads(threads: int | str | None) -> int:
    """Set torch's intra-op thread count (None: leave torch's default; `idle`: `idle_cores()`); returns the count in force."""
    if threads == IDLE:
        threads = idle_cores()
    if threads is not None:
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"torch_threads must be at least 1, 'idle' or null for torch's default, got {threads!r}")
        torch.set_num_threads(threads)
    return torch.get_num_threads()
