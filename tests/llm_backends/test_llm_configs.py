"""Every file of the `configs/llm` group instantiates (or fails with a clear message)."""

import importlib
import inspect

import pytest
from omegaconf import OmegaConf

from configs import CONFIG_DIR as CONFIGS
from llm_backends.build import LLM_GROUP, build_engine, engine_config
from llm_backends.transformers_engine import TransformersEngine

CONFIG_DIR = CONFIGS / LLM_GROUP
CONFIGS = sorted(CONFIG_DIR.glob("*.yaml"))


def target(cfg):
    module, _, name = cfg._target_.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_every_key_is_a_parameter_of_its_factory(path):
    cfg = OmegaConf.load(path)
    factory = target(cfg)
    keys = {k: None for k in cfg if k != "_target_"}
    inspect.signature(factory).bind(**keys)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_keys_are_named_never_written(path):
    cfg = OmegaConf.to_container(OmegaConf.load(path))
    assert not {"api_key", "key", "token"} & set(cfg)
    if "api_key_env" in cfg and cfg["api_key_env"] is not None:
        assert cfg["api_key_env"].isupper()


def test_paper_backbones_are_configured():
    names = {p.stem for p in CONFIGS}
    for backbone in ("qwen2.5-3b", "qwen2.5-7b", "qwen3-30b-a3b"):
        assert {f"{backbone}-vllm", f"{backbone}-server"} <= names


def test_tiny_config_instantiates_an_engine(tiny_root):
    engine = build_engine(engine_config("tiny"))
    assert isinstance(engine, TransformersEngine) and engine.model.startswith("tiny-qwen2-")
