"""A batch KV cache that writes into buffers allocated once, instead of growing by concatenation.

transformers' `DynamicLayer.update` appends each step's keys and values with `torch.cat`, which
allocates and copies the whole cache of the layer: a decode step of b rows at cache length L
copies 2·b·L·heads·head_dim numbers per layer, so a turn of n tokens costs O(n·L) memory
traffic and as many large allocations. For SmolLM2 (30 layers, 3 KV heads of 64, float32:
46 KB per position) a batch of 32 rows at L = 1,500 copies 2.2 GB per step. The decoder knows
each batch's final width (reused prefix + prompt + max new tokens), so `BufferedLayer` allocates
that once and writes each step in place; `keys` and `values` are views of the filled part, as
`DynamicLayer`'s are tensors, so attention and the prefix store read them unchanged.
(benchmarks/kv_buffer.py measures both on SmolLM2.)
"""

from __future__ import annotations

import torch
from transformers.cache_utils import Cache, DynamicCache, DynamicLayer


class BufferedLayer(DynamicLayer):
    """A `DynamicLayer` whose keys and values live in `[batch, heads, capacity, head_dim]` buffers;
    a write past `capacity` doubles the buffers (never expected when the capacity is the batch width)."""

    def __init__(self, capacity: int):
        super().__init__()
        self.capacity = capacity
        self.length = 0

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        batch, heads, _, dim = key_states.shape
        self.device = key_states.device
        self.key_buffer = key_states.new_empty((batch, heads, self.capacity, dim))
        self.value_buffer = value_states.new_empty((batch, heads, self.capacity, value_states.shape[-1]))
        self.length = 0
        self._expose()
        self.is_initialized = True

    def _expose(self) -> None:
        self.keys = self.key_buffer[:, :, : self.length]
        self.values = self.value_buffer[:, :, : self.length]

    def _grow(self, needed: int) -> None:
        self.capacity = max(needed, 2 * self.capacity)
        for name in ("key_buffer", "value_buffer"):
            old = getattr(self, name)
            new = old.new_empty((*old.shape[:2], self.capacity, old.shape[3]))
            new[:, :, : self.length] = old[:, :, : self.length]
            setattr(self, name, new)

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        end = self.length + key_states.shape[-2]
        if end > self.capacity:
            self._grow(end)
        self.key_buffer[:, :, self.length:end] = key_states
        self.value_buffer[:, :, self.length:end] = value_states
        self.length = end
        self._expose()
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self.length if self.is_initialized else 0

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        if self.is_initialized:
            self.key_buffer = self.key_buffer[indices]
            self.value_buffer = self.value_buffer[indices]
            self._expose()

    def crop(self, tokens_to_remove: int) -> None:
        if tokens_to_remove > 0:
            raise ValueError(f"crop takes the negative number of tokens to remove, got {tokens_to_remove}")
        if self.is_initialized and tokens_to_remove:
            self.length = max(0, self.length + tokens_to_remove)
            self._expose()

    def reset(self) -> None:
        self.length = 0
        if self.is_initialized:
            self._expose()


def buffered_cache(num_layers: int, capacity: int, prefix: torch.Tensor | None = None) -> DynamicCache:
    """A cache of `num_layers` `BufferedLayer`s of `capacity` positions, holding `prefix`
    ([layers, 2, batch, heads, columns, head_dim]) in its first columns when given."""
    layers = [BufferedLayer(capacity) for _ in range(num_layers)]
    if prefix is not None:
        for layer, kv in zip(layers, prefix):
            layer.update(kv[0], kv[1])
    cache = DynamicCache.__new__(DynamicCache)
    Cache.__init__(cache, layers=layers)
    return cache
