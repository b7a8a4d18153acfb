"""What a run used of the machine, for `run.json`: peak resident memory and torch's threads.

Peak resident memory is the kernel's high-water mark of this process (`getrusage`, `ru_maxrss`,
KiB on Linux, bytes on macOS), in MiB; processes the run started are counted apart
(`peak_rss_children_mb`: the largest of them). torch's intra-op thread count is read only when
torch is already loaded (a run without a local LLM engine never imports it): null otherwise.

Memory a framework frees is not given back to the system by itself. glibc's allocator keeps freed
chunks below its mmap threshold (which rises to 32 MiB once a larger chunk has been freed) in its
arenas, one per thread that allocated, and hands them back only from the top of a heap. A local
engine's prefix store is thousands of such chunks (a SmolLM2 block of 16 positions is 720 KiB),
so an emptied store stayed resident and the paper suite's rows stacked their stores: the
offline run had 12.7 GB resident when its third LLM row started. `return_freed_memory` asks the
allocator to give back every free page of every arena (`malloc_trim(0)`); a probe that filled
and emptied 1,000 such blocks measured 939 MiB resident after the free and 240 MiB after the trim
(tests/harness/test_resources.py).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import resource
import sys
from functools import cache
from typing import Any

RSS_UNIT_BYTES = 1 if sys.platform == "darwin" else 1024
"""Bytes per unit of `ru_maxrss` on this platform."""


def peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """The high-water mark of resident memory, in MiB, of this process (or its waited-for children)."""
    return round(resource.getrusage(who).ru_maxrss * RSS_UNIT_BYTES / 2**20, 1)


def torch_threads() -> int | None:
    """torch's intra-op thread count when torch is loaded, else None."""
    torch = sys.modules.get("torch")
    return torch.get_num_threads() if torch is not None else None


def run_resources() -> dict[str, Any]:
    """`peak_rss_mb`, `peak_rss_children_mb` and `torch_threads` for run.json."""
    return {"peak_rss_mb": peak_rss_mb(), "peak_rss_children_mb": peak_rss_mb(resource.RUSAGE_CHILDREN),
            "torch_threads": torch_threads()}


@cache
def _libc_malloc_trim():
    """glibc's `malloc_trim`, or None where the C library has none (macOS, musl)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    return getattr(ctypes.CDLL(name), "malloc_trim", None)


def return_freed_memory() -> bool:
    """Give the pages the allocator holds free back to the system (module docstring); False where
    the C library cannot."""
    trim = _libc_malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
