"""The on-disk cache of the online data sources: `$TRADEDUEL_CACHE/<source>`.

`TRADEDUEL_CACHE` defaults to `~/.cache/tradeduel` (the LLM backends keep their files under
the same root). It is read when a folder is asked for, not at import.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "TRADEDUEL_CACHE"


def cache_folder(source: str, cache_dir: str | Path | None = None) -> Path:
    """`cache_dir` when given, else `$TRADEDUEL_CACHE/<source>` (`~/.cache/tradeduel/<source>` when unset)."""
    if cache_dir:
        return Path(cache_dir)
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "tradeduel").expanduser() / source
