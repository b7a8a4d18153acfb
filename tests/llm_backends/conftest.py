"""Shared fixtures: tiny engines built into a temporary cache root.

Only tests that ask for `tiny_root` (or `tiny`) see that root; the SmolLM2 test uses the
normal cache root, so its one-off GGUF conversion is reused between runs. Torch runs on one
thread here: the tiny model's forward passes are too small to gain from more, and on a busy
machine two threads made them about ten times slower.
"""

from __future__ import annotations

import pytest
import torch

from llm_backends.paths import CACHE_ENV
from llm_backends.tiny import tiny_engine
from llm_backends.transformers_engine import TransformersEngine

torch.set_num_threads(1)


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
