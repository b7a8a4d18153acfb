"""Grammar-constrained decoding with llguidance on the tiny model (random weights) and SmolLM2."""

import json
import re

import pytest
from llm_test_helpers import conversation
from transformers import AutoTokenizer

from llm_backends import smollm2
from llm_backends.grammar import json_schema_grammar, json_value, lark_text
from llm_backends.types import SamplingParams, TokenRequest

ARGS = {
    "type": "object",
    "properties": {
        "ticker": {"type": "string", "enum": ["NVDA", "MSFT"]},
        "end_date": {"type": "string", "pattern": "^2024-0[1-9]-[0-2][0-9]$"},
    },
    "required": ["ticker", "end_date"],
    "additionalProperties": False,
}
DECISION = {
    "type": "object",
    "properties": {"action": {"enum": ["BUY", "SELL", "HOLD"]}, "confidence": {"type": "integer", "minimum": 0, "maximum": 100}},
    "required": ["action", "confidence"],
    "additionalProperties": False,
}
STEP = re.compile(r'^<think>[a-z ]*</think>\n(<tool_call>\n\{"name": "get_market_data", "arguments": (\{.*\})\}\n</tool_call>|<answer>(BUY|SELL|HOLD)</answer>)$', re.DOTALL)


def protocol(tokenizer) -> str:
    """Think, then one tool call with schema-valid arguments or an answer (a small protocol)."""
    call_open = lark_text(tokenizer, '<tool_call>\n{"name": "get_market_data", "arguments": ')
    call_close = lark_text(tokenizer, "}\n</tool_call>")
    return "\n".join([
        f"start: {lark_text(tokenizer, '<think>')} thought {lark_text(tokenizer, '</think>' + chr(10))} (call | answer)",
        "thought[max_tokens=12]: /[a-z ]*/",
        f"call: {call_open} {json_value(ARGS)} {call_close}",
        'answer: "<answer>" ("BUY" | "SELL" | "HOLD") "</answer>"',
    ])


def valid_arguments(arguments: dict) -> bool:
    return set(arguments) == {"ticker", "end_date"} and arguments["ticker"] in {"NVDA", "MSFT"} and re.fullmatch(r"2024-0[1-9]-[0-2][0-9]", arguments["end_date"]) is not None


def valid_decision(text: str) -> bool:
    value = json.loads(text)
    return set(value) == {"action", "confidence"} and value["action"] in {"BUY", "SELL", "HOLD"} and isinstance(value["confidence"], int) and 0 <= value["confidence"] <= 100


def test_added_tokens_become_token_references_and_plain_text_stays_literal(tiny):
    tool_call = tiny.tokenizer.convert_tokens_to_ids("<tool_call>")
    assert lark_text(tiny.tokenizer, "<tool_call>\n{") == f'<[{tool_call}]> "\\n{{"'
    assert lark_text(tiny.tokenizer, 'say "hi"') == '"say \\"hi\\""'
    smol = AutoTokenizer.from_pretrained(smollm2.ensure_converted())
    assert lark_text(smol, "<tool_call>\n{") == '"<tool_call>\\n{"'
    assert lark_text(smol, "<|im_end|>") == f"<[{smol.convert_tokens_to_ids('<|im_end|>')}]>"


def test_sampled_protocol_steps_are_valid_on_the_tiny_model(tiny):
    params = [SamplingParams(temperature=1.0, max_new_tokens=120, seed=s, grammar=protocol(tiny.tokenizer)) for s in range(8)]
    results = tiny.generate([conversation("Decide.")] * 8, params=params)
    kinds = set()
    for r in results:
        match = STEP.match(r.text)
        assert match and r.finish_reason in {"stop", "tool_calls"}, r.text
        if match.group(2):
            assert valid_arguments(json.loads(match.group(2))) and r.tool_calls[0].name == "get_market_data"
        kinds.add("call" if match.group(2) else "answer")
    assert kinds == {"call", "answer"}, "both branches are reachable"


def test_a_completed_grammar_ends_the_row_with_end_of_sequence(tiny):
    prompt = tiny.render_ids(conversation("Decide."))
    result = tiny.generate_tokens([TokenRequest(prompt, SamplingParams(temperature=1.0, seed=3, grammar='start: "BUY" | "SELL"'))])[0]
    assert result.text in {"BUY", "SELL"} and result.finish_reason == "stop"
    assert result.completion_ids[-1] in tiny.eos_ids


def test_json_schema_grammar_gives_valid_documents_and_mixes_with_free_rows(tiny):
    grammar = json_schema_grammar(DECISION)
    params = [SamplingParams(temperature=1.0, max_new_tokens=60, seed=s, grammar=grammar if s % 2 == 0 else None) for s in range(6)]
    results = tiny.generate([conversation("Your decision as JSON.")] * 6, params=params)
    for r in results[0::2]:
        assert valid_decision(r.text) and r.finish_reason == "stop", r.text
    assert not any(r.text.startswith('{"action"') for r in results[1::2])


def test_a_grammar_that_does_not_compile_names_the_request(tiny):
    with pytest.raises(ValueError, match=r"request 1: grammar does not compile: .*unknown name"):
        tiny.generate_tokens([TokenRequest([1, 2]), TokenRequest([1, 2], SamplingParams(grammar="start: nothing_here"))])


@pytest.mark.slow
def test_smollm2_decides_in_schema_valid_json():
    engine = smollm2.smollm2_engine(device="cpu", cache=False)
    prompt = conversation("NVDA rose 3% today on strong volume. Give your trading decision as JSON with an action and a confidence.")
    result = engine.generate_one(prompt, params=SamplingParams(max_new_tokens=40, grammar=json_schema_grammar(DECISION)))
    assert valid_decision(result.text) and result.finish_reason == "stop", result.text
