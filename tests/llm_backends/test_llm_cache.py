import sqlite3

from llm_backends.cache import ResponseCache, cache_key, open_cache, request_identity
from llm_backends.engine import occurrences, repeat_seed
from llm_backends.types import ChatResult, SamplingParams

CONV = [{"role": "user", "content": "hi"}]
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]


GREEDY = SamplingParams()


def key(fingerprint="f", conversation=CONV, tools=None, params=GREEDY, occurrence=0):
    return cache_key(fingerprint, request_identity(conversation, tools, params), occurrence)


def test_key_depends_on_every_component():
    base = key()
    variants = [
        key(fingerprint="g"),
        key(conversation=[{"role": "user", "content": "hi!"}]),
        key(tools=TOOLS),
        key(params=SamplingParams(temperature=0.7)),
        key(params=SamplingParams(temperature=0.7, seed=1)),
        key(params=SamplingParams(max_new_tokens=3)),
        key(params=SamplingParams(stop=["x"])),
        key(params=SamplingParams(grammar='start: "x"')),
        key(occurrence=1),
    ]
    assert len({base, *variants}) == len(variants) + 1
    assert base == key(conversation=[dict(CONV[0])], tools=[])


def test_greedy_keys_ignore_the_seed_and_sampled_keys_do_not():
    assert key(params=SamplingParams(seed=1)) == key(params=SamplingParams(seed=2)) == key()
    assert key(params=SamplingParams(temperature=1.0, seed=1)) != key(params=SamplingParams(temperature=1.0, seed=2))


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


def test_repeat_seeds_keep_the_first_copy_and_differ_for_the_others():
    assert repeat_seed(7, 0) == 7
    seeds = {repeat_seed(7, n) for n in range(1, 50)} | {repeat_seed(8, n) for n in range(1, 50)}
    assert len(seeds) == 98 and all(0 <= s < 2**63 for s in seeds)
