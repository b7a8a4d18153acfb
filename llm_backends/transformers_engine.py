"""Local generation with Hugging Face transformers: batched, left-padded, chat-templated.

Prompts are rendered with the tokenizer's chat template (tool schemas passed as `tools`),
grouped into batches under a KV-cache token budget (see `batching`), left-padded so every row
ends at the generation prompt, and decoded with one `model.generate` call per batch. On GPU
the model runs in bfloat16 by default, on CPU in float32.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, PreTrainedModel, StoppingCriteriaList

from llm_backends.batching import plan_batches
from llm_backends.cache import ResponseCache, open_cache
from llm_backends.chat_template import template_supports_tools
from llm_backends.engine import ChatEngine
from llm_backends.messages import for_template
from llm_backends.microbatch import with_microbatching
from llm_backends.stopping import GeneratedStopStrings
from llm_backends.tool_calls import parse_tool_calls
from llm_backends.types import ChatResult, Conversation, SamplingParams, ToolSchema


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


def truncate_at_stop(text: str, stop: tuple[str, ...]) -> tuple[str, bool]:
    """`text` cut before the earliest stop string, and whether one was found."""
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


def completion_length(row: list[int], eos_ids: set[int], pad_id: int | None) -> int:
    """Generated tokens of one row: up to and including its first end-of-sequence token, or up to
    (excluding) the first pad token that fills a row stopped by a stop string; all if neither.
    When pad and end-of-sequence share an id, the token counts as end-of-sequence."""
    for i, token in enumerate(row):
        if token in eos_ids:
            return i + 1
        if token == pad_id:
            return i
    return len(row)


def generation_config(params: SamplingParams, pad_id: int, eos_ids: list[int]) -> GenerationConfig:
    """A full GenerationConfig from our parameters alone (model defaults such as top_k are not merged)."""
    sampling: dict[str, Any] = (
        {"do_sample": False}
        if params.greedy
        else {"do_sample": True, "temperature": params.temperature, "top_p": params.top_p, "top_k": 0}
    )
    return GenerationConfig(max_new_tokens=params.max_new_tokens, pad_token_id=pad_id, eos_token_id=eos_ids, **sampling)


class TransformersEngine(ChatEngine):
    """A causal LM and its tokenizer, served in batches under a token budget."""

    engine_id = "transformers"

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: Any,
        name: str,
        *,
        max_batch_tokens: int = 262_144,
        max_batch_size: int = 256,
        cache: ResponseCache | None = None,
    ) -> None:
        super().__init__(cache)
        self.hf_model = model.eval()
        self.tokenizer = tokenizer
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = name
        self.max_batch_tokens = max_batch_tokens
        self.max_batch_size = max_batch_size
        self.eos_ids = self._eos_ids()
        self._lock = threading.Lock()

    def _eos_ids(self) -> list[int]:
        """End-of-turn ids from the model's generation config and the tokenizer."""
        configured = self.hf_model.generation_config.eos_token_id
        ids = set(configured if isinstance(configured, list) else [configured]) | {self.tokenizer.eos_token_id}
        return sorted(i for i in ids if i is not None)

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

    def _generate(
        self,
        conversations: list[Conversation],
        tools: list[ToolSchema] | None,
        params: SamplingParams,
    ) -> list[ChatResult]:
        prompts = [self.render(c, tools) for c in conversations]
        encoded = self.tokenizer(prompts, add_special_tokens=False)["input_ids"]
        batches = plan_batches([len(ids) for ids in encoded], params.max_new_tokens, self.max_batch_tokens, self.max_batch_size)
        results: list[ChatResult | None] = [None] * len(prompts)
        with self._lock:
            if params.seed is not None:
                torch.manual_seed(params.seed)
            for batch in batches:
                for i, result in zip(batch, self._generate_batch([encoded[i] for i in batch], params)):
                    results[i] = result
        return [r for r in results if r is not None]

    def _generate_batch(self, input_ids: list[list[int]], params: SamplingParams) -> list[ChatResult]:
        """One left-padded `model.generate` call; latency is the batch's wall time."""
        start = time.perf_counter()
        enc = self.tokenizer.pad({"input_ids": input_ids}, return_tensors="pt").to(self.device)
        prompt_length = enc["input_ids"].shape[1]
        stops = [GeneratedStopStrings(self.tokenizer, params.stop, prompt_length)] if params.stop else []
        config = generation_config(params, self.tokenizer.pad_token_id, self.eos_ids)
        with torch.inference_mode():
            out = self.hf_model.generate(**enc, generation_config=config, stopping_criteria=StoppingCriteriaList(stops))
        generated = out[:, prompt_length:].tolist()
        eos = set(self.eos_ids)
        lengths = [completion_length(row, eos, self.tokenizer.pad_token_id) for row in generated]
        texts = self.tokenizer.batch_decode([row[:n] for row, n in zip(generated, lengths)], skip_special_tokens=True)
        latency = time.perf_counter() - start
        return [
            self._result(text, n, row, len(ids), params, latency)
            for text, n, row, ids in zip(texts, lengths, generated, input_ids)
        ]

    def _result(self, text: str, n: int, row: list[int], prompt_tokens: int, params: SamplingParams, latency: float) -> ChatResult:
        """Assemble one result: stop-string truncation, tool-call parsing, finish reason."""
        text, stopped = truncate_at_stop(text, params.stop)
        calls, failures = parse_tool_calls(text)
        ended = stopped or (n > 0 and row[n - 1] in self.eos_ids)
        finish = "tool_calls" if calls else ("stop" if ended or n < params.max_new_tokens else "length")
        return ChatResult(
            text=text, tool_calls=calls, parse_failures=failures, prompt_tokens=prompt_tokens,
            completion_tokens=n, latency_s=latency, finish_reason=finish, model=self.model,
        )


def load_pretrained(path: str | Path, device: str = "auto", dtype: str = "auto") -> tuple[PreTrainedModel, Any]:
    """Model and tokenizer from a local folder, on `device` in `dtype` (see resolve_*)."""
    target = resolve_device(device)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=resolve_dtype(dtype, target)).to(target)
    return model, AutoTokenizer.from_pretrained(path)


def transformers_engine(
    path: str,
    name: str | None = None,
    device: str = "auto",
    dtype: str = "auto",
    max_batch_tokens: int = 262_144,
    max_batch_size: int = 256,
    cache: bool = True,
    cache_path: str | None = None,
    batch_wait_ms: float = 0.0,
) -> ChatEngine:
    """Hydra factory: an engine over a local transformers checkpoint folder."""
    model, tokenizer = load_pretrained(path, device, dtype)
    engine = TransformersEngine(
        model, tokenizer, name or Path(path).name, max_batch_tokens=max_batch_tokens,
        max_batch_size=max_batch_size, cache=open_cache(cache, cache_path),
    )
    return with_microbatching(engine, batch_wait_ms)
