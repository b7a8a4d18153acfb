"""A trained policy by path: a transformers model folder, or a LoRA adapter folder (peft).

A model folder (`config.json` and weights) is served by the `transformers` engine config with
its `path` unset (`path: null`, filled in with the folder). An adapter folder
(`adapter_config.json`) is merged into its base model: the base is a composed config of the
`llm` group (e.g. `smollm2`, the model a SmolLM2 adapter was trained on) or, when it is the
`transformers` config with `path` unset, the folder the adapter records as `base_model_name_or_path`. The merged weights
get an engine of their own, named `<base name>+<adapter folder name>`, whose fingerprint is a
digest of the merged state dict (base and adapter together): peft merges through `.data`,
which the base engine's check for weights changed in place would not see.
"""

from __future__ import annotations

import json
from pathlib import Path

from collections.abc import Mapping
from typing import Any

from core.errors import ConfigError
from llm_backends.build import build_engine, engine_config
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
                          "with llm@frameworks.<row>.llm=<llm group option> (e.g. smollm2)")
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


def folder_engine(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """`config` when it is a `transformers` engine config with `path` unset (a folder's engine, its path
    to fill in); None for any other engine config. None stands for the `transformers` option itself."""
    config = engine_config("transformers") | {"path": None} if config is None else config
    return dict(config) if "path" in config and config["path"] is None else None


def checkpoint_engine(checkpoint: str, llm: Mapping[str, Any] | None) -> ChatEngine:
    """The engine of a trained policy at `checkpoint` (see the module docstring); `llm` is a composed
    `llm` config: the settings of the folder's engine (path unset), or an adapter's base."""
    folder = Path(checkpoint)
    if not folder.is_dir():
        raise ConfigError(f"checkpoint {checkpoint}: no such folder")
    unset = folder_engine(llm)
    if not is_adapter(folder):
        if unset is None:
            raise ConfigError(f"checkpoint {checkpoint} is a whole model: leave llm at the transformers config with "
                              "path null (an other engine names an adapter's base)")
        return build_engine(unset | {"path": str(folder)})
    base = build_engine(unset | {"path": recorded_base(folder)}) if unset is not None else build_engine(llm)
    return merged_engine(base, folder)
