"""vLLM's offline engine, an optional extra: `pip install 'tradeduel[vllm]'` on a CUDA machine.

vLLM is imported only when an engine is built, so nothing else needs it installed. The
conversations of a call that share tools go to `LLM.chat` at once, each with its own sampling
parameters, and vLLM schedules them (continuous batching, paged KV cache, automatic prefix
caching); tool calls are parsed from the text like the transformers engine. A request's
`grammar` (llguidance's Lark dialect) goes to vLLM's structured outputs
(`StructuredOutputsParams(grammar=...)`, vLLM >= 0.12); build the engine with
`structured_outputs_config: {backend: guidance}` so that vLLM compiles it with llguidance too.
This path has not been run here (no vLLM on the development machines).
"""

from __future__ import annotations

import importlib
import json
import time
from typing import Any

from llm_backends.cache import ResponseCache, open_cache
from llm_backends.engine import ChatEngine, ChatRow, run_grouped
from llm_backends.messages import for_template
from llm_backends.tool_calls import parse_tool_calls
from llm_backends.types import ChatResult, SamplingParams

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
        structured = None
        if params.grammar is not None:
            structured = importlib.import_module("vllm.sampling_params").StructuredOutputsParams(grammar=params.grammar)
        return self._vllm.SamplingParams(
            temperature=params.temperature, top_p=params.top_p, max_tokens=params.max_new_tokens,
            stop=list(params.stop) or None, seed=params.seed, structured_outputs=structured,
        )

    def _generate_rows(self, rows: list[ChatRow]) -> list[ChatResult]:
        """One `LLM.chat` call per tool set (vLLM takes one tool list per call), parameters per row."""
        return run_grouped(rows, lambda row: json.dumps(row.tools or [], sort_keys=True), self._chat)

    def _chat(self, rows: list[ChatRow]) -> list[ChatResult]:
        start = time.perf_counter()
        outputs = self.llm.chat(
            [for_template(r.conversation) for r in rows], [self._sampling(r.params) for r in rows],
            tools=rows[0].tools or None, use_tqdm=False,
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


def vllm_engine(model: str, cache: bool = True, cache_path: str | None = None, knowledge_cutoff: str | None = None,
                **engine_args: Any) -> VLLMEngine:
    """Hydra factory: vLLM offline engine; extra keys (tensor_parallel_size, dtype, ...) go to `vllm.LLM`."""
    import_vllm()
    engine = VLLMEngine(model, cache=open_cache(cache, cache_path), **engine_args)
    engine.knowledge_cutoff = knowledge_cutoff
    return engine
