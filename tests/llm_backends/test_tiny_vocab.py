"""The tiny family's `market` vocabulary: deterministic, its tags single tokens, the chat template's
tool calls parseable, loaded as trained, and named in the cache key by its corpus."""

from __future__ import annotations

from dataclasses import replace

import pytest

import single_agent.tokenizer_corpus as tokenizer_corpus
from llm_backends.tiny import PROTOCOL_TOKENS, SPECIAL_TOKENS, TOOL_TOKENS, TinySpec, ensure_tiny, train_tokenizer
from llm_backends.tool_calls import parse_tool_calls, render_tool_call
from llm_backends.transformers_engine import load_tokenizer, splits_at_lines

pytestmark = pytest.mark.slow  # the corpus renders every tool on 32 days of a synthetic market

SIZE = 1024


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(SIZE, "market")


def test_two_builds_write_identical_vocabulary_files(tmp_path, tokenizer):
    corpus = tokenizer_corpus.market_corpus()
    assert tokenizer_corpus.market_corpus.__wrapped__() == corpus  # the corpus itself is regenerated identically
    train_tokenizer(SIZE, "market").save_pretrained(tmp_path / "a")
    tokenizer.save_pretrained(tmp_path / "b")
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        if (tmp_path / "a" / name).exists() or (tmp_path / "b" / name).exists():
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert SIZE <= len(tokenizer) <= SIZE + len(TOOL_TOKENS + PROTOCOL_TOKENS)


def test_the_corpus_holds_text_without_answers_tied_to_days():
    corpus = tokenizer_corpus.market_corpus()
    answers = [text for text in corpus if "</answer>" in text and "<|im_start|>" not in text]
    assert sorted(text.rsplit("<answer>", 1)[1] for text in answers) == ["BUY</answer>", "HOLD</answer>",
                                                                        "SELL</answer>"]
    assert not any("regime" in text.lower() for text in corpus)  # headlines may say bullish; no label is written


def test_special_and_protocol_tags_are_single_tokens(tokenizer, tmp_path):
    tokenizer.save_pretrained(tmp_path)
    loaded = load_tokenizer(tmp_path)
    for tag in SPECIAL_TOKENS + TOOL_TOKENS + PROTOCOL_TOKENS:
        for each in (tokenizer, loaded):
            assert len(each(tag, add_special_tokens=False)["input_ids"]) == 1, tag


def test_the_loaded_tokenizer_splits_as_trained(tokenizer, tmp_path):
    tokenizer.save_pretrained(tmp_path)
    assert splits_at_lines(tmp_path)
    loaded = load_tokenizer(tmp_path)
    text = tokenizer_corpus.market_corpus()[0]
    assert loaded(text, add_special_tokens=False)["input_ids"] == tokenizer(text, add_special_tokens=False)["input_ids"]
    assert len(loaded(text, add_special_tokens=False)["input_ids"]) * 3 < len(text)  # subwords, not bytes


def test_the_chat_template_renders_tool_calls_the_parser_reads(tokenizer):
    arguments = {"ticker": "ALFA"}
    conversation = [{"role": "user", "content": "?"},
                    {"role": "assistant", "content": "<think>Next: get_news_data.</think>",
                     "tool_calls": [{"type": "function", "function": {"name": "get_news_data", "arguments": arguments}}]}]
    rendered = tokenizer.apply_chat_template(conversation, tokenize=False)
    decoded = tokenizer.decode(tokenizer(rendered, add_special_tokens=False)["input_ids"])
    assert decoded == rendered
    calls, failures = parse_tool_calls(decoded)
    assert not failures and [(c.name, c.arguments) for c in calls] == [("get_news_data", arguments)]
    turn = f"<think>Next: get_market_data.</think>\n{render_tool_call('get_market_data', arguments)}"
    assert tokenizer.decode(tokenizer(turn, add_special_tokens=False)["input_ids"]) == turn


def test_the_cache_key_follows_the_corpus_and_the_size(monkeypatch):
    market = TinySpec(vocabulary="market", vocab_size=SIZE)
    embedded = TinySpec()
    before = market.digest(), embedded.digest()
    assert market.digest() != replace(market, vocab_size=2 * SIZE).digest()
    corpus = tokenizer_corpus.market_corpus()
    monkeypatch.setattr(tokenizer_corpus, "market_corpus", lambda: corpus[:-1])
    assert market.digest() != before[0]
    assert embedded.digest() == before[1]


def test_a_built_market_model_has_the_vocabulary(tiny_root):
    spec = TinySpec(vocabulary="market", vocab_size=SIZE)
    folder = ensure_tiny(spec)
    assert folder.name == f"tiny-{spec.digest()}" and splits_at_lines(folder)
    assert len(load_tokenizer(folder)) == len(train_tokenizer(SIZE, "market"))


def test_an_unknown_vocabulary_is_one_clear_error():
    from core.errors import ConfigError

    with pytest.raises(ConfigError, match="vocabulary 'bytes' is not one of embedded, market"):
        TinySpec(vocabulary="bytes")
