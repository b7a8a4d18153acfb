"""Shared fixtures: tiny engines built into a temporary cache root.

Only tests that ask for `tiny_root` (or `tiny`) see that root; the SmolLM2 test uses the
normal cache root, so its one-off GGUF conversion is reused between runs.
"""

from __future__ import annotations

import pytest

from llm_backends.paths import CACHE_ENV
from llm_backends.tiny import tiny_engine
from llm_backends.transformers_engine import TransformersEngine


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory):
    """The session's temporary cache root."""
    return tmp_path_factory.mktemp("tradeduel-cache")


@pytest.fixture
def tiny_root(tiny_dir, monkeypatch):
    """Point the cache root at the session's temporary folder for one test."""
    monkeypatch.setenv(CACHE_ENV, str(tiny_dir))
    return tiny_dir


@pytest.fixture(scope="session")
def tiny(tiny_dir) -> TransformersEngine:
    """The default tiny engine, without response cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CACHE_ENV, str(tiny_dir))
        return tiny_engine()
