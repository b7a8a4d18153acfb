"""Where TradeDuel keeps converted models, tiny models and the response cache."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "TRADEDUEL_CACHE"


def cache_root() -> Path:
    """`$TRADEDUEL_CACHE`, or `~/.cache/tradeduel` when unset."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "tradeduel").expanduser()


def default_response_cache() -> Path:
    """The response-cache database shared by all engines: `<cache_root>/llm_responses.sqlite`."""
    return cache_root() / "llm_responses.sqlite"
