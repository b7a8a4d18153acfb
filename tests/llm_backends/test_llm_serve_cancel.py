"""A request can never hold `llm_backends.serve` hostage: a generation is stopped when its client leaves
or the request timeout passes, streamed or not, and the engine is free for the next request at once.

Each case starts a greedy answer to "hello" (it runs to any length without an end-of-turn token)
with HUGE completion tokens, then checks that a short request is answered afterwards and that the
engine's count of completion tokens settles below STOPPED_BELOW (the decode stopped; a generation
running on in the background would not settle, or would settle at HUGE). Counts, not clocks: a
loaded machine decodes fewer tokens before the stop, never more. On a loaded
2-core machine the tiny model decoded about 2,100 tokens between the request and its stop, so the
bound leaves room above that and below HUGE.
"""

import time

import openai
import pytest
from llm_test_helpers import conversation

from llm_backends.serve import start_server

HELLO = conversation("hello")
HUGE = 4000
STOPPED_BELOW = HUGE * 3 // 4


@pytest.fixture(scope="module")
def impatient(tiny):
    """The tiny engine served with a one-second request timeout."""
    with start_server(tiny, request_timeout_s=1.0) as server:
        yield openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0)


def settled_completion_tokens(engine) -> int:
    """The engine's completion-token count once it stops changing (nothing decoding any more)."""
    last = engine.usage.snapshot().completion_tokens
    for _ in range(50):
        time.sleep(0.3)
        now = engine.usage.snapshot().completion_tokens
        if now == last:
            return now
        last = now
    raise AssertionError("the engine kept generating")


def assert_engine_freed(sdk: openai.OpenAI, engine, tokens_before: int) -> None:
    """A short request is answered, and the stopped generation decoded fewer than STOPPED_BELOW tokens."""
    short = sdk.chat.completions.create(model=engine.model, messages=conversation("hi"), max_tokens=2, temperature=0)
    assert short.usage.completion_tokens == 2
    stopped_tokens = settled_completion_tokens(engine) - tokens_before - short.usage.completion_tokens
    assert 0 < stopped_tokens < STOPPED_BELOW, f"the stopped generation decoded {stopped_tokens} tokens"


@pytest.mark.slow
def test_a_timed_out_request_is_a_504_and_its_generation_stops(impatient, tiny):
    before = settled_completion_tokens(tiny)
    with pytest.raises(openai.InternalServerError) as timed_out:
        impatient.chat.completions.create(model=tiny.model, messages=HELLO, max_tokens=HUGE, temperature=0)
    assert timed_out.value.status_code == 504 and timed_out.value.code == "timeout"
    assert "request timeout (1 s); its generation was stopped" in timed_out.value.message
    assert_engine_freed(impatient, tiny, before)


@pytest.mark.slow
def test_a_timed_out_stream_ends_with_an_error_event_and_its_generation_stops(impatient, tiny):
    before = settled_completion_tokens(tiny)
    text = ""
    with pytest.raises(openai.APIError, match="request timeout") as timed_out:
        for chunk in impatient.chat.completions.create(model=tiny.model, messages=HELLO, max_tokens=HUGE, temperature=0, stream=True):
            text += chunk.choices[0].delta.content or ""
    assert timed_out.value.code == "timeout"
    assert len(text) > 20, "it streamed until the timeout"
    assert_engine_freed(impatient, tiny, before)


@pytest.mark.slow
def test_a_client_that_leaves_before_the_answer_stops_its_generation(tiny_server, tiny_sdk, tiny):
    before = settled_completion_tokens(tiny)
    leaving = openai.OpenAI(base_url=tiny_server.url, api_key="unused", max_retries=0, timeout=1.0)
    with pytest.raises(openai.APITimeoutError):
        leaving.chat.completions.create(model=tiny.model, messages=HELLO, max_tokens=HUGE, temperature=0)
    assert_engine_freed(tiny_sdk, tiny, before)


@pytest.mark.slow
def test_a_client_that_closes_its_stream_stops_its_generation(tiny_sdk, tiny):
    before = settled_completion_tokens(tiny)
    stream = tiny_sdk.chat.completions.create(model=tiny.model, messages=HELLO, max_tokens=HUGE, temperature=0, stream=True)
    for received, _ in enumerate(stream):
        if received == 20:
            break
    stream.close()
    assert_engine_freed(tiny_sdk, tiny, before)
