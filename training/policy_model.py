"""The policy being trained: its starting folder, the model and tokenizer, and the engine that
samples rollouts from it.

The engine is a `TransformersEngine` over the trainer's own model object with `live_weights=True`:
it shares the weights the optimizer updates, never uses the response cache, and its prefix KV
store is cleared after every weight update (keys and values are valid only for the weights that
computed them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from transformers import PreTrainedModel

from core.errors import MissingFileError

from llm_backends.smollm2 import ensure_converted
from llm_backends.tiny import ensure_tiny
from llm_backends.transformers_engine import TransformersEngine, load_pretrained
from training.config import LoraSettings, ModelConfig

ROLLOUT_KV_CACHE_MB = 512
"""Prefix KV store of the rollout engine (the shared prompt and each episode's previous turns)."""


def initial_policy_folder(config: ModelConfig) -> Path:
    """The transformers folder training starts from: the built tiny model, the converted SmolLM2,
    or the configured path."""
    if config.source == "tiny":
        return ensure_tiny(config.tiny.spec())
    if config.source == "smollm2":
        return ensure_converted()
    folder = Path(config.path).expanduser()
    if not (folder / "config.json").is_file():
        raise MissingFileError(f"model.path {folder}: not a transformers model folder (no config.json)")
    return folder


def load_policy(folder: Path, config: ModelConfig) -> tuple[PreTrainedModel, Any]:
    """Model and tokenizer from `folder` on the configured device and dtype, in train mode."""
    model, tokenizer = load_pretrained(folder, config.device, config.dtype)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.train()
    return model, tokenizer


def rollout_engine(model: PreTrainedModel, tokenizer: Any, name: str) -> TransformersEngine:
    """The sampling engine over the trainer's live model (no response cache; see the module docstring)."""
    return TransformersEngine(model, tokenizer, name, kv_cache_mb=ROLLOUT_KV_CACHE_MB, live_weights=True)


def lora_config(settings: LoraSettings) -> Any:
    """peft's LoraConfig for a causal LM from our settings."""
    from peft import LoraConfig

    return LoraConfig(task_type="CAUSAL_LM", r=settings.r, lora_alpha=settings.alpha, lora_dropout=settings.dropout,
                      target_modules=settings.target_modules)
