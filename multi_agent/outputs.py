"""The structured outputs of the deciding roles, and a tolerant parser for small models.

The research manager writes a `ResearchPlan`, the trader a `TraderProposal`, the portfolio
manager a `PortfolioDecision` (TradingAgents' three schemas). Their field descriptions are
the output instructions the roles are given (`output_instructions`). Under constrained
decoding a role's answer is held to `answer_schema`: the rating first, then every text field
as a string of at most `max_chars` characters. `parse_output` reads an answer in four tiers:
a JSON object that validates; else the rating a cut-off JSON answer opens with; else free
text with exactly one rating (a labelled one such as `Rating: Buy` first); else a failure
naming what was wrong.
"""

from __future__ import annotations

import json
import re
from enum import Enum
from typing import Any, ClassVar, NamedTuple

from pydantic import BaseModel, Field, ValidationError


class _Tier(str, Enum):
    """A rating scale whose values parse case- and markup-insensitively ("**BUY**" is Buy)."""

    @classmethod
    def _missing_(cls, value: object) -> "_Tier | None":
        if isinstance(value, str):
            wanted = value.strip(" *_`'\".").lower()
            return next((tier for tier in cls if tier.value.lower() == wanted), None)
        return None


class Rating(_Tier):
    """The five-tier rating of the research manager and the portfolio manager."""

    BUY = "Buy"
    OVERWEIGHT = "Overweight"
    HOLD = "Hold"
    UNDERWEIGHT = "Underweight"
    SELL = "Sell"


class TraderAction(_Tier):
    """The trader's transaction direction."""

    BUY = "Buy"
    HOLD = "Hold"
    SELL = "Sell"


class RatedOutput(BaseModel):
    """An output with one rating field (`tier_field`) and one main prose field (`text_field`)."""

    tier_field: ClassVar[str]
    text_field: ClassVar[str]

    @classmethod
    def tiers(cls) -> type[_Tier]:
        return cls.model_fields[cls.tier_field].annotation

    @classmethod
    def from_text(cls, tier: _Tier, text: str) -> "RatedOutput":
        """The output read from free text: its rating, and the whole text as its prose."""
        return cls.model_validate({cls.tier_field: tier, cls.text_field: text.strip()})


class ResearchPlan(RatedOutput):
    """The research manager's verdict on the bull/bear debate, handed to the trader."""

    tier_field: ClassVar[str] = "recommendation"
    text_field: ClassVar[str] = "rationale"

    recommendation: Rating = Field(description="Side with the stronger case; Hold only when the evidence is truly balanced.")
    rationale: str = Field("", description="The key points of both sides and which ones decided it.")
    strategic_actions: str = Field("", description="Concrete steps for the trader, with sizing that fits the rating.")


class TraderProposal(RatedOutput):
    """The trader's transaction proposal built on the plan."""

    tier_field: ClassVar[str] = "action"
    text_field: ClassVar[str] = "reasoning"

    action: TraderAction = Field(description="The transaction to make now.")
    reasoning: str = Field("", description="Two to four sentences grounded in the reports and the plan.")
    entry_price: float | None = Field(None, description="Optional entry price.")
    stop_loss: float | None = Field(None, description="Optional stop-loss price.")


class PortfolioDecision(RatedOutput):
    """The portfolio manager's final rating after the risk debate."""

    tier_field: ClassVar[str] = "rating"
    text_field: ClassVar[str] = "executive_summary"

    rating: Rating = Field(description="The final position rating.")
    executive_summary: str = Field("", description="The action plan: entry, sizing, risk levels, horizon.")
    investment_thesis: str = Field("", description="The reasoning, anchored in specific points of the debate.")


def output_instructions(schema: type[RatedOutput], constrained: bool = False) -> str:
    """How to answer: one JSON object, each key with its allowed values and meaning (when
    `constrained`, only the keys of `answer_schema`)."""
    lines = ["Answer with one JSON object and nothing else. Keys:"]
    for name, field in schema.model_fields.items():
        if constrained and name != schema.tier_field and name not in text_fields(schema):
            continue
        kind = ", ".join(t.value for t in schema.tiers()) if name == schema.tier_field else "text"
        if field.annotation == float | None:
            kind = "number or null"
        lines.append(f'- "{name}" ({kind}): {field.description}')
    return "\n".join(lines)


OUTPUTS: dict[str, type[RatedOutput]] = {"plan": ResearchPlan, "proposal": TraderProposal, "decision": PortfolioDecision}
"""Each structured output of the graph by its state key."""


def text_fields(schema: type[RatedOutput]) -> list[str]:
    """The schema's prose fields (plain strings), in declaration order."""
    return [name for name, field in schema.model_fields.items() if field.annotation is str]


def answer_schema(schema: type[RatedOutput], max_chars: int) -> dict[str, Any]:
    """The JSON schema a constrained answer is decoded under: `{tier: one of the tiers, text
    field: string of <= max_chars characters, ...}`, all required, nothing else (the optional
    numbers are left out), the tier first so that even a cut-off answer names it."""
    properties = {schema.tier_field: {"enum": [tier.value for tier in schema.tiers()]}}
    properties.update({name: {"type": "string", "maxLength": max_chars} for name in text_fields(schema)})
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def render_output(output: BaseModel) -> str:
    """An output as the lines the next roles read: `Field name: value` for every set field."""
    return "\n".join(f"{name.replace('_', ' ').capitalize()}: {getattr(value, 'value', value)}"
                     for name, value in output.model_dump().items() if value not in (None, ""))


class Parsed(NamedTuple):
    """What `parse_output` made of an answer: the output (None on failure), how it was read
    ("json", "cut", "text" or "failed"), and the reason when it failed."""

    output: RatedOutput | None
    how: str
    failure: str | None = None


def json_objects(text: str):
    """Every JSON object embedded in `text`, in order."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


def _labelled_or_only_tier(text: str, tiers: type[_Tier]) -> _Tier | None:
    """The rating after a label (`Rating: X`, `"action": "X"`, ...), else the one tier named in
    `text`; None when there is none or several disagree."""
    words = "|".join(t.value for t in tiers)
    label = r"(?:rating|recommendation|action|decision|proposal)\W{0,6}[:=\-]\W{0,6}"
    labelled = {tiers(m) for m in re.findall(label + rf"({words})\b", text, flags=re.IGNORECASE)}
    named = labelled or {tiers(m) for m in re.findall(rf"\b({words})\b", text, flags=re.IGNORECASE)}
    return named.pop() if len(named) == 1 else None


def _leading_tier(text: str, schema: type[RatedOutput]) -> _Tier | None:
    """The rating an answer opens with as `{"<tier field>": "<tier>"`: a constrained answer that
    the token budget cut before its closing brace."""
    words = "|".join(re.escape(t.value) for t in schema.tiers())
    match = re.match(rf'\s*\{{\s*"{schema.tier_field}"\s*:\s*"({words})"', text)
    return schema.tiers()(match.group(1)) if match else None


def parse_output(text: str, schema: type[RatedOutput]) -> Parsed:
    """Read `schema` from a model's answer: JSON first, then the rating a cut-off JSON answer
    opens with, then a rating in free text."""
    problems = []
    for candidate in json_objects(text):
        try:
            return Parsed(schema.model_validate(candidate), "json")
        except ValidationError as error:
            problems.append("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()))
    tier = _leading_tier(text, schema)
    if tier is not None:
        return Parsed(schema.from_text(tier, text), "cut")
    tier = _labelled_or_only_tier(text, schema.tiers())
    if tier is not None:
        return Parsed(schema.from_text(tier, text), "text")
    reason = problems[0] if problems else f"no JSON object and no single {schema.tier_field} in the answer"
    return Parsed(None, "failed", f"{reason}: {text.strip()[:120]!r}")
