"""vLLM's offline engine, an optional extra: `pip install 'tradeduel[vllm]'` on a CUDA machine.

vLLM is imported only when an engine is built, so nothing else needs it installed. All
conversations of a call go to `LLM.chat` at once and vLLM schedules them (continuous
batching, paged KV cache); tool calls are parsed from the text like the transformers engine.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

from llm_backends.cache import ResponseCache, open_cache
from llm_backends.engine import ChatEngine
from llm_backends.messages import for_template
from llm_backends.tool_calls import parse_tool_calls
from llm_backends.types import ChatResult, Conversation, SamplingParams, ToolSchema

INSTALL_HINT = "vLLM is not installed; on a CUDA machine run: pip install 'tradeduel[vllm]'"


def import_vllm() -> Any:
    """The `vllm` module, or ImportError with the install command."""
    try:
        return importlib.import_module("vllm")
    except ImportError as err:
        raise ImportError(f"{INSTALL_HINT} ({err})") from None


class VLLMEngine(ChatEngine):
    """An in-process vLLM engine over one model."""

    engine_id = "vllm"

    def __init__(self, model: str, cache: ResponseCache | None = None, **engine_args: Any) -> None:
        super().__init__(cache)
        self._vllm = import_vllm()
        self.model = model
        self.llm = self._vllm.LLM(model=model, **engine_args)

    def _sampling(self, params: SamplingParams) -> Any:
        return self._vllm.SamplingParams(
            temperature=params.temperature, top_p=params.top_p, max_tokens=params.max_new_tokens,
            stop=list(params.stop) or None, seed=params.seed,
        )

    def _generate(
        self,
        conversations: list[Conversation],
        tools: list[ToolSchema] | None,
        params: SamplingParams,
    ) -> list[ChatResult]:
        start = time.perf_counter()
        outputs = self.llm.chat(
            [for_template(c) for c in conversations], self._sampling(params), tools=tools or None, use_tqdm=False
        )
        latency = time.perf_counter() - start
        results = []
        for output in outputs:
            completion = output.outputs[0]
            calls, failures = parse_tool_calls(completion.text)
            results.append(ChatResult(
                text=completion.text, tool_calls=calls, parse_failures=failures,
                prompt_tokens=len(output.prompt_token_ids or []), completion_tokens=len(completion.token_ids),
                latency_s=latency, finish_reason="tool_calls" if calls else (completion.finish_reason or "stop"),
                model=self.model,
            ))
        return results


def vllm_engine(model: str, cache: bool = True, cache_path: str | None = None, **engine_args: Any) -> VLLMEngine:
    """Hydra factory: vLLM offline engine; extra keys (tensor_parallel_size, dtype, ...) go to `vllm.LLM`."""
    import_vllm()
    return VLLMEngine(model, cache=open_cache(cache, cache_path), **engine_args)
