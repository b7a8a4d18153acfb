"""The server's streaming pieces on their own: ids to text (`detokenizer`), text to deltas (`deltas`).

However a completion's text is cut into pieces, the deltas must add up to the non-streamed
message: the same content (parsed calls cut out, whitespace stripped when tools are shown), the
same calls in the same order, nothing after a stop string, and broken blocks kept as content.
"""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_backends.serve.deltas import ChoiceDeltas
from llm_backends.serve.detokenizer import IncrementalDetokenizer
from llm_backends.stopping import truncate_at_stop
from llm_backends.tool_calls import parse_tool_calls, render_tool_call, strip_parsed_tool_calls

CALL = render_tool_call("get_news_data", {"ticker": "NVDA"})
TEXTS = [
    f"  Let me look.\n{CALL}\n  ",
    f"{CALL}\n{render_tool_call('get_market_data', {'ticker': 'MSFT', 'days': 3})}",
    "before <tool_call>{not json</tool_call> after",
    f'open at the end {CALL}\n<tool_call>\n{{"name": "get_fundamentals", "arguments": {{}}}}',
    "a <tool_ca that never becomes a tag, then STOP and more",
    "plain\n\ntext with a stop string ## in the middle ## twice",
]
STOPS = [(), ("STOP",), ("##", "never"), ("</tool_call>",)]


def pieces(text: str, cuts: list[int]) -> list[str]:
    """`text` cut at the given positions."""
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def streamed(text: str, stop: tuple[str, ...], tools_shown: bool, cuts: list[int]) -> list[dict]:
    """All deltas of `text` fed in pieces, finished with the engine's final text (cut at the stop string)."""
    choice = ChoiceDeltas(stop, tools_shown)
    deltas = [delta for piece in pieces(text, cuts) for delta in choice.add(piece)]
    return deltas + choice.finish(truncate_at_stop(text, stop)[0] if stop else text)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TEXTS), st.sampled_from(STOPS), st.booleans(), st.lists(st.integers(0, 200), max_size=30))
def test_deltas_add_up_to_the_whole_message_however_the_text_is_cut(text, stop, tools_shown, cuts):
    final = truncate_at_stop(text, stop)[0] if stop else text
    deltas = streamed(text, stop, tools_shown, cuts)
    content = "".join(d.get("content", "") for d in deltas)
    calls = [call for d in deltas for call in d.get("tool_calls", [])]
    failures = [line for d in deltas for line in d.get("tool_call_parse_failures", [])]
    if not tools_shown:
        assert content == final and not calls and not failures
        return
    expected_calls, expected_failures = parse_tool_calls(final)
    assert content == strip_parsed_tool_calls(final)
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        (c.name, c.arguments) for c in expected_calls
    ]
    assert [c["index"] for c in calls] == list(range(len(calls)))
    assert [line.split(":")[0] for line in failures] == [line.split(":")[0] for line in expected_failures]


def test_a_call_is_held_until_its_block_closes_then_sent_whole():
    choice = ChoiceDeltas((), tools_shown=True)
    assert choice.add("Checking. <tool") == [{"content": "Checking."}]
    assert choice.add('_call>\n{"name": "get_news_data", ') == []
    [delta] = choice.add('"arguments": {"ticker": "NVDA"}}\n</tool_call>')
    [call] = delta["tool_calls"]
    assert (call["index"], call["type"], call["function"]) == (
        0, "function", {"name": "get_news_data", "arguments": '{"ticker": "NVDA"}'},
    )
    assert call["id"].startswith("call_")


def test_a_possible_stop_string_is_held_back_and_released_when_it_does_not_complete():
    choice = ChoiceDeltas(("END",), tools_shown=False)
    assert choice.add("one EN") == [{"content": "one "}]
    assert choice.add("ough") == [{"content": "ENough"}]
    assert choice.add(" E") == [{"content": " "}]
    assert choice.add("ND and more") == [], "the stop string and what follows are cut"
    assert choice.finish("one ENough ") == []


def test_a_block_that_does_not_parse_is_content_with_its_failure_reported():
    choice = ChoiceDeltas((), tools_shown=True)
    [delta] = choice.add("<tool_call>{oops</tool_call>")
    assert delta["content"] == "<tool_call>{oops</tool_call>"
    assert delta["tool_call_parse_failures"][0].startswith("tool call 0: invalid JSON")


def test_detokenizer_text_adds_up_to_one_decode_of_all_ids(tiny):
    """Byte-level tokens of multi-byte characters and special tokens, fed one id at a time."""
    tokenizer = tiny.tokenizer
    ids = tokenizer("Prix: 903,6 € ✓ — 株価 <tool_call>", add_special_tokens=False)["input_ids"] + list(tiny.eos_ids)
    detokenizer = IncrementalDetokenizer(tokenizer)
    texts = [detokenizer.push([token]) for token in ids]
    assert "".join(texts) == tokenizer.decode(ids, skip_special_tokens=True)
    assert "\ufffd" not in "".join(texts)
    assert sum(1 for t in texts if t) > len(ids) // 3, "text comes out as the ids arrive, not at the end"
