"""The five answers of a FinAgent decision, their constrained-decoding schemas and their parser.

Each step answers one JSON object (FinAgent's XML outputs, as JSON). Under constrained decoding
an answer is held to `answer_schema(model, chars, items)`: every field required, in declaration
order, each text a string of 1 to `chars` characters (a query at most `QUERY_CHARS`), each choice one of its values, the item
list exactly as long as the day's news — so a constrained answer parses unless the token budget
cuts it (`answer_tokens` sizes the budget so that it cannot). `parse_answer` reads the first
JSON object of a reply and validates it; anything else is a failure naming the step and why.
"""

from __future__ import annotations

import json
import typing
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ValidationError

Horizon = Literal["short", "medium", "long"]
Sentiment = Literal["positive", "negative", "neutral"]
TradeAction = Literal["BUY", "SELL", "HOLD"]


class ItemInsight(BaseModel):
    """The model's reading of one news item (in the order the items were shown)."""

    insight: str
    horizon: Horizon
    sentiment: Sentiment


class LatestIntelligence(BaseModel):
    """Step 1: today's news read item by item, summarised, and one retrieval query per horizon."""

    items: list[ItemInsight]
    summary: str
    short_term_query: str
    medium_term_query: str
    long_term_query: str

    def queries(self) -> list[str]:
        return [self.short_term_query, self.medium_term_query, self.long_term_query]


class PastIntelligence(BaseModel):
    """Step 2: what the retrieved past intelligence, with how the price moved after it, suggests."""

    summary: str


class LowLevelReflection(BaseModel):
    """Step 3: why the price moved over the last 1, 7 and 14 bars, given the intelligence."""

    short_term_reasoning: str
    medium_term_reasoning: str
    long_term_reasoning: str
    query: str


class HighLevelReflection(BaseModel):
    """Step 4: which past decisions were right or wrong, and what to change."""

    reasoning: str
    improvement: str
    summary: str
    query: str


class TradeDecision(BaseModel):
    """Step 5: the decision, analysis first (FinAgent's order)."""

    analysis: str
    action: TradeAction
    reasoning: str


STEPS: dict[str, type[BaseModel]] = {
    "latest_intelligence": LatestIntelligence, "past_intelligence": PastIntelligence,
    "low_level_reflection": LowLevelReflection, "high_level_reflection": HighLevelReflection,
    "decision": TradeDecision,
}
"""Each step's answer by the step's name (also its prompt file's name)."""


QUERY_CHARS = 48
"""Longest retrieval query (fields named `*query`): a few keywords, not prose."""


def text_chars(name: str, chars: int) -> int:
    """Characters allowed in text field `name`: `chars`, or at most `QUERY_CHARS` for a query."""
    return min(chars, QUERY_CHARS) if name.endswith("query") else chars


def _field_schema(name: str, annotation: Any, chars: int, items: int) -> dict[str, Any]:
    if annotation is str:
        return {"type": "string", "minLength": 1, "maxLength": text_chars(name, chars)}
    if typing.get_origin(annotation) is Literal:
        return {"enum": list(typing.get_args(annotation))}
    if typing.get_origin(annotation) is list:
        (inner,) = typing.get_args(annotation)
        return {"type": "array", "items": answer_schema(inner, chars), "minItems": items, "maxItems": items}
    raise TypeError(f"no answer schema for a field of type {annotation!r}")


def answer_schema(model: type[BaseModel], chars: int, items: int = 0) -> dict[str, Any]:
    """The JSON schema of a constrained answer (module docstring); `items`: the length of its list field."""
    properties = {name: _field_schema(name, field.annotation, chars, items) for name, field in model.model_fields.items()}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def answer_tokens(model: type[BaseModel], chars: int, items: int = 0) -> int:
    """A token budget no answer under `answer_schema` can exceed: one token per character of text
    (the worst case) and 16 per field for its key, quotes and separators, plus 8."""
    total = 8
    for name, field in model.model_fields.items():
        if typing.get_origin(field.annotation) is list:
            (inner,) = typing.get_args(field.annotation)
            total += 16 + items * answer_tokens(inner, chars)
        else:
            total += 16 + (text_chars(name, chars) if field.annotation is str else 0)
    return total


class Parsed(NamedTuple):
    """An answer read as its model, or None and a one-line failure."""

    answer: BaseModel | None
    failure: str | None


def parse_answer(text: str, model: type[BaseModel], step: str, items: int | None = None) -> Parsed:
    """The first JSON object in `text` validated as `model` (with exactly `items` items when given)."""
    start = text.find("{")
    if start < 0:
        return Parsed(None, f"{step}: no JSON object in the answer {text[:80]!r}")
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
        answer = model.model_validate(value)
    except json.JSONDecodeError as error:
        return Parsed(None, f"{step}: the answer is not valid JSON ({error.msg} at character {error.pos})")
    except ValidationError as error:
        first = error.errors()[0]
        return Parsed(None, f"{step}: {'.'.join(map(str, first['loc'])) or 'answer'}: {first['msg']}")
    if items is not None and len(getattr(answer, "items", [])) != items:
        return Parsed(None, f"{step}: {len(answer.items)} item readings for {items} news items")
    return Parsed(answer, None)
