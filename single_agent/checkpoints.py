"""A trained policy by path: a transformers model folder, or a LoRA adapter folder (peft).

A model folder (`config.json` and weights) is served by the `transformers` engine config. An
adapter folder (`adapter_config.json`) is merged into its base model: the base is an LLM
config (`configs/llm/<name>`, e.g. the `smollm2` a SmolLM2 adapter was trained on) or, when
none is named, the folder the adapter records as `base_model_name_or_path`. The merged weights
get an engine of their own, named `<base name>+<adapter folder name>`, whose fingerprint is a
digest of the merged state dict (base and adapter together): peft merges through `.data`,
which the base engine's check for weights changed in place would not see.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.errors import ConfigError
from llm_backends.configs import load_engine
from llm_backends.engine import ChatEngine
from llm_backends.transformers_engine import TransformersEngine

ADAPTER_CONFIG = "adapter_config.json"


def is_adapter(folder: Path) -> bool:
    """True when `folder` holds a peft adapter rather than a whole model."""
    return (folder / ADAPTER_CONFIG).is_file()


def recorded_base(folder: Path) -> str:
    """The base model folder an adapter names in its `adapter_config.json`; ConfigError when it is not a folder here."""
    base = json.loads((folder / ADAPTER_CONFIG).read_text()).get("base_model_name_or_path")
    if not base or not Path(base).is_dir():
        raise ConfigError(f"{folder}: the adapter's base {base!r} is not a model folder here; name its base "
                          "with llm=<configs/llm name> (e.g. smollm2)")
    return str(base)


def merged_engine(engine: ChatEngine, folder: Path) -> TransformersEngine:
    """An engine over `engine`'s model with the LoRA adapter in `folder` merged in (`engine` is closed)."""
    try:
        from peft import PeftModel
    except ImportError:
        raise ConfigError(f"{folder} is a LoRA adapter; loading it needs peft: pip install 'tradeduel[adapters]'") from None
    base = getattr(engine, "inner", engine)
    if not isinstance(base, TransformersEngine):
        raise ConfigError(f"{folder}: a LoRA adapter needs a local transformers base, not {type(base).__name__}")
    model = PeftModel.from_pretrained(base.hf_model, str(folder)).merge_and_unload()
    merged = TransformersEngine(model, base.tokenizer, f"{base.model}+{folder.name}",
                                max_batch_tokens=base.max_batch_tokens, max_batch_size=base.max_batch_size,
                                kv_cache_mb=base.kv_store.budget_bytes / 2**20 if base.kv_store is not None else 0)
    merged.knowledge_cutoff = base.knowledge_cutoff
    engine.close()
    return merged


def checkpoint_engine(checkpoint: str, llm: str | None, overrides: list[str]) -> ChatEngine:
    """The engine of a trained policy at `checkpoint` (see the module docstring); `llm` names an
    adapter's base config, `overrides` are `key=value` settings of the engine config."""
    folder = Path(checkpoint)
    if not folder.is_dir():
        raise ConfigError(f"checkpoint {checkpoint}: no such folder")
    if not is_adapter(folder):
        if llm is not None:
            raise ConfigError(f"checkpoint {checkpoint} is a whole model: leave llm unset (it names an adapter's base)")
        return load_engine("transformers", [f"path={folder}", *overrides])
    base = load_engine(llm, overrides) if llm is not None else \
        load_engine("transformers", [f"path={recorded_base(folder)}", *overrides])
    return merged_engine(base, folder)
