"""The protocol's grammar for constrained decoding, in llguidance's Lark dialect.

One assistant turn, as the protocol wants it:

    start:  think "\\n" (call | answer)
    think:  <think> text </think>       text: at most think_max_tokens tokens, no "<"
    call:   <tool_call> "\\n" {"name": "<tool>", "arguments": <that tool's arguments>} "\\n" </tool_call>
    answer: <answer> (BUY | SELL | HOLD) </answer>

The tool name selects the argument schema (one alternative per offered tool). Arguments are
held to the protocol's parameter schemas with every field bounded: integers by their bounds,
indicator lists by their enum and length, dates by `format: date`, the ticker pinned to the
episode's when given, and the JSON written compactly as `json.dumps` writes it (", " and ": ",
no other whitespace), which is also how the chat template renders a call. The layout of a call
is the chat template's, so a constrained turn reads back exactly as the template would write it.

A tag that the tokenizer holds as one added token (`<tool_call>` in Qwen2.5 and the tiny test
model) must be written as a token reference, not as text: llguidance treats added tokens as
special and never matches them against string literals. `single_token_tags(tokenizer)` says
which; pass them as `token_tags`. Compile with `llguidance.LLMatcher.grammar_from_lark(text)`.
The grammar does not know `max_new_tokens`: `max_turn_tokens` is the budget that never cuts a
valid turn short.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from market.decision import Action
from single_agent.offered_tools import offered_parameters
from single_agent.protocol import Protocol
from single_agent.tags import ANSWER_CLOSE, ANSWER_OPEN, CALL_CLOSE, CALL_OPEN, MODEL_TAGS, THINK_CLOSE, THINK_OPEN
from tools import TOOLS

JSON_LAYOUT = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
"""llguidance's `x-guidance` options for `json.dumps`' layout."""

_IGNORED_KEYS = frozenset({"description", "default"})


def single_token_tags(tokenizer: Any) -> frozenset[str]:
    """The protocol tags that `tokenizer` (a Hugging Face tokenizer) holds as one added token."""
    return frozenset(set(tokenizer.get_added_vocab()) & set(MODEL_TAGS))


def _without_annotations(schema: Any) -> Any:
    """`schema` without descriptions and defaults (they constrain nothing), recursively."""
    if isinstance(schema, dict):
        return {k: _without_annotations(v) for k, v in schema.items() if k not in _IGNORED_KEYS}
    if isinstance(schema, list):
        return [_without_annotations(item) for item in schema]
    return schema


def argument_schema(protocol: Protocol, name: str, ticker: str | None = None) -> dict[str, Any]:
    """The JSON schema a call's arguments are held to (see the module docstring)."""
    schema = _without_annotations(offered_parameters(protocol, name))
    properties = schema["properties"]
    for field in TOOLS[name].date_fields:
        if field in properties:
            properties[field]["format"] = "date"
    for field in properties.values():
        if field.get("type") == "array" and "enum" in field.get("items", {}):
            field.setdefault("maxItems", len(field["items"]["enum"]))
    if ticker is not None and "ticker" in properties:
        properties["ticker"] = {"const": ticker}
    return {"x-guidance": JSON_LAYOUT, **schema}


def _tag(tag: str, token_tags: Collection[str]) -> str:
    """A tag as a special-token reference when it is one token, else as a string literal."""
    return tag if tag in token_tags else json.dumps(tag)


def _think_rules(protocol: Protocol, token_tags: Collection[str]) -> list[str]:
    """The think block: at most `think_max_tokens` tokens of text without `<`, then </think>.

    A lexeme cut at its `max_tokens` bound ends without its own closing text, so </think> is a
    rule of its own after the text, and at the bound the matcher forces it. The text cannot hold
    `<`, so every protocol tag (and the end of the think) starts outside it: the greedy lexeme ends
    where a `<` begins. A lazy text that stops at </think> (`stop=`) would allow `<` inside, but
    llguidance 1.9.1 panics on some token sequences through such a stop (a token holding the
    start of </think>, e.g. `></`) and the panic poisons state that every matcher of the
    compiled grammar shares, so later rows of a batch fail too
    (tests/single_agent/test_grammar.py keeps one such sequence).
    """
    return [f"think: {_tag(THINK_OPEN, token_tags)} think_text {_tag(THINK_CLOSE, token_tags)}",
            f"think_text[max_tokens={protocol.think_max_tokens}]: THINK_TEXT",
            "THINK_TEXT: /[^<]*/"]


def _call_rules(protocol: Protocol, ticker: str | None, token_tags: Collection[str]) -> list[str]:
    """The tool call: one alternative per offered tool, its name selecting its argument schema."""
    names = [f"call_{index}" for index in range(len(protocol.tools))]
    rules = [f'call: {_tag(CALL_OPEN, token_tags)} "\\n" ({" | ".join(names)}) "\\n" {_tag(CALL_CLOSE, token_tags)}']
    for rule, tool in zip(names, protocol.tools):
        head = json.dumps(f'{{"name": "{tool}", "arguments": ')
        rules.append(f'{rule}: {head} {rule}_arguments "}}"')
        rules.append(f"{rule}_arguments: %json {json.dumps(argument_schema(protocol, tool, ticker))}")
    return rules


def longest_json(schema: dict[str, Any]) -> int:
    """Bytes of the longest JSON text `schema` admits in the compact layout; ValueError if unbounded.

    A string of at most n characters takes at most 2 + 6n bytes (every character a `\\uXXXX` escape).
    """
    try:
        if "const" in schema or "enum" in schema:
            return max(len(json.dumps(value)) for value in schema.get("enum", [schema.get("const")]))
        kind = schema["type"]
        if kind == "integer":
            return max(len(str(int(schema["minimum"]))), len(str(int(schema["maximum"]))))
        if kind == "string":
            return len('"YYYY-MM-DD"') if schema.get("format") == "date" else 2 + 6 * schema["maxLength"]
        if kind == "array":
            count = schema["maxItems"]
            return 2 + count * longest_json(schema["items"]) + len(", ") * max(count - 1, 0)
        if kind == "object":
            fields = [len(json.dumps(name)) + len(": ") + longest_json(field)
                      for name, field in schema["properties"].items()]
            return 2 + sum(fields) + len(", ") * max(len(fields) - 1, 0)
    except KeyError as missing:
        raise ValueError(f"no length bound for {json.dumps(schema)}: it lacks {missing}") from None
    raise ValueError(f"no length bound for a {kind} schema")


def max_turn_tokens(protocol: Protocol, *, ticker: str | None = None, calls_allowed: bool = True) -> int:
    """An upper bound on the tokens of one grammar-valid turn, end-of-turn token included: the think
    bound plus the bytes of everything else (a token holds at least one byte). A `max_new_tokens`
    below it can cut a valid turn short, and a cut turn is invalid."""
    answers = [f"{ANSWER_OPEN}{action.value}{ANSWER_CLOSE}" for action in Action]
    calls = [f'{CALL_OPEN}\n{{"name": "{tool}", "arguments": }}\n{CALL_CLOSE}' for tool in protocol.tools]
    action = max([len(a.encode()) for a in answers]
                 + [len(c.encode()) + longest_json(argument_schema(protocol, tool, ticker))
                    for c, tool in zip(calls, protocol.tools) if calls_allowed])
    return len(f"{THINK_OPEN}{THINK_CLOSE}\n".encode()) + protocol.think_max_tokens + action + 1


def protocol_grammar(protocol: Protocol, *, ticker: str | None = None, token_tags: Collection[str] = (),
                     calls_allowed: bool = True, answer_allowed: bool = True) -> str:
    """The Lark grammar of one turn of `protocol`; `ticker` pins the ticker argument, `token_tags`
    are the tags written as special tokens, `calls_allowed=False` leaves only the answer (for the
    last turn, or when the call budget is spent) and `answer_allowed=False` only a call."""
    if not (calls_allowed or answer_allowed):
        raise ValueError("a turn must allow a call or an answer")
    actions = " | ".join(f'"{action.value}"' for action in Action)
    answer = f"answer: {_tag(ANSWER_OPEN, token_tags)} ({actions}) {_tag(ANSWER_CLOSE, token_tags)}"
    action = "(call | answer)" if calls_allowed and answer_allowed else "call" if calls_allowed else "answer"
    rules = [f'start: think "\\n" {action}', *_think_rules(protocol, token_tags), answer]
    if calls_allowed:
        rules += _call_rules(protocol, ticker, token_tags)
    return "\n".join(rules) + "\n"
