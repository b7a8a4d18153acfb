"""Where TradeDuel keeps converted models, tiny models and the response cache."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

CACHE_ENV = "TRADEDUEL_CACHE"


def cache_root() -> Path:
    """`$TRADEDUEL_CACHE`, or `~/.cache/tradeduel` when unset."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "tradeduel").expanduser()


def default_response_cache() -> Path:
    """The response-cache database shared by all engines: `<cache_root>/llm_responses.sqlite`."""
    return cache_root() / "llm_responses.sqlite"


def build_folder(dest: Path, build: Callable[[Path], None]) -> Path:
    """Create `dest` by calling `build(staging)` on a private sibling folder, then renaming it.

    A failed or killed build leaves no half-written `dest`; when two processes build at once,
    the first rename wins and the other discards its copy.
    """
    staging = dest.with_name(f"{dest.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        build(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        staging.rename(dest)
    except OSError:
        if not dest.exists():
            raise
        shutil.rmtree(staging, ignore_errors=True)
    return dest
