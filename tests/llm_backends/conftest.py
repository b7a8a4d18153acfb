"""Shared fixtures: tiny engines built into a temporary cache root, and the tiny engine served on 127.0.0.1.

Only tests that ask for `tiny_root` (or `tiny`) see that root; the SmolLM2 test uses the
normal cache root, so its one-off GGUF conversion is reused between runs. Torch runs on one
thread here: the tiny model's forward passes are too small to gain from more, and on a busy
machine two threads made them about ten times slower.
"""

from __future__ import annotations

import openai
import pytest
import torch

from llm_backends.paths import CACHE_ENV
from llm_backends.serve import BackgroundServer, start_server
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


@pytest.fixture(scope="session")
def tiny_server(tiny) -> BackgroundServer:
    """`tiny` behind `llm_backends.serve` on 127.0.0.1 (no response cache, so every answer is generated)."""
    with start_server(tiny) as server:
        yield server


@pytest.fixture(scope="session")
def tiny_sdk(tiny_server) -> openai.OpenAI:
    """The real `openai` SDK pointed at `tiny_server`, without retries (a failure shows at once)."""
    return openai.OpenAI(base_url=tiny_server.url, api_key="unused", max_retries=0)
