"""What a run used of the machine, for `run.json`: peak resident memory and torch's threads.

Peak resident memory is the kernel's high-water mark of this process (`getrusage`, `ru_maxrss`,
KiB on Linux, bytes on macOS), in MiB; processes the run started are counted apart
(`peak_rss_children_mb`: the largest of them). torch's intra-op thread count is read only when
torch is already loaded (a run without a local LLM engine never imports it): null otherwise.
"""

from __future__ import annotations

import resource
import sys
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
