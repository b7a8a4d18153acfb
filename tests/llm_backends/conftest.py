"""Shared fixtures: a tiny engine built into a temporary cache root."""

from __future__ import annotations

import pytest

from llm_backends.paths import CACHE_ENV
from llm_backends.tiny import tiny_engine
from llm_backends.transformers_engine import TransformersEngine

PRICE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_market_data",
        "description": "Daily OHLCV bars of a ticker up to a date.",
        "parameters": {
            "type": "object",
            "properties": {"ticker": {"type": "string"}, "end_date": {"type": "string"}},
            "required": ["ticker"],
        },
    },
}


@pytest.fixture(scope="session")
def tiny_root(tmp_path_factory: pytest.TempPathFactory):
    """A cache root of its own for the test session (tiny models are rebuilt there once)."""
    root = tmp_path_factory.mktemp("tradeduel-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CACHE_ENV, str(root))
        yield root


@pytest.fixture(scope="session")
def tiny(tiny_root) -> TransformersEngine:
    """The default tiny engine, without response cache."""
    return tiny_engine()


def conversation(text: str) -> list[dict]:
    """A one-turn user conversation."""
    return [{"role": "user", "content": text}]
