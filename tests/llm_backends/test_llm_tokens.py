"""Token-in/token-out on the tiny model: per-row sampling, log-probabilities, continuation, hooks."""

import threading

import pytest
import torch
from llm_test_helpers import PRICE_TOOL, conversation

from llm_backends.types import SamplingParams, TokenRequest

SAMPLED = SamplingParams(temperature=1.0, max_new_tokens=12)


def test_a_rows_sample_is_the_same_alone_and_inside_a_batch_of_eight(tiny):
    prompts = [conversation(f"Question number {i} about NVDA?") for i in range(8)]
    params = [SAMPLED.model_copy(update={"seed": 100 + i}) for i in range(8)]
    batched = tiny.generate(prompts, params=params)
    alone = [tiny.generate_one(p, params=q) for p, q in zip(prompts, params)]
    assert [r.text for r in batched] == [r.text for r in alone]
    assert len({r.text for r in batched}) > 1
    requests = [TokenRequest(tiny.render_ids(p), q) for p, q in zip(prompts, params)]
    assert tiny.generate_tokens(requests[3:4])[0].completion_ids == tiny.generate_tokens(requests)[3].completion_ids


def test_rows_with_different_tools_and_parameters_share_one_call(tiny):
    prompts = [conversation("prices?"), conversation("news?"), conversation("prices?")]
    tools = [[PRICE_TOOL], None, None]
    params = [SamplingParams(max_new_tokens=3), SAMPLED.model_copy(update={"seed": 5}), SamplingParams(max_new_tokens=6)]
    before = tiny.usage.snapshot().engine_calls
    mixed = tiny.generate(prompts, tools, params)
    assert tiny.usage.snapshot().engine_calls == before + 1
    alone = [tiny.generate_one(c, t, p) for c, t, p in zip(prompts, tools, params)]
    assert [r.text for r in mixed] == [r.text for r in alone]
    assert [r.completion_tokens for r in mixed] == [3, 12, 6]
    assert mixed[0].prompt_tokens > mixed[2].prompt_tokens


def test_copies_of_one_seeded_request_are_different_reproducible_samples(tiny):
    params = SAMPLED.model_copy(update={"seed": 9})
    first = [r.text for r in tiny.generate([conversation("hi")] * 4, params=params)]
    assert len(set(first)) == 4
    assert first == [r.text for r in tiny.generate([conversation("hi")] * 4, params=params)]
    assert first[0] == tiny.generate_one(conversation("hi"), params=params).text


def test_greedy_decoding_ignores_the_seed(tiny):
    texts = {tiny.generate_one(conversation("hi"), params=SamplingParams(max_new_tokens=8, seed=s)).text for s in (None, 1, 2)}
    assert len(texts) == 1


def test_token_results_carry_the_sampled_ids_and_their_logprobs(tiny):
    prompt = tiny.render_ids(conversation("Should I buy NVDA?"))
    result = tiny.generate_tokens([TokenRequest(prompt, SamplingParams(max_new_tokens=10), return_logprobs=True)])[0]
    assert result.prompt_tokens == len(prompt) and result.completion_tokens == len(result.completion_ids) == 10
    assert result.text == tiny.tokenizer.decode(result.completion_ids, skip_special_tokens=True)
    with torch.no_grad():
        logits = tiny.hf_model(torch.tensor([prompt + result.completion_ids])).logits[0].float()
    teacher = torch.log_softmax(logits[len(prompt) - 1:-1], dim=-1)
    expected = teacher.gather(1, torch.tensor(result.completion_ids)[:, None])[:, 0]
    assert torch.allclose(torch.tensor(result.logprobs), expected, atol=1e-4)
    assert result.completion_ids == teacher.argmax(-1).tolist(), "greedy ids are the argmax under teacher forcing"


def test_sampled_logprobs_are_at_the_requested_temperature(tiny):
    prompt = tiny.render_ids(conversation("hi"))
    params = SamplingParams(temperature=0.7, max_new_tokens=6, seed=1)
    result = tiny.generate_tokens([TokenRequest(prompt, params, return_logprobs=True)])[0]
    with torch.no_grad():
        logits = tiny.hf_model(torch.tensor([prompt + result.completion_ids])).logits[0].float()
    scaled = torch.log_softmax(logits[len(prompt) - 1:-1] / 0.7, dim=-1)
    expected = scaled.gather(1, torch.tensor(result.completion_ids)[:, None])[:, 0]
    assert torch.allclose(torch.tensor(result.logprobs), expected, atol=1e-4)
    assert tiny.generate_tokens([TokenRequest(prompt, params)])[0].logprobs is None


def test_a_continued_episode_is_fed_exactly_the_sampled_ids(tiny):
    prompt = tiny.render_ids(conversation("Call a tool."), [PRICE_TOOL])
    turn = tiny.generate_tokens([TokenRequest(prompt, SAMPLED.model_copy(update={"seed": 4}))])[0]
    fragment = tiny.tokenizer('<|im_end|>\n<|im_start|>user\n<tool_response>\n{"close": 1.0}\n</tool_response><|im_end|>\n<|im_start|>assistant\n', add_special_tokens=False)["input_ids"]
    history = prompt + turn.completion_ids + fragment
    assert history[len(prompt):len(prompt) + turn.completion_tokens] == turn.completion_ids
    follow = tiny.generate_tokens([TokenRequest(history, SamplingParams(max_new_tokens=8), return_logprobs=True)])[0]
    assert follow.reused_prompt_tokens >= (len(prompt) + turn.completion_tokens - 1) // 16 * 16, "the previous turn's keys and values were kept"
    with torch.no_grad():
        logits = tiny.hf_model(torch.tensor([history + follow.completion_ids])).logits[0].float()
    assert follow.completion_ids == logits[len(history) - 1:-1].argmax(-1).tolist()


def test_bad_token_requests_name_the_request_and_position(tiny):
    with pytest.raises(ValueError, match=r"request 1: prompt_ids\[2\] = 99999 is not a token id of this model \(0..513\)"):
        tiny.generate_tokens([TokenRequest([1, 2]), TokenRequest([1, 2, 99999])])
    with pytest.raises(ValueError, match="request 0: prompt_ids must be a non-empty list"):
        tiny.generate_tokens([TokenRequest([])])
    assert tiny.generate_tokens([]) == []


def test_cancel_ends_a_row_and_the_callback_sees_every_token(tiny):
    prompts = [tiny.render_ids(conversation(t)) for t in ("a", "b")]
    cancel = threading.Event()
    seen: list[int] = []

    def on_tokens(ids):
        seen.extend(ids)
        if len(seen) == 3:
            cancel.set()

    long = SamplingParams(max_new_tokens=30)
    results = tiny.generate_tokens([
        TokenRequest(prompts[0], long, cancel=cancel, on_tokens=on_tokens),
        TokenRequest(prompts[1], long),
    ])
    assert results[0].finish_reason == "cancelled" and results[0].completion_ids == seen and len(seen) == 3
    assert results[1].finish_reason == "length" and results[1].completion_tokens == 30


def test_a_failing_callback_cancels_only_its_own_row(tiny):
    def broken(ids):
        raise ConnectionResetError("client went away")

    prompt = tiny.render_ids(conversation("a"))
    results = tiny.generate_tokens([TokenRequest(prompt, SamplingParams(max_new_tokens=9), on_tokens=broken), TokenRequest(prompt, SamplingParams(max_new_tokens=9))])
    assert results[0].finish_reason == "cancelled" and results[0].completion_tokens == 1
    assert results[1].completion_tokens == 9


def test_token_calls_are_counted(tiny):
    before = tiny.usage.snapshot()
    results = tiny.generate_tokens([TokenRequest(tiny.render_ids(conversation("x")), SamplingParams(max_new_tokens=4))])
    after = tiny.usage.snapshot()
    assert after.calls - before.calls == 1 and after.completion_tokens - before.completion_tokens == 4
    assert after.prompt_tokens - before.prompt_tokens == results[0].prompt_tokens


def test_a_training_model_generates_in_eval_mode_and_gets_its_mode_back(tiny):
    request = TokenRequest(tiny.render_ids(conversation("x")), SamplingParams(max_new_tokens=4))
    expected = tiny.generate_tokens([request])[0].completion_ids
    tiny.hf_model.train()
    try:
        assert tiny.generate_tokens([request])[0].completion_ids == expected
        assert tiny.hf_model.training
    finally:
        tiny.hf_model.eval()
