"""Concurrent callers share batches through MicroBatchingEngine (tiny engine, real threads)."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from llm_test_helpers import PRICE_TOOL, conversation

from llm_backends.microbatch import MicroBatchingEngine, _Request, group_key, with_microbatching
from llm_backends.tiny import train_tokenizer
from llm_backends.transformers_engine import TransformersEngine
from llm_backends.types import SamplingParams

PARAMS = SamplingParams(max_new_tokens=6)


def test_concurrent_calls_are_merged_and_answered_like_direct_calls(tiny):
    engine = MicroBatchingEngine(tiny, max_wait_s=0.3)
    prompts = [conversation(f"question {i}") for i in range(8)]
    before = tiny.usage.snapshot()
    with ThreadPoolExecutor(8) as pool:
        merged = list(pool.map(lambda c: engine.generate_one(c, [PRICE_TOOL], PARAMS), prompts))
    after = tiny.usage.snapshot()
    assert after.calls - before.calls == 8
    assert after.engine_calls - before.engine_calls < 8
    assert engine.usage.snapshot().calls == 8
    direct = [tiny.generate_one(c, [PRICE_TOOL], PARAMS) for c in prompts]
    assert [r.text for r in merged] == [r.text for r in direct]
    assert [r.prompt_tokens for r in merged] == [r.prompt_tokens for r in direct]


def test_calls_with_different_parameters_are_not_mixed(tiny):
    engine = MicroBatchingEngine(tiny, max_wait_s=0.2)
    with ThreadPoolExecutor(2) as pool:
        short = pool.submit(engine.generate_one, conversation("a"), None, SamplingParams(max_new_tokens=2))
        long = pool.submit(engine.generate_one, conversation("b"), None, SamplingParams(max_new_tokens=7))
    assert short.result().completion_tokens == 2 and long.result().completion_tokens == 7


def test_errors_reach_the_caller(tiny):
    tokenizer = train_tokenizer(300)
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    engine = MicroBatchingEngine(TransformersEngine(tiny.hf_model, tokenizer, "no-tools"), max_wait_s=0.0)
    with pytest.raises(ValueError, match="ignores tools"):
        engine.generate_one(conversation("x"), [PRICE_TOOL])
    assert engine.generate_one(conversation("x"), None, SamplingParams(max_new_tokens=1)).completion_tokens == 1


def test_wrapping_is_optional(tiny):
    assert with_microbatching(tiny, 0) is tiny
    wrapped = with_microbatching(tiny, 5)
    assert isinstance(wrapped, MicroBatchingEngine) and wrapped.max_wait_s == 0.005
    assert wrapped.tokenizer is tiny.tokenizer and wrapped.model == tiny.model


def test_close_serves_queued_calls_then_ends_the_thread(tiny):
    engine = MicroBatchingEngine(tiny, max_wait_s=0.5)
    queued = _Request([conversation("a")], None, PARAMS, group_key(None, PARAMS))
    engine._queue.put(queued)
    engine.close()
    assert not engine._thread.is_alive()
    assert [r.completion_tokens for r in queued.future.result(timeout=0)] == [6]


def test_unserialisable_tools_fail_their_caller_and_the_wrapper_keeps_serving(tiny):
    engine = MicroBatchingEngine(tiny, max_wait_s=0.0)
    with pytest.raises(TypeError, match="not JSON serializable"):
        engine.generate_one(conversation("x"), [{"type": "function", "function": {"name": "f", "default": object()}}])
    assert engine.generate_one(conversation("x"), None, SamplingParams(max_new_tokens=1)).completion_tokens == 1
