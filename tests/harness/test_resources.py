"""run.json's machine facts: the process's peak resident memory and torch's thread count."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.resources import peak_rss_mb, run_resources, torch_threads


@pytest.mark.slow
def test_peak_memory_reaches_a_block_larger_than_the_peak_so_far():
    before = peak_rss_mb()
    block = bytearray(int((before + 64) * 2**20))  # zero-filled by the allocator: every page resident
    assert peak_rss_mb() >= before + 64
    del block


@pytest.mark.slow
def test_torch_threads_are_read_only_when_torch_is_loaded():
    probe = "import sys; from harness.resources import torch_threads; a = torch_threads(); import torch; " \
            "torch.set_num_threads(1); print(a, torch_threads())"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["None", "1"]


def test_run_resources_names_the_three_facts():
    facts = run_resources()
    assert set(facts) == {"peak_rss_mb", "peak_rss_children_mb", "torch_threads"}
    assert facts["peak_rss_mb"] > 0 and facts["torch_threads"] == torch_threads()


FREED_BLOCKS_PROBE = """
import psutil
import torch
from harness.resources import return_freed_memory
rss = lambda: psutil.Process().memory_info().rss / 2**20
blocks, kept = [], []
for i in range(1000):   # about 700 MiB of SmolLM2 prefix-store blocks, with small survivors between them
    blocks.append(torch.ones(30, 2, 3, 16, 64))
    kept.append(torch.ones(1024))
blocks.clear()
freed = rss()
trimmed = return_freed_memory()
print(freed, rss(), trimmed)
"""


@pytest.mark.slow
def test_freed_blocks_go_back_to_the_system():
    """Freed chunks below the mmap threshold stay resident until the allocator trims them (glibc)."""
    out = subprocess.run([sys.executable, "-c", FREED_BLOCKS_PROBE], capture_output=True, text=True, check=True).stdout
    freed, trimmed, could = out.split()
    freed, trimmed = float(freed), float(trimmed)
    if could == "False":
        pytest.skip("the C library has no malloc_trim (glibc's)")
    assert freed - trimmed > 500, f"resident {freed:.0f} MiB after the free, {trimmed:.0f} MiB after the trim"
