import sqlite3

from llm_backends.cache import ResponseCache, cache_key, open_cache
from llm_backends.engine import occurrences
from llm_backends.types import ChatResult, SamplingParams

CONV = [{"role": "user", "content": "hi"}]
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]


def test_key_depends_on_every_component():
    base = cache_key("e", "m", CONV, None, SamplingParams())
    variants = [
        cache_key("e2", "m", CONV, None, SamplingParams()),
        cache_key("e", "m2", CONV, None, SamplingParams()),
        cache_key("e", "m", [{"role": "user", "content": "hi!"}], None, SamplingParams()),
        cache_key("e", "m", CONV, TOOLS, SamplingParams()),
        cache_key("e", "m", CONV, None, SamplingParams(seed=1)),
        cache_key("e", "m", CONV, None, SamplingParams(temperature=0.7)),
        cache_key("e", "m", CONV, None, SamplingParams(max_new_tokens=3)),
        cache_key("e", "m", CONV, None, SamplingParams(stop=["x"])),
        cache_key("e", "m", CONV, None, SamplingParams(), occurrence=1),
    ]
    assert len({base, *variants}) == len(variants) + 1
    assert base == cache_key("e", "m", [dict(CONV[0])], [], SamplingParams())


def test_round_trip_persists_across_connections_in_wal_mode(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    result = ChatResult(text="hello", prompt_tokens=3, completion_tokens=2, model="m")
    cache.put_many({"k1": ("e", result)})
    cache.close()
    reopened = ResponseCache(path)
    got = reopened.get_many(["k1", "missing"])
    assert list(got) == ["k1"]
    assert got["k1"].cached and got["k1"].text == "hello" and got["k1"].completion_tokens == 2
    assert len(reopened) == 1
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_open_cache_honours_flag_and_default_location(tmp_path, monkeypatch):
    monkeypatch.setenv("TRADEDUEL_CACHE", str(tmp_path))
    assert open_cache(False) is None
    assert open_cache(True).path == tmp_path / "llm_responses.sqlite"


def test_occurrences_number_repeats():
    assert occurrences(["a", "b", "a", "a"]) == [0, 0, 1, 2]
