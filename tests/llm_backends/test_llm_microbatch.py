"""Concurrent callers share batches through MicroBatchingEngine (tiny engine, real threads)."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from llm_test_helpers import PRICE_TOOL, conversation

from llm_backends.engine import prepare_rows
from llm_backends.microbatch import MicroBatchingEngine, _Call, with_microbatching
from llm_backends.tiny import train_tokenizer
from llm_backends.transformers_engine import TransformersEngine
from llm_backends.types import SamplingParams, TokenRequest

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


@pytest.mark.slow
def test_calls_with_different_tools_and_parameters_share_one_batch_and_keep_their_own(tiny):
    engine = MicroBatchingEngine(tiny, max_wait_s=0.5)
    calls = [
        (conversation("a"), None, SamplingParams(max_new_tokens=2)),
        (conversation("b"), [PRICE_TOOL], SamplingParams(max_new_tokens=7)),
        (conversation("c"), None, SamplingParams(temperature=1.0, max_new_tokens=5, seed=3)),
    ]
    before = tiny.usage.snapshot().engine_calls
    with ThreadPoolExecutor(3) as pool:
        merged = list(pool.map(lambda call: engine.generate_one(*call), calls))
    assert tiny.usage.snapshot().engine_calls - before < 3
    assert [r.completion_tokens for r in merged[:2]] == [2, 7]
    alone = [tiny.generate_one(*call) for call in calls]
    assert [r.text for r in merged] == [r.text for r in alone]
    assert merged[1].prompt_tokens == alone[1].prompt_tokens > merged[0].prompt_tokens + 50, "tools rendered per row"


def test_concurrent_token_calls_are_merged_too(tiny):
    engine = MicroBatchingEngine(tiny, max_wait_s=0.3)
    requests = [TokenRequest(tiny.render_ids(conversation(f"q{i}")), SamplingParams(max_new_tokens=4)) for i in range(4)]
    before = tiny.usage.snapshot().engine_calls
    with ThreadPoolExecutor(4) as pool:
        merged = list(pool.map(lambda r: engine.generate_tokens([r])[0], requests))
    assert tiny.usage.snapshot().engine_calls - before < 4
    assert [r.completion_ids for r in merged] == [r.completion_ids for r in tiny.generate_tokens(requests)]


def test_errors_reach_only_the_caller_that_caused_them(tiny):
    tokenizer = train_tokenizer(300)
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    engine = MicroBatchingEngine(TransformersEngine(tiny.hf_model, tokenizer, "no-tools"), max_wait_s=0.3)
    with ThreadPoolExecutor(2) as pool:
        bad = pool.submit(engine.generate_one, conversation("x"), [PRICE_TOOL])
        good = pool.submit(engine.generate_one, conversation("x"), None, SamplingParams(max_new_tokens=1))
    with pytest.raises(ValueError, match="ignores tools"):
        bad.result()
    assert good.result().completion_tokens == 1


def test_wrapping_is_optional(tiny):
    assert with_microbatching(tiny, 0) is tiny
    wrapped = with_microbatching(tiny, 5)
    assert isinstance(wrapped, MicroBatchingEngine) and wrapped.max_wait_s == 0.005
    assert wrapped.tokenizer is tiny.tokenizer and wrapped.model == tiny.model


def test_close_serves_queued_calls_then_ends_the_thread(tiny):
    engine = MicroBatchingEngine(tiny, max_wait_s=0.5)
    queued = _Call(prepare_rows([conversation("a")], None, PARAMS), tokens=False)
    engine._queue.put(queued)
    engine.close()
    assert not engine._thread.is_alive()
    assert [r.completion_tokens for r in queued.future.result(timeout=0)] == [6]


def test_unserialisable_tools_fail_their_caller_and_the_wrapper_keeps_serving(tiny):
    engine = MicroBatchingEngine(tiny, max_wait_s=0.0)
    with pytest.raises(ValueError, match="conversation 0: messages and tools must be JSON-serialisable"):
        engine.generate_one(conversation("x"), [{"type": "function", "function": {"name": "f", "default": object()}}])
    assert engine.generate_one(conversation("x"), None, SamplingParams(max_new_tokens=1)).completion_tokens == 1
