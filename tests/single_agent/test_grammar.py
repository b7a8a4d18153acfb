"""The protocol grammar, run through llguidance matchers over real token ids.

Both tokenizers the project ships are checked: SmolLM2's, where every tag is plain text, and
the tiny model's, where `<tool_call>` and `</tool_call>` are added tokens (as in Qwen2.5) and
must be written as special-token references.
"""

from __future__ import annotations

import json

import llguidance
import llguidance.hf
import numpy as np
import pytest

from llm_backends.tool_calls import render_tool_call
from single_agent.grammar import argument_schema, longest_json, max_turn_tokens, protocol_grammar, single_token_tags
from single_agent.parser import parse_step

TICKER = "NVDA"


class Checker:
    """One tokenizer wrapped for llguidance, and matchers over it."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.ll = llguidance.hf.from_tokenizer(tokenizer)
        self.tags = single_token_tags(tokenizer)

    def grammar(self, protocol, **options) -> str:
        text = protocol_grammar(protocol, ticker=TICKER, token_tags=self.tags, **options)
        grammar = llguidance.LLMatcher.grammar_from_lark(text)
        is_error, messages = llguidance.LLMatcher.validate_grammar_with_warnings(grammar, self.ll)
        assert not is_error and not messages, messages
        return grammar

    def accepts(self, grammar: str, text: str) -> bool:
        """Whether the matcher takes every token of `text` and then the end of the turn (EOS)."""
        matcher = llguidance.LLMatcher(self.ll, grammar, log_level=0)
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        return matcher.consume_tokens(ids) and matcher.consume_token(self.tokenizer.eos_token_id)

    def walk(self, grammar: str, seed: int) -> tuple[str, int]:
        """A turn sampled uniformly from the grammar's mask, token by token, until EOS; its text and
        its token count (EOS included)."""
        rng = np.random.default_rng(seed)
        matcher = llguidance.LLMatcher(self.ll, grammar, log_level=0)
        ids = []
        while True:
            allowed = np.flatnonzero(np.frombuffer(matcher.compute_logit_bias(), dtype=np.uint8))
            token = int(rng.choice(allowed))
            if token == self.tokenizer.eos_token_id:
                return self.tokenizer.decode(ids), len(ids) + 1
            assert matcher.consume_token(token), matcher.get_error()
            ids.append(token)


@pytest.fixture(scope="module", params=["smollm2", "tiny"])
def checker(request):
    return Checker(request.getfixturevalue(f"{request.param}_tokenizer"))


def call(name: str, **arguments) -> str:
    return f"<think>Next I read {name}.</think>\n{render_tool_call(name, {'ticker': TICKER, **arguments})}"


def test_tags_that_are_tokens(smollm2_tokenizer, tiny_tokenizer):
    assert single_token_tags(smollm2_tokenizer) == frozenset()
    assert single_token_tags(tiny_tokenizer) == {"<tool_call>", "</tool_call>"}


def test_valid_turns_are_accepted(checker, compact):
    grammar = checker.grammar(compact)
    for name in compact.tools:
        assert checker.accepts(grammar, call(name)), name
    for action in ("BUY", "SELL", "HOLD"):
        assert checker.accepts(grammar, f"<think>RSI below 30, price / volume up.</think>\n<answer>{action}</answer>")
    assert checker.accepts(grammar, "<think></think>\n<answer>HOLD</answer>")


@pytest.mark.parametrize("text", [
    "<answer>BUY</answer>",                                                   # no think
    "<think>x</think><answer>BUY</answer>",                                   # no newline after the think
    "<think>x</think>\n<answer>buy</answer>",                                 # lower case
    "<think>x</think>\n<answer> BUY</answer>",                                # padded
    "<think>x</think>\n<answer>BUY</answer> because",                         # text after the action
    "<think>x</think>\n<answer>BUY</answer><answer>BUY</answer>",             # two answers
    "<think>x <answer>BUY</answer></think>\n<answer>BUY</answer>",            # a tag inside the think
    "<think>x</think> y</think>\n<answer>BUY</answer>",                       # think closed twice
    "<think>RSI < 30</think>\n<answer>BUY</answer>",                          # a '<' inside the think
    call("get_balance_sheet"),                                                # not offered by compact
    call("get_market_data", lookback_days=5),                                 # argument compact does not show
    call("get_market_data").replace(TICKER, "MSFT"),                          # another ticker
    call("get_market_data").replace('{"ticker": ', '{"ticker":'),             # JSON spacing
    call("get_market_data").replace("<tool_call>\n", "<tool_call>"),          # the template's layout
    call("get_market_data") + "\n<answer>BUY</answer>",                       # a call and an answer
    call("get_market_data") + "\n" + render_tool_call("get_news_data", {"ticker": TICKER}),  # two calls
])
def test_invalid_turns_are_rejected(checker, compact, text):
    assert not checker.accepts(checker.grammar(compact), text)


def test_an_unfinished_turn_is_not_accepted(checker, compact):
    grammar = checker.grammar(compact)
    assert not checker.accepts(grammar, "<think>x</think>\n<answer>BUY")
    assert not checker.accepts(grammar, call("get_market_data")[:-len("</tool_call>")])


# A uniform walk over the tiny tokenizer (seed 0, walk 50) that made llguidance 1.9.1 panic under
# the former think rule, a lazy text with stop="</think>": the tokens `></` and `think` straddle
# the stop string, the mask computation panics and poisons state every matcher of the grammar shares.
STOP_PANIC_WALK = [30, 401, 32, 283, 511, 73, 212, 321, 33, 277, 216, 509, 328, 73, 325, 354, 455, 89, 81, 260, 32,
                   402, 473, 294, 362, 201, 488, 464, 302, 456, 22, 211, 210, 43, 420, 194, 13, 83, 437, 401]


def test_no_token_sequence_breaks_the_matcher(tiny_tokenizer, compact):
    checker = Checker(tiny_tokenizer)
    matcher = llguidance.LLMatcher(checker.ll, checker.grammar(compact), log_level=0)
    for token in STOP_PANIC_WALK:
        if not matcher.consume_token(token):
            break
        matcher.compute_logit_bias()
    assert not matcher.is_error(), matcher.get_error()
    shared = llguidance.LLMatcher(checker.ll, checker.grammar(compact), log_level=0)
    assert shared.consume_tokens(tiny_tokenizer.encode("<think>ok</think>\n<answer>BUY</answer>"))


def test_the_think_text_is_bounded_in_tokens(checker, compact):
    grammar = checker.grammar(compact)
    words = " w" * (compact.think_max_tokens // 2)
    assert len(checker.tokenizer.encode(words)) < compact.think_max_tokens
    assert checker.accepts(grammar, f"<think>{words}</think>\n<answer>BUY</answer>")
    assert not checker.accepts(grammar, f"<think>{words * 3}</think>\n<answer>BUY</answer>")


def test_paper_arguments_are_bounded(checker, paper):
    grammar = checker.grammar(paper)
    assert checker.accepts(grammar, call("get_market_data", end_date="2024-02-29", lookback_days=60))
    assert checker.accepts(grammar, call("get_stock_indicators", indicators=["rsi14", "macd"]))
    assert checker.accepts(grammar, "<think>x</think>\n" + render_tool_call("get_macro_indicators", {}))
    assert not checker.accepts(grammar, call("get_market_data", lookback_days=61))
    assert not checker.accepts(grammar, call("get_market_data", end_date="2024-02-30"))
    assert not checker.accepts(grammar, call("get_market_data", end_date="20240229"))
    assert not checker.accepts(grammar, call("get_stock_indicators", indicators=["rsi"]))
    assert not checker.accepts(grammar, call("get_stock_indicators", indicators=[]))
    assert not checker.accepts(grammar, call("get_stock_indicators", indicators=["macd"] * 12))
    assert not checker.accepts(grammar, call("get_news_data", limit=21))


def test_answer_only_when_calls_are_not_allowed(checker, compact):
    grammar = checker.grammar(compact, calls_allowed=False)
    assert checker.accepts(grammar, "<think>done</think>\n<answer>SELL</answer>")
    assert not checker.accepts(grammar, call("get_market_data"))


def test_call_only_when_the_answer_is_not_allowed(checker, compact):
    grammar = checker.grammar(compact, answer_allowed=False)
    assert checker.accepts(grammar, call("get_market_data"))
    assert not checker.accepts(grammar, "<think>done</think>\n<answer>SELL</answer>")
    with pytest.raises(ValueError, match="a call or an answer"):
        protocol_grammar(compact, calls_allowed=False, answer_allowed=False)


def test_without_the_token_tags_the_tiny_model_could_not_call(tiny_tokenizer, compact):
    checker = Checker(tiny_tokenizer)
    literal = llguidance.LLMatcher.grammar_from_lark(protocol_grammar(compact, ticker=TICKER))
    assert not checker.accepts(literal, call("get_market_data"))
    assert checker.accepts(checker.grammar(compact), call("get_market_data"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["compact", "paper"])
def test_every_sampled_turn_parses_clean(checker, request, name):
    protocol = request.getfixturevalue(name)
    grammar = checker.grammar(protocol)
    bound = max_turn_tokens(protocol, ticker=TICKER)
    outcomes = set()
    for seed in range(6):
        text, tokens = checker.walk(grammar, seed)
        step = parse_step(text, protocol.tools)
        assert step.failures == [], step.text
        assert tokens <= bound
        outcomes.add(step.outcome)
        assert all(call.arguments.get("ticker", TICKER) == TICKER for call in step.calls)
    assert outcomes <= {"call", "answer"}


def test_think_tags_as_tokens(tiny_tokenizer, compact):
    """A tokenizer with the think and answer tags as added tokens (Qwen3 has <think>) gets token references."""
    tokenizer = tiny_tokenizer.__class__.from_pretrained(tiny_tokenizer.name_or_path)
    tokenizer.add_tokens(["<think>", "</think>", "<answer>", "</answer>"])
    checker = Checker(tokenizer)
    assert checker.tags == {"<think>", "</think>", "<answer>", "</answer>", "<tool_call>", "</tool_call>"}
    grammar = checker.grammar(compact)
    assert checker.accepts(grammar, call("get_news_data"))
    assert checker.accepts(grammar, "<think>x</think>\n<answer>HOLD</answer>")
    assert not checker.accepts(grammar, "<think>x</think>\n<answer>hold</answer>")
    for seed in range(4):
        assert parse_step(checker.walk(grammar, seed)[0], compact.tools).failures == []


def test_argument_schema(paper, compact):
    market = argument_schema(paper, "get_market_data", ticker="NVDA")
    assert market["x-guidance"] == {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
    assert market["properties"] == {"ticker": {"const": "NVDA"}, "end_date": {"type": "string", "format": "date"},
                                    "lookback_days": {"maximum": 60, "minimum": 1, "type": "integer"}}
    assert market["additionalProperties"] is False and market["required"] == ["ticker"]
    indicators = argument_schema(paper, "get_stock_indicators")["properties"]
    assert indicators["ticker"] == {"maxLength": 12, "minLength": 1, "type": "string"}
    assert indicators["indicators"]["maxItems"] == len(indicators["indicators"]["items"]["enum"])
    assert "description" not in json.dumps(argument_schema(compact, "get_news_data"))


def test_longest_json():
    assert longest_json({"const": "NVDA"}) == len('"NVDA"')
    assert longest_json({"type": "integer", "minimum": -100, "maximum": 60}) == 4
    assert longest_json({"type": "string", "format": "date"}) == 12
    assert longest_json({"type": "string", "maxLength": 3}) == 2 + 18
    assert longest_json({"type": "array", "items": {"enum": ["a", "bcd"]}, "maxItems": 2}) == len('["bcd", "bcd"]')
    obj = {"type": "object", "properties": {"a": {"const": 1}, "bb": {"enum": [10, 2]}}}
    assert longest_json(obj) == len('{"a": 1, "bb": 10}')
    with pytest.raises(ValueError, match="lacks 'maxLength'"):
        longest_json({"type": "string"})
    with pytest.raises(ValueError, match="no length bound for a number"):
        longest_json({"type": "number"})


def test_the_turn_bound_covers_the_longest_call(smollm2_tokenizer, paper, compact):
    longest = "<think></think>\n" + render_tool_call("get_stock_indicators", {
        "ticker": "ABCDEFGHIJKL", "indicators": ["vwma20"] * 11, "end_date": "2024-12-31", "lookback_days": 60})
    assert len(longest.encode()) + paper.think_max_tokens + 1 <= max_turn_tokens(paper)
    assert max_turn_tokens(compact, calls_allowed=False) == len("<think></think>\n<answer>HOLD</answer>") \
        + compact.think_max_tokens + 1
    assert max_turn_tokens(compact, ticker="NVDA") < max_turn_tokens(compact) < max_turn_tokens(paper)
