"""Local generation with Hugging Face transformers: token requests in and out, chat on top.

`generate_tokens` takes `TokenRequest`s (prompt ids, sampling parameters, optional grammar,
log-probabilities, cancellation and a token callback) and returns the sampled ids exactly as
sampled; the decode loop (`decoding`) batches rows with different parameters, seeds and
grammars under a KV-cache token budget and reuses prompt prefixes from an engine-wide KV store
(`kv_store`, `kv_cache_mb` of memory; 0 turns it off). The chat path renders each conversation
with the tokenizer's chat template (its own tools per conversation) to ids and goes through
the same machinery, then parses tool calls from the text.

The store's keys and values are valid only for the weights that computed them: the engine
drops them when any parameter changes in place (torch's version counters), and
`clear_kv_cache()` drops them explicitly. An engine built with `live_weights=True` (a policy
being trained) refuses the response cache, and its fingerprint is recomputed from the state
dict when the weights change. On GPU the model runs in bfloat16 by default, on CPU in float32.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, DynamicCache, PreTrainedModel, PreTrainedTokenizerFast
from transformers.cache_utils import DynamicLayer

from llm_backends.budget import IDLE, IdleThreads, batch_positions, kv_position_bytes, store_mb, use_torch_threads
from llm_backends.cache import ResponseCache, open_cache
from llm_backends.chat_template import template_supports_tools
from llm_backends.decoding import DecodeTotals, Decoder
from llm_backends.engine import ChatEngine, ChatRow
from llm_backends.fingerprint import folder_digest, state_dict_digest, tokenizer_digest
from llm_backends.grammar import GrammarCompiler
from llm_backends.kv_store import PrefixKVStore
from llm_backends.messages import for_template
from llm_backends.microbatch import with_microbatching
from llm_backends.tool_calls import parse_tool_calls
from llm_backends.types import ChatResult, Conversation, TokenRequest, TokenResult, ToolSchema


def resolve_device(device: str) -> torch.device:
    """'auto' -> cuda when available, else cpu; anything else is passed to torch.device."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """'auto' -> bfloat16 on GPU, float32 on CPU; otherwise a torch dtype name such as 'float16'."""
    if dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    value = getattr(torch, dtype, None)
    if not isinstance(value, torch.dtype):
        raise ValueError(f"dtype: unknown torch dtype {dtype!r}")
    return value


def reuse_supported(model: PreTrainedModel) -> bool:
    """True when every layer of the model's cache is a plain full-attention `DynamicLayer`
    (sliding-window and linear-attention layers cannot take prefixes laid out with holes)."""
    return all(type(layer) is DynamicLayer for layer in DynamicCache(config=model.config).layers)


def validate_token_requests(requests: list[TokenRequest], vocab_size: int) -> None:
    """Raise ValueError naming the first request whose prompt is not a non-empty list of token ids."""
    if not isinstance(requests, list):
        raise ValueError(f"requests must be a list of TokenRequest, got {type(requests).__name__}")
    for i, request in enumerate(requests):
        if not isinstance(request, TokenRequest):
            raise ValueError(f"request {i}: expected a TokenRequest, got {type(request).__name__}")
        ids = request.prompt_ids
        if not isinstance(ids, list) or not ids:
            raise ValueError(f"request {i}: prompt_ids must be a non-empty list of token ids")
        bad = next((k for k, t in enumerate(ids) if not isinstance(t, int) or not 0 <= t < vocab_size), None)
        if bad is not None:
            raise ValueError(f"request {i}: prompt_ids[{bad}] = {ids[bad]!r} is not a token id of this model (0..{vocab_size - 1})")


class TransformersEngine(ChatEngine):
    """A causal LM and its tokenizer, served in batches under a token budget, with prefix reuse.

    `weights_path` (the checkpoint folder) lets the fingerprint digest the weight files instead
    of the state dict. `live_weights=True` declares weights that change in place (training):
    the response cache is then refused. `kv_cache_mb` is the prefix store's budget in MiB. The
    model runs in eval mode while it generates and gets its own mode back afterwards, so a
    trainer can share it.
    """

    engine_id = "transformers"

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: Any,
        name: str,
        *,
        max_batch_tokens: int = 262_144,
        max_batch_size: int = 256,
        kv_cache_mb: float = 1024,
        prefill_chunk_tokens: int = 2048,
        cache: ResponseCache | None = None,
        weights_path: str | Path | None = None,
        live_weights: bool = False,
        idle_threads: IdleThreads | None = None,
    ) -> None:
        if live_weights and cache is not None:
            raise ValueError(f"model {name!r}: an engine whose weights change in place (live_weights) cannot use the response cache")
        super().__init__(cache)
        self.hf_model = model
        self.tokenizer = tokenizer
        self.idle_threads = idle_threads
        """`torch_threads: idle`: the thread count read again before each generation pass; None keeps it."""
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = name
        self.max_batch_tokens = max_batch_tokens
        self.max_batch_size = max_batch_size
        self.weights_path = Path(weights_path) if weights_path is not None else None
        self.live_weights = live_weights
        self.eos_ids = self._eos_ids()
        self.vocab_size = model.get_output_embeddings().weight.shape[0]
        self.kv_store = PrefixKVStore(int(kv_cache_mb * 2**20)) if kv_cache_mb > 0 and reuse_supported(model) else None
        self.grammars = GrammarCompiler(tokenizer, self.vocab_size, self.eos_ids)
        self._decoder = Decoder(
            model, tokenizer, self.eos_ids, self.grammars, self.kv_store,
            max_batch_tokens=max_batch_tokens, max_batch_size=max_batch_size, prefill_chunk_tokens=prefill_chunk_tokens,
        )
        self._lock = threading.Lock()
        self._weights_version = self._loaded_version = self._parameter_versions()
        self._fingerprint: tuple[int, str] | None = None

    @property
    def kv_store_positions(self) -> int:
        """Token positions the prefix store holds (0 without a store)."""
        return self.kv_store.budget_bytes // kv_position_bytes(self.hf_model) if self.kv_store is not None else 0

    def __repr__(self) -> str:
        cache = "off (weights change in place)" if self.live_weights else repr(self.cache)
        return f"TransformersEngine(model={self.model!r}, device={self.device}, kv_store={self.kv_store!r}, cache={cache})"

    def _eos_ids(self) -> list[int]:
        """End-of-turn ids from the model's generation config and the tokenizer."""
        configured = self.hf_model.generation_config.eos_token_id
        ids = set(configured if isinstance(configured, list) else [configured]) | {self.tokenizer.eos_token_id}
        return sorted(i for i in ids if i is not None)

    def _parameter_versions(self) -> int:
        """Sum of the parameters' in-place version counters: it changes whenever a weight is modified."""
        return sum(p._version for p in self.hf_model.parameters())

    @property
    def device(self) -> torch.device:
        """Where the model's weights live."""
        return self.hf_model.device

    def render(self, conversation: Conversation, tools: list[ToolSchema] | None = None) -> str:
        """The prompt text for one conversation, ending with the assistant generation prompt."""
        if tools and not template_supports_tools(self.tokenizer.chat_template):
            raise ValueError(f"model {self.model!r}: its chat template ignores tools; give it a template that renders them")
        return self.tokenizer.apply_chat_template(
            for_template(conversation), tools=tools or None, add_generation_prompt=True, tokenize=False
        )

    def render_ids(self, conversation: Conversation, tools: list[ToolSchema] | None = None) -> list[int]:
        """The prompt token ids for one conversation (`render`, tokenised without extra special tokens)."""
        return self.tokenizer(self.render(conversation, tools), add_special_tokens=False)["input_ids"]

    def fingerprint(self) -> str:
        """16 hex digits over the weights, dtype, tokenizer and chat template.

        The weights are named by their files while they are as loaded from `weights_path`, by
        the state dict otherwise (no path, live weights, or parameters modified since loading).
        """
        version = self._parameter_versions()
        if self._fingerprint is None or self._fingerprint[0] != version:
            as_loaded = self.weights_path is not None and not self.live_weights and version == self._loaded_version
            weights = folder_digest(self.weights_path) if as_loaded else state_dict_digest(self.hf_model)
            payload = [self.engine_id, weights, str(self.hf_model.dtype), tokenizer_digest(self.tokenizer)]
            self._fingerprint = (version, hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16])
        return self._fingerprint[1]

    def decode_totals(self) -> DecodeTotals:
        """A copy of the decoder's running prefill/decode times and token counts."""
        with self._lock:
            return replace(self._decoder.totals)

    def clear_kv_cache(self) -> None:
        """Drop every stored prefix (call after a weight update; in-place updates are also detected)."""
        with self._lock:
            if self.kv_store is not None:
                self.kv_store.clear()

    def release_memory(self) -> None:
        """The prefix store emptied (`clear_kv_cache`): up to `kv_cache_mb` freed."""
        self.clear_kv_cache()

    def generate_tokens(self, requests: list[TokenRequest]) -> list[TokenResult]:
        """One `TokenResult` per request, in order; counted in `usage` (never cached)."""
        validate_token_requests(requests, self.vocab_size)
        start = time.perf_counter()
        results = self._run_tokens(requests)
        self.usage.add(results, time.perf_counter() - start)
        return results

    def _run_tokens(self, requests: list[TokenRequest]) -> list[TokenResult]:
        if not requests:
            return []
        with self._lock:
            version = self._parameter_versions()
            if version != self._weights_version and self.kv_store is not None:
                self.kv_store.clear()
            self._weights_version = version
            if self.idle_threads is not None:
                self.idle_threads.refresh()
            training = self.hf_model.training
            self.hf_model.eval()
            try:
                return self._decoder.run(requests)
            finally:
                self.hf_model.train(training)

    def _generate_rows(self, rows: list[ChatRow]) -> list[ChatResult]:
        requests = [TokenRequest(self.render_ids(row.conversation, row.tools), row.params) for row in rows]
        return [self.chat_result(result) for result in self._run_tokens(requests)]

    def chat_result(self, result: TokenResult) -> ChatResult:
        """A chat result from a token result: tool calls parsed from the text."""
        calls, failures = parse_tool_calls(result.text)
        return ChatResult(
            text=result.text, tool_calls=calls, parse_failures=failures, prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens, reused_prompt_tokens=result.reused_prompt_tokens,
            latency_s=result.latency_s, finish_reason="tool_calls" if calls else result.finish_reason, model=self.model,
        )


def splits_at_lines(path: str | Path) -> bool:
    """True when the folder's `tokenizer.json` splits text at line ends before its byte-level BPE
    (the tiny family's `market` vocabulary, `llm_backends.tiny`)."""
    file = Path(path) / "tokenizer.json"
    if not file.is_file():
        return False
    steps = json.loads(file.read_text()).get("pre_tokenizer") or {}
    first = (steps.get("pretokenizers") or [{}])[0]
    return first.get("type") == "Split" and first.get("pattern") == {"String": "\n"}


def load_tokenizer(path: str | Path) -> Any:
    """The tokenizer of a local folder. One whose `tokenizer.json` splits at line ends is loaded
    as written: for a Qwen2 config transformers would rebuild it as `Qwen2Tokenizer`, with
    Qwen's own pre-tokenizer in place of the one its merges were trained with."""
    if splits_at_lines(path):
        return PreTrainedTokenizerFast.from_pretrained(path)
    return AutoTokenizer.from_pretrained(path)


def load_pretrained(path: str | Path, device: str = "auto", dtype: str = "auto") -> tuple[PreTrainedModel, Any]:
    """Model and tokenizer (`load_tokenizer`) from a local folder, on `device` in `dtype` (see resolve_*)."""
    target = resolve_device(device)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=resolve_dtype(dtype, target)).to(target)
    return model, load_tokenizer(path)


def transformers_engine(
    path: str,
    name: str | None = None,
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
    """Hydra factory: an engine over a local transformers checkpoint folder.

    `torch_threads` is set before the model loads (None: torch's default; `idle`: the free cores, read again before each generation pass, llm_backends/budget.py); `memory_mb` is split
    into the prefix store and the batch cap (`llm_backends.budget`); `kv_cache_mb` (0: no store)
    or `max_batch_tokens`, when given, replace their share of it.
    """
    use_torch_threads(torch_threads)
    model, tokenizer = load_pretrained(path, device, dtype)
    engine = TransformersEngine(
        model, tokenizer, name or Path(path).name,
        max_batch_tokens=max_batch_tokens or batch_positions(memory_mb, kv_position_bytes(model)),
        max_batch_size=max_batch_size, kv_cache_mb=store_mb(memory_mb) if kv_cache_mb is None else kv_cache_mb,
        cache=open_cache(cache, cache_path), weights_path=path,
        idle_threads=IdleThreads() if torch_threads == IDLE else None,
    )
    engine.knowledge_cutoff = knowledge_cutoff
    return with_microbatching(engine, batch_wait_ms)
