"""Prefix and continuation reuse: the store itself, and engines with it against cold prefills."""

import pytest
import torch
from llm_test_helpers import PRICE_TOOL, conversation

from llm_backends import smollm2
from llm_backends.kv_store import PrefixKVStore, block_digests
from llm_backends.microbatch import MicroBatchingEngine
from llm_backends.tiny import tiny_engine
from llm_backends.transformers_engine import TransformersEngine
from llm_backends.types import SamplingParams, TokenRequest

GREEDY = SamplingParams(max_new_tokens=8)
SYSTEM = "You are a trading analyst. " + " ".join(f"Rule {i}: read the data before you decide." for i in range(12))


def fake_kv(start: int, end: int) -> torch.Tensor:
    """Keys and values whose every entry is its token position: [layers 1, 2, heads 1, end - start, dim 2]."""
    return torch.arange(start, end, dtype=torch.float32).repeat(2, 2, 1).permute(1, 2, 0).reshape(1, 2, 1, end - start, 2).contiguous()


def test_store_finds_the_longest_stored_prefix_in_full_blocks():
    store = PrefixKVStore(budget_bytes=10**6, block_size=4)
    assert store.insert(list(range(10)), fake_kv) == 2
    assert store.insert(list(range(10)), fake_kv) == 0, "blocks are stored once"
    blocks = store.lookup(list(range(9)) + [99, 98, 97])
    assert len(blocks) == 2 and torch.equal(torch.cat(blocks, dim=3)[0, 0, 0, :, 0], torch.arange(8.0))
    assert store.lookup([5, 1, 2, 3]) == []
    assert len(block_digests(list(range(10)), 4)) == 2
    assert block_digests([1, 2, 3, 4], 4) != block_digests([1, 2, 3, 5], 4)


def test_store_asks_only_for_the_missing_span():
    store = PrefixKVStore(budget_bytes=10**6, block_size=4)
    store.insert(list(range(8)), fake_kv)
    asked = []
    store.insert(list(range(16)), lambda s, e: asked.append((s, e)) or fake_kv(s, e))
    assert asked == [(8, 16)] and len(store) == 4


def test_store_evicts_old_tails_before_the_prefixes_they_share():
    block_bytes = fake_kv(0, 4).nbytes
    store = PrefixKVStore(budget_bytes=5 * block_bytes, block_size=4)
    shared = list(range(8))
    store.insert(shared + [100, 101, 102, 103, 104, 105, 106, 107], fake_kv)
    store.insert(shared + [200, 201, 202, 203], fake_kv)
    assert len(store) == 5 and store.bytes_used == 5 * block_bytes
    store.insert(shared + [300, 301, 302, 303, 304, 305, 306, 307], fake_kv)
    assert store.bytes_used <= store.budget_bytes
    assert len(store.lookup(shared + [300, 301, 302, 303, 304, 305, 306, 307])) == 4
    assert len(store.lookup(shared + [200, 201, 202, 203])) == 3
    assert len(store.lookup(shared + [100, 101, 102, 103, 104, 105, 106, 107])) == 2, "the oldest tail went, deepest block first; the shared prefix stayed"


def test_store_stores_what_fits_and_clears():
    block_bytes = fake_kv(0, 4).nbytes
    store = PrefixKVStore(budget_bytes=2 * block_bytes, block_size=4)
    assert store.insert(list(range(16)), fake_kv) == 2
    assert len(store.lookup(list(range(16)))) == 2
    store.clear()
    assert len(store) == 0 and store.bytes_used == 0 and store.lookup(list(range(16))) == []


def test_engine_without_store_never_reuses(tiny_root):
    engine = tiny_engine(kv_cache_mb=0)
    assert engine.kv_store is None
    prompt = engine.render_ids(conversation(SYSTEM))
    results = engine.generate_tokens([TokenRequest(prompt, GREEDY)] * 2)
    assert [r.reused_prompt_tokens for r in results] == [0, 0]


def requests_for(engine: TransformersEngine, turns: list[list[int]]) -> list[TokenRequest]:
    return [TokenRequest(ids, GREEDY, return_logprobs=True) for ids in turns]


def assert_same_as_cold(engine: TransformersEngine, cold: TransformersEngine, prompts: list[list[int]]) -> list[int]:
    """Greedy ids equal and log-probabilities within float tolerance; returns the reused counts."""
    warm = engine.generate_tokens(requests_for(engine, prompts))
    reference = cold.generate_tokens(requests_for(cold, prompts))
    for got, want in zip(warm, reference):
        assert got.completion_ids == want.completion_ids
        assert torch.allclose(torch.tensor(got.logprobs), torch.tensor(want.logprobs), atol=1e-4)
    assert [r.reused_prompt_tokens for r in reference] == [0] * len(prompts)
    return [r.reused_prompt_tokens for r in warm]


def test_batches_mixing_cached_and_uncached_rows_of_different_lengths_match_cold_prefills(tiny_root):
    engine, cold = tiny_engine(), tiny_engine(kv_cache_mb=0)
    system = [{"role": "system", "content": SYSTEM}]
    first = engine.render_ids(system + conversation("What about NVDA?"), [PRICE_TOOL])
    turn = engine.generate_tokens([TokenRequest(first, GREEDY)])[0]
    continued = first + turn.completion_ids + engine.tokenizer("\nmore data follows here", add_special_tokens=False)["input_ids"]
    prompts = [
        continued,
        engine.render_ids(system + conversation("And MSFT, over the last quarter?"), [PRICE_TOOL]),
        engine.render_ids(conversation("unrelated")),
        engine.render_ids(system + conversation("TSLA?")),
    ]
    reused = assert_same_as_cold(engine, cold, prompts)
    assert reused[0] >= (len(first) + turn.completion_tokens - 1) // 16 * 16
    assert reused[1] >= len(first) // 2
    assert reused[2] == 0
    assert reused[3] > 0, "the system prompt without tools is still a shared prefix"


def test_a_prefix_shared_inside_one_call_is_prefilled_once(tiny_root):
    engine = tiny_engine()
    system = [{"role": "system", "content": SYSTEM}]
    prompts = [engine.render_ids(system + conversation(f"ticker {i}?"), [PRICE_TOOL]) for i in range(4)]
    results = engine.generate_tokens([TokenRequest(p, GREEDY) for p in prompts])
    assert all(r.reused_prompt_tokens > 0.8 * r.prompt_tokens for r in results)


def test_identical_prompts_reuse_all_but_their_last_token(tiny_root):
    engine = tiny_engine()
    prompt = engine.render_ids(conversation(SYSTEM))
    first, second = engine.generate_tokens([TokenRequest(prompt, GREEDY)] * 2)
    assert first.completion_ids == second.completion_ids
    assert first.reused_prompt_tokens == second.reused_prompt_tokens == len(prompt) - 1


def test_budget_eviction_keeps_the_store_under_its_budget(tiny_root):
    engine = tiny_engine(kv_cache_mb=0.3)  # 512 bytes a token: one prompt of 435 tokens and a bit
    prompts = [engine.render_ids(conversation(f"{i} " + SYSTEM)) for i in range(6)]
    for prompt in prompts:
        engine.generate_tokens([TokenRequest(prompt, GREEDY)])
        assert 0 < engine.kv_store.bytes_used <= engine.kv_store.budget_bytes
    last = len(prompts[-1])
    assert engine.generate_tokens([TokenRequest(prompts[-1], GREEDY)])[0].reused_prompt_tokens == min(last // 16 * 16, last - 1)
    common = next(i for i, (a, b) in enumerate(zip(prompts[0], prompts[1])) if a != b)
    assert engine.generate_tokens([TokenRequest(prompts[0], GREEDY)])[0].reused_prompt_tokens == common // 16 * 16, "only the shared start survived"


def test_clear_kv_cache_and_weight_changes_drop_every_prefix(tiny_root):
    engine = tiny_engine()
    prompt = engine.render_ids(conversation(SYSTEM))
    engine.generate_tokens([TokenRequest(prompt, GREEDY)])
    assert engine.generate_tokens([TokenRequest(prompt, GREEDY)])[0].reused_prompt_tokens > 0
    engine.clear_kv_cache()
    assert len(engine.kv_store) == 0
    assert engine.generate_tokens([TokenRequest(prompt, GREEDY)])[0].reused_prompt_tokens == 0
    with torch.no_grad():
        engine.hf_model.lm_head.weight.mul_(1.0)
    assert engine.generate_tokens([TokenRequest(prompt, GREEDY)])[0].reused_prompt_tokens == 0, "an in-place update is detected"


def test_release_memory_empties_the_store_through_a_micro_batching_wrapper_and_answers_stay_the_same(tiny_root):
    engine = tiny_engine()
    wrapped = MicroBatchingEngine(engine)
    prompt = engine.render_ids(conversation(SYSTEM))
    first = engine.generate_tokens([TokenRequest(prompt, GREEDY)])[0]
    assert len(engine.kv_store) > 0
    wrapped.release_memory()
    assert len(engine.kv_store) == 0 and engine.kv_store.bytes_used == 0
    again = engine.generate_tokens([TokenRequest(prompt, GREEDY)])[0]
    assert again.reused_prompt_tokens == 0 and again.completion_ids == first.completion_ids
    wrapped.close()


@pytest.mark.slow
def test_smollm2_reuse_matches_cold_prefill():
    engine = smollm2.smollm2_engine(device="cpu", cache=False)
    cold = TransformersEngine(engine.hf_model, engine.tokenizer, "cold", kv_cache_mb=0)
    system = [{"role": "system", "content": SYSTEM}]
    first = engine.render_ids(system + conversation("Is NVDA a buy?"))
    turn = engine.generate_tokens([TokenRequest(first, GREEDY)])[0]
    prompts = [
        first + turn.completion_ids + engine.render_ids(conversation("Why?"))[-12:],
        engine.render_ids(system + conversation("What does RSI measure?")),
        engine.render_ids(conversation("What is the capital of France?")),
    ]
    reused = assert_same_as_cold(engine, cold, prompts)
    assert reused[0] >= (len(first) + turn.completion_tokens - 1) // 16 * 16 and reused[1] > 100 and reused[2] == 0
