"""One memory value sizes a local engine's prefix store and its batches; torch's thread count is
set from the engine's config before its model loads."""

from __future__ import annotations

import pytest
import torch

from llm_backends import budget
from llm_backends.budget import MIB, STORE_SHARE, batch_positions, kv_position_bytes, store_mb, use_torch_threads
from llm_backends.build import build_engine, engine_config
from llm_backends.tiny import TinySpec


def test_a_position_costs_keys_and_values_of_every_layer(tiny):
    spec = TinySpec()
    head_dim = spec.hidden_size // spec.num_attention_heads
    assert kv_position_bytes(tiny.hf_model) == spec.num_hidden_layers * 2 * spec.num_key_value_heads * head_dim * 4


def test_memory_mb_splits_into_the_store_and_the_batch_cap(tiny_root):
    engine = build_engine(engine_config("tiny", ["memory_mb=64"]))
    position = kv_position_bytes(engine.hf_model)
    assert engine.kv_store.budget_bytes == int(STORE_SHARE * 64 * MIB) == int(store_mb(64) * MIB)
    assert engine.max_batch_tokens == batch_positions(64, position) == int((1 - STORE_SHARE) * 64 * MIB // (2 * position))
    assert engine.kv_store_positions == engine.kv_store.budget_bytes // position


def test_explicit_store_and_batch_sizes_replace_their_share(tiny_root):
    engine = build_engine(engine_config("tiny", ["memory_mb=64", "kv_cache_mb=0", "max_batch_tokens=5000"]))
    assert engine.kv_store is None and engine.kv_store_positions == 0 and engine.max_batch_tokens == 5000


def test_the_config_sets_torch_threads_and_null_keeps_them(tiny_root):
    before = torch.get_num_threads()
    try:
        build_engine(engine_config("tiny", ["torch_threads=2"]))
        assert torch.get_num_threads() == 2
        build_engine(engine_config("tiny", ["torch_threads=null"]))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize(("cores", "percent", "threads"), [(2, 3.0, 2), (2, 55.0, 1), (2, 100.0, 1), (8, 40.0, 5)])
def test_idle_threads_are_the_cores_other_work_leaves_free(monkeypatch, cores, percent, threads):
    monkeypatch.setattr(budget.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(budget.psutil, "cpu_percent", lambda interval: percent)
    before = torch.get_num_threads()
    try:
        assert use_torch_threads("idle") == threads
    finally:
        torch.set_num_threads(before)


def test_bad_budgets_are_refused_with_the_field():
    with pytest.raises(ValueError, match="torch_threads must be at least 1"):
        use_torch_threads(0)
    with pytest.raises(ValueError, match="'busy'"):
        use_torch_threads("busy")
    with pytest.raises(ValueError, match="memory_mb must be positive"):
        batch_positions(0, 512)
