"""Fingerprints name the weights that answer; the response cache keys by them and caches only
what is reproducible and not an error."""

import os
import threading
from concurrent.futures import ThreadPoolExecutor
import shutil

import pytest
import torch
from llm_test_helpers import conversation

from llm_backends import fingerprint
from llm_backends.cache import ResponseCache
from llm_backends.engine import ChatEngine
from llm_backends.tiny import TinySpec, build_tiny
from llm_backends.transformers_engine import TransformersEngine, transformers_engine
from llm_backends.types import ChatResult, SamplingParams

GREEDY = SamplingParams(max_new_tokens=8)


def test_two_checkpoints_with_one_folder_name_never_share_cache_entries(tiny_root, tmp_path):
    build_tiny(TinySpec(seed=0), tmp_path / "a" / "policy")
    build_tiny(TinySpec(seed=1), tmp_path / "b" / "policy")
    shutil.copytree(tmp_path / "a" / "policy", tmp_path / "c" / "policy")
    cache_path = str(tmp_path / "responses.sqlite")
    a, b, c = (transformers_engine(str(tmp_path / d / "policy"), device="cpu", dtype="float32", cache=True, cache_path=cache_path) for d in "abc")
    assert a.model == b.model == "policy"
    assert a.fingerprint() != b.fingerprint() and a.fingerprint() == c.fingerprint()
    first, second = a.generate_one(conversation("hi"), params=GREEDY), b.generate_one(conversation("hi"), params=GREEDY)
    assert not second.cached and second.text != first.text
    copy = c.generate_one(conversation("hi"), params=GREEDY)
    assert copy.cached and copy.text == first.text, "the same weights elsewhere share their answers"
    assert len(ResponseCache(cache_path)) == 2


def test_file_digests_are_memoised_by_path_size_and_mtime(tiny_root, tmp_path, monkeypatch):
    path = tmp_path / "weights.bin"
    path.write_bytes(b"abc" * 1000)
    reads = []
    real = fingerprint.sha256_file
    monkeypatch.setattr(fingerprint, "sha256_file", lambda p: reads.append(p) or real(p))
    first = fingerprint.file_digest(path)
    assert fingerprint.file_digest(path) == first and len(reads) == 1
    path.write_bytes(b"abd" * 1000)
    os.utime(path, ns=(1, 1))
    assert fingerprint.file_digest(path) != first and len(reads) == 2


def test_threads_digesting_one_file_at_once_agree(tiny_root, tmp_path, monkeypatch):
    """Concurrent first calls (parallel graph nodes asking an engine's fingerprint) each memoise safely."""
    path = tmp_path / "weights.bin"
    path.write_bytes(b"abc" * 1000)
    together = threading.Barrier(8)
    real = fingerprint.sha256_file

    def after_all_arrive(p):
        together.wait()
        return real(p)

    monkeypatch.setattr(fingerprint, "sha256_file", after_all_arrive)
    with ThreadPoolExecutor(8) as pool:
        digests = set(pool.map(lambda _: fingerprint.file_digest(path), range(8)))
    assert digests == {real(path)}


def test_a_folder_without_weights_is_named_in_the_error(tmp_path):
    with pytest.raises(ValueError, match="no weight files"):
        fingerprint.folder_digest(tmp_path)


def test_in_memory_weights_are_fingerprinted_by_their_values(tiny):
    engine = TransformersEngine(tiny.hf_model, tiny.tokenizer, "in-memory", kv_cache_mb=0)
    before = engine.fingerprint()
    assert engine.fingerprint() == before == TransformersEngine(tiny.hf_model, tiny.tokenizer, "other name").fingerprint()
    weight = tiny.hf_model.lm_head.weight
    original = weight[0, 0].item()
    with torch.no_grad():
        weight[0, 0] = original + 1.0
    try:
        assert engine.fingerprint() != before
    finally:
        with torch.no_grad():
            weight[0, 0] = original
    assert engine.fingerprint() == before


def test_engines_with_weights_that_change_in_place_refuse_the_cache(tiny, tmp_path):
    with pytest.raises(ValueError, match="cannot use the response cache"):
        TransformersEngine(tiny.hf_model, tiny.tokenizer, "policy", live_weights=True, cache=ResponseCache(tmp_path / "r.sqlite"))
    assert "weights change in place" in repr(TransformersEngine(tiny.hf_model, tiny.tokenizer, "policy", live_weights=True))


def test_only_reproducible_requests_are_cached(tiny, tmp_path):
    engine = TransformersEngine(tiny.hf_model, tiny.tokenizer, "cached", cache=ResponseCache(tmp_path / "r.sqlite"))
    unseeded = SamplingParams(temperature=1.0, max_new_tokens=12)
    runs = [engine.generate_one(conversation("hi"), params=unseeded) for _ in range(2)]
    assert not any(r.cached for r in runs) and runs[0].text != runs[1].text and len(engine.cache) == 0
    seeded = unseeded.model_copy(update={"seed": 4})
    assert not engine.generate_one(conversation("hi"), params=seeded).cached
    assert engine.generate_one(conversation("hi"), params=seeded).cached
    engine.generate_one(conversation("hi"), params=GREEDY.model_copy(update={"seed": 1}))
    assert engine.generate_one(conversation("hi"), params=GREEDY.model_copy(update={"seed": 2})).cached, "greedy ignores the seed"
    assert len(engine.cache) == 2


class FailingEngine(ChatEngine):
    """Answers every conversation with an error result (wiring only: no model)."""

    engine_id = "failing"

    def _generate(self, conversations, tools, params):
        return [ErrorResult(text="", error="HTTP 500") for _ in conversations]


class ErrorResult(ChatResult):
    error: str | None = None


def test_results_with_an_error_are_never_cached(tmp_path):
    engine = FailingEngine(cache=ResponseCache(tmp_path / "r.sqlite"))
    assert engine.generate_one(conversation("hi"), params=GREEDY).error == "HTTP 500"
    assert not engine.generate_one(conversation("hi"), params=GREEDY).cached
    assert len(engine.cache) == 0


def test_weights_modified_after_loading_are_fingerprinted_by_value(tiny_root, tmp_path):
    build_tiny(TinySpec(seed=0), tmp_path / "policy")
    engine = transformers_engine(str(tmp_path / "policy"), device="cpu", dtype="float32", cache=False)
    loaded = engine.fingerprint()
    with torch.no_grad():
        engine.hf_model.lm_head.weight[0, 0] += 1.0
    assert engine.fingerprint() != loaded, "the files no longer describe the weights"
