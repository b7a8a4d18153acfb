"""The OpenAI-compatible client against a scripted fault server on 127.0.0.1: each conversation
gets its own answer or its own error, retries honour Retry-After, and the API key never shows."""

import logging
import socket
import threading
import time
from email.utils import formatdate

import pytest
from fault_server import FaultServer, Reply, completion, in_order, last_user_text
from llm_test_helpers import conversation

from llm_backends.langchain_adapter import EngineChatModel, LLMCallFailed
from llm_backends.openai_engine import OpenAIEngine, openai_engine
from llm_backends.types import SamplingParams

KEY_ENV = "TD_TEST_FAULT_KEY"
SECRET = "sk-fault-7a9e-never-show-me"
FINE = Reply(body=completion("fine"))


def client(server: FaultServer, **options) -> OpenAIEngine:
    options = {"max_retries": 3, "backoff_s": 0.01, "timeout_s": 5.0, **options}
    return OpenAIEngine(server.url, "fault-model", **options)


@pytest.mark.slow
def test_two_server_errors_then_an_answer():
    with FaultServer(in_order(Reply(500, "boom"), Reply(500, "boom"), FINE)) as server:
        result = client(server).generate_one(conversation("x"))
    assert (result.text, result.error, result.prompt_tokens) == ("fine", None, 3)
    assert len(server.received) == 3


@pytest.mark.slow
def test_retries_exhausted_become_the_conversations_error():
    with FaultServer(in_order(Reply(502, "bad gateway"))) as server:
        result = client(server, max_retries=2).generate_one(conversation("x"))
    assert result.text == "" and result.finish_reason == "error"
    assert result.error == f"{server.url}/chat/completions: HTTP 502: bad gateway (after 3 attempts)"


def waits_recorded(engine: OpenAIEngine) -> list[float]:
    """The seconds `engine` decides to wait after each failed attempt (tenacity asks after the last one too,
    before it stops), recorded as they are decided: no clock is read."""
    waits: list[float] = []
    decide = engine._wait

    def recording(state):
        waits.append(decide(state))
        return waits[-1]

    engine._wait = recording
    return waits


@pytest.mark.slow
def test_429_waits_the_seconds_retry_after_asks_for():
    with FaultServer(in_order(Reply(429, "slow down", {"Retry-After": "1"}), FINE)) as server:
        engine = client(server)
        waits = waits_recorded(engine)
        result = engine.generate_one(conversation("x"))
    assert result.text == "fine" and len(server.received) == 2
    assert waits == [1.0], "backoff alone would have waited about 0.01 s"


@pytest.mark.slow
def test_503_waits_until_the_http_date_retry_after_names():
    later = formatdate(time.time() + 3, usegmt=True)
    with FaultServer(in_order(Reply(503, "maintenance", {"Retry-After": later}), FINE)) as server:
        engine = client(server)
        waits = waits_recorded(engine)
        result = engine.generate_one(conversation("x"))
    assert result.text == "fine" and len(server.received) == 2
    assert len(waits) == 1 and 0 < waits[0] <= 3, "the time left until the named date (whole seconds), not backoff"
    assert waits[0] > 0.01 * 2 + 0.01, "more than backoff's first wait could be"


def test_retry_after_beyond_the_cap_fails_at_once():
    with FaultServer(in_order(Reply(429, "come back tomorrow", {"Retry-After": "86400"}))) as server:
        engine = client(server, max_retry_after_s=5)
        waits = waits_recorded(engine)
        result = engine.generate_one(conversation("x"))
    assert waits == [] and len(server.received) == 1
    assert "HTTP 429: come back tomorrow (Retry-After asks for 86400 s, more than max_retry_after_s=5)" in result.error


@pytest.mark.slow
def test_a_hang_past_the_timeout_is_an_error_after_the_retries():
    with FaultServer(in_order(Reply(hang=True))) as server:
        engine = client(server, timeout_s=0.3, max_retries=1)
        waits = waits_recorded(engine)
        result = engine.generate_one(conversation("x"))
    assert result.error == f"{server.url}/chat/completions: ReadTimeout: timed out (after 2 attempts)"
    assert len(server.received) == 2 and waits, "two attempts, a wait decided after each"
    assert all(wait <= 0.01 * 2**n + 0.01 for n, wait in enumerate(waits)), "backoff_s·2^(n-1) + U(0, backoff_s)"


def test_connection_refused_names_the_url():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    result = OpenAIEngine(url, "m", max_retries=0).generate_one(conversation("x"))
    assert result.error.startswith(f"{url}/chat/completions: ConnectError: ")
    assert "refused" in result.error.lower()


@pytest.mark.slow
def test_malformed_json_is_an_error_not_a_crash():
    with FaultServer(in_order(Reply(200, "{'choices': [oops"))) as server:
        result = client(server).generate_one(conversation("x"))
    assert result.error == f"{server.url}/chat/completions: HTTP 200 but the body is not JSON: \"{{'choices': [oops\""
    assert len(server.received) == 1, "a malformed answer is not retried"


def test_empty_choices_is_an_error_not_an_index_error():
    with FaultServer(in_order(Reply(body={"choices": [], "model": "m"}))) as server:
        result = client(server).generate_one(conversation("x"))
    assert result.error.endswith('the answer has no choices: {"choices": [], "model": "m"}')


@pytest.mark.slow
def test_one_bad_request_in_a_batch_of_three_spares_the_others(tmp_path):
    def script(number, body, headers):
        text = last_user_text(body)
        if text == "bad":
            return Reply(400, {"error": {"message": "messages[0].content: not allowed", "type": "invalid_request_error"}})
        return Reply(body=completion(f"answer to {text}"))

    with FaultServer(script) as server:
        engine = openai_engine(server.url, "fault-model", max_retries=3, backoff_s=0.01, cache_path=str(tmp_path / "c.sqlite"))
        prompts = [conversation("first"), conversation("bad"), conversation("third")]
        results = engine.generate(prompts)
        assert [r.text for r in results] == ["answer to first", "", "answer to third"]
        assert [r.error for r in results] == [
            None, f"{server.url}/chat/completions: HTTP 400: messages[0].content: not allowed", None,
        ]
        assert len(server.received) == 3, "a 400 is not retried"
        again = engine.generate([prompts[0], prompts[2]])
        assert [(r.text, r.cached) for r in again] == [("answer to first", True), ("answer to third", True)]
        assert len(server.received) == 3, "the answers came from the cache"


@pytest.mark.slow
def test_the_api_key_never_shows_even_when_the_server_echoes_it(monkeypatch, caplog, tmp_path):
    """The server echoes the Authorization header in a 500 (retried, so logged) and then a 401."""

    def script(number, body, headers):
        echoed = f"you sent {headers['Authorization']}"
        return Reply(500, echoed) if number == 0 else Reply(401, {"error": {"message": echoed}})

    monkeypatch.setenv(KEY_ENV, SECRET)
    caplog.set_level(logging.DEBUG)
    with FaultServer(script) as server:
        engine = openai_engine(server.url, "fault-model", api_key_env=KEY_ENV, backoff_s=0.01, cache_path=str(tmp_path / "c.sqlite"))
        result = engine.generate_one(conversation("x"))
    assert server.received[0].headers["Authorization"] == f"Bearer {SECRET}", "the key was sent"
    assert result.error.endswith("HTTP 401: you sent Bearer [api key removed] (after 2 attempts)")
    assert "HTTP 500: you sent Bearer [api key removed]" in caplog.text, "the retry was logged"
    seen = repr(engine) + repr(vars(engine)) + result.model_dump_json() + repr(result) + caplog.text
    seen += (tmp_path / "c.sqlite").read_bytes().decode("latin-1")
    assert SECRET not in seen


@pytest.mark.slow
def test_langchain_callers_get_an_exception_for_a_failed_call():
    def script(number, body, headers):
        if last_user_text(body) == "bad":
            return Reply(400, {"error": {"message": "unsupported value"}})
        return Reply(body=completion("fine"))

    with FaultServer(script) as server:
        model = EngineChatModel(engine=client(server))
        assert model.invoke("good").content == "fine"
        with pytest.raises(LLMCallFailed, match=r"/chat/completions: HTTP 400: unsupported value$"):
            model.invoke("bad")


@pytest.mark.slow
def test_rows_with_different_tools_and_parameters_are_all_in_flight_at_once():
    """Each request waits until all four have arrived: a client that sent one group after another never gets there."""
    together = threading.Barrier(4)

    def script(number, body, headers):
        try:
            together.wait(timeout=5)
        except threading.BrokenBarrierError:
            return Reply(500, "the rows did not arrive together")
        return Reply(body=completion(f"t={body['temperature']}"))

    params = [SamplingParams(temperature=t, seed=s) for t, s in ((0.0, None), (0.5, 1), (0.5, 2), (1.0, None))]
    tools = [None, [{"type": "function", "function": {"name": "f"}}], None, None]
    with FaultServer(script) as server:
        results = client(server, max_retries=0, max_concurrency=4).generate([conversation("x")] * 4, tools, params)
    assert [(r.text, r.error) for r in results] == [(f"t={p.temperature}", None) for p in params]


@pytest.mark.slow
def test_a_grammar_is_sent_as_structured_outputs_and_a_server_that_refuses_it_is_an_error():
    refusal = {"error": {"message": "Unrecognized request argument supplied: structured_outputs"}}

    def script(number, body, headers):
        return Reply(400, refusal) if "structured_outputs" in body else Reply(body=completion("free"))

    with FaultServer(script) as server:
        engine = client(server)
        constrained, free = engine.generate([conversation("x")] * 2, params=[SamplingParams(grammar='start: "BUY"'), SamplingParams()])
    assert [r.body.get("structured_outputs") for r in server.received] in (
        [{"grammar": 'start: "BUY"'}, None], [None, {"grammar": 'start: "BUY"'}],
    )
    assert constrained.error.endswith("HTTP 400: Unrecognized request argument supplied: structured_outputs")
    assert (free.text, free.error) == ("free", None)
