"""One memory value sizes a local engine's prefix store and its batches; torch's thread count is
set from the engine's config before its model loads."""

from __future__ import annotations

import subprocess
import sys
import time

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


class Counters:
    """Fake clock and CPU-time counters that a test advances by hand."""

    def __init__(self):
        self.wall = self.machine = self.own = 0.0

    def advance(self, wall: float, machine: float, own: float) -> None:
        self.wall += wall
        self.machine += machine
        self.own += own

    def free_cores(self, cores: int) -> budget.FreeCores:
        return budget.FreeCores(cores, machine=lambda: self.machine, own=lambda: self.own, clock=lambda: self.wall)


@pytest.mark.parametrize(("cores", "machine", "own", "threads"),
                         [(2, 0.1, 0.0, 2), (2, 2.0, 2.0, 2), (2, 2.0, 1.0, 1), (2, 1.2, 0.0, 1), (2, 2.0, 0.0, 1), (8, 4.0, 0.8, 5)])
def test_free_cores_are_those_other_processes_left_free(cores, machine, own, threads):
    """Over one wall second: others = machine − own busy seconds; free = round(n − others), at least 1.
    The engine's own threads (machine = own) leave every core free."""
    counters = Counters()
    cores_now = counters.free_cores(cores)
    counters.advance(wall=1.0, machine=machine, own=own)
    assert cores_now.read() == threads


def test_idle_threads_follow_a_neighbour_that_comes_and_goes():
    counters = Counters()
    idle = budget.IdleThreads(counters.free_cores(2))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        counters.advance(wall=budget.IDLE_REFRESH_S / 2, machine=1.0, own=0.0)
        assert idle.refresh() == 2  # too soon to read again: unchanged
        counters.advance(wall=budget.IDLE_REFRESH_S, machine=1.0, own=0.0)
        assert idle.refresh() == 1 == torch.get_num_threads()  # a neighbour took a core
        counters.advance(wall=2.0, machine=3.8, own=3.8)
        assert idle.refresh() == 2 == torch.get_num_threads()  # it left; the engine's own use is not other work
    finally:
        torch.set_num_threads(before)


@pytest.mark.slow
def test_a_spinning_neighbour_process_takes_a_core_from_the_reading():
    """Real counters: a child process busy for the whole interval is other work (at least one core)."""
    spin = "import time\nend = time.time() + 3\nwhile time.time() < end:\n    pass\n"
    neighbour = subprocess.Popen([sys.executable, "-c", spin])
    try:
        time.sleep(0.5)
        cores = budget.FreeCores()
        time.sleep(1.5)
        assert cores.read() <= max(1, cores.cores - 1)
    finally:
        neighbour.kill()
        neighbour.wait()


@pytest.mark.slow
def test_torch_threads_idle_gives_the_engine_a_reading_repeated_during_the_run(tiny_root):
    engine = build_engine(engine_config("tiny", ["torch_threads=idle"]))
    assert isinstance(engine.idle_threads, budget.IdleThreads)
    assert build_engine(engine_config("tiny", ["torch_threads=1"])).idle_threads is None


def test_bad_budgets_are_refused_with_the_field():
    with pytest.raises(ValueError, match="torch_threads must be at least 1"):
        use_torch_threads(0)
    with pytest.raises(ValueError, match="'busy'"):
        use_torch_threads("busy")
    with pytest.raises(ValueError, match="memory_mb must be positive"):
        batch_positions(0, 512)
