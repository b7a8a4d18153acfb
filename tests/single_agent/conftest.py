"""Shared fixtures: the two protocols, the reward configs, the SmolLM2 and tiny tokenizers, the tiny engine.

The SmolLM2 tokenizer comes from the normal cache root (its one-off GGUF conversion is reused
between runs); the tiny model is built into the session's temporary cache root.
"""

from __future__ import annotations

import pytest
import torch
from transformers import AutoTokenizer

from llm_backends.paths import CACHE_ENV
from llm_backends.smollm2 import ensure_converted
from llm_backends.tiny import TinySpec, ensure_tiny, tiny_engine
from single_agent.protocol import Protocol, load_protocol
from single_agent.rewards import RewardConfig, load_reward_config


@pytest.fixture(scope="session")
def paper() -> Protocol:
    return load_protocol("paper")


@pytest.fixture(scope="session")
def compact() -> Protocol:
    return load_protocol("compact")


@pytest.fixture(scope="session")
def paper_reward() -> RewardConfig:
    return load_reward_config("paper")


@pytest.fixture(scope="session")
def compact_reward() -> RewardConfig:
    return load_reward_config("compact")


@pytest.fixture(scope="session")
def smollm2_tokenizer():
    return AutoTokenizer.from_pretrained(ensure_converted())


@pytest.fixture(scope="session")
def tiny_tokenizer(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("tradeduel-cache")))
        return AutoTokenizer.from_pretrained(ensure_tiny(TinySpec()))


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """The tiny test engine (random weights, Qwen2.5 template, `<tool_call>` as one token), no response cache."""
    torch.set_num_threads(1)  # its forward passes are too small to gain from more; a busy machine loses a lot
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("tradeduel-cache")))
        return tiny_engine()
